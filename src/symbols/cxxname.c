// SPDX-License-Identifier: MIT
/*
 * C++ names: Itanium ABI demangling (libstdc++'s __cxa_demangle) and the
 * short form perf script prints. See src/symbols/symbolize.h.
 */
#include "symbols/symbolize.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (Itanium C++ ABI, "Demangler API"). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

char *symbolize__demangle(const char *name)
{
	int status = 0;
	char *d;

	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* Whether "operator" starts a name at s[k] (an operator's name follows). */
static int operator_at(const char *s, size_t k)
{
	return !strncmp(s + k, "operator", 8) &&
	       (k == 0 || s[k - 1] == ':' || s[k - 1] == ' ') &&
	       !(s[k + 8] == '_' || (s[k + 8] >= 'a' && s[k + 8] <= 'z') ||
		 (s[k + 8] >= 'A' && s[k + 8] <= 'Z') ||
		 (s[k + 8] >= '0' && s[k + 8] <= '9'));
}

size_t symbolize__cxx_short(char *s)
{
	size_t n = strlen(s), i, k, start = 0, orig = n;
	int depth = 0;

	/* " [clone .isra.0]" (GCC's clones), any number of them */
	while (n && s[n - 1] == ']') {
		for (k = n - 1; k > 0 && s[k] != '['; k--)
			;
		if (k == 0 || s[k - 1] != ' ' || strncmp(s + k, "[clone ", 7))
			break;
		n = k - 1;
	}
	/* cv- and ref-qualifiers of a method */
	for (;;) {
		if (ends_with(s, n, " const"))
			n -= 6;
		else if (ends_with(s, n, " volatile"))
			n -= 9;
		else if (ends_with(s, n, " &&"))
			n -= 3;
		else if (ends_with(s, n, " &"))
			n -= 2;
		else
			break;
	}
	if (!n || s[n - 1] != ')')
		return orig; /* not a function: as it is */
	/* the parameter list: the parenthesis matching the last one */
	for (i = n; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			break;
	}
	if (depth || i == 0 || i == (size_t)-1)
		return orig;
	/* a return type (templates have one): up to the last space outside
	 * brackets, before an operator's name (operator new, operator<) */
	depth = 0;
	for (k = 0; k < i; k++) {
		char c = s[k];

		if (depth == 0 && operator_at(s, k))
			break;
		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth)
			depth--;
		else if (c == ' ' && depth == 0)
			start = k + 1;
	}
	if (start >= i)
		start = 0;
	memmove(s, s + start, i - start);
	s[i - start] = 0;
	return i - start;
}

