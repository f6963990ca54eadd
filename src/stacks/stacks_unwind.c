// SPDX-License-Identifier: MIT
/*
 * An event's user stack unwound (stacks.h): the per-process PC cache and
 * its rows (a binary's SFrame or CFI-derived row, a runtime's special
 * rows, callee-saved register rules), the unwinder's callbacks, and the
 * walk itself with its frame-top hint. stacks.c turns the frames into a
 * profile's stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"
#include "model/dso.h"
#include "model/elfread.h"
#include "runtimes/jit/jitmap.h"
#include "stacks/stacks.h"
#include "stacks/stacks_int.h"
#include "util.h"

/*
 * Between events (nothing points into the caches then): grow them 4x once
 * they have missed 4 times as often as they have entries. Keeps the old
 * ones when there is no memory.
 */
static void caches_fit(struct stacks *s)
{
	unsigned bits = s->cache_bits + 2;
	struct pc_entry *cache;
	struct row_entry *rows;
	struct unwind_cache_entry *memo;

	if (s->cache_misses <= (4ull << s->cache_bits) || s->cache_bits >= CACHE_BITS_MAX)
		return;
	s->cache_misses = 0;
	cache = calloc(1u << bits, sizeof(*cache));
	rows = aligned_alloc(64, (1u << bits) * sizeof(*rows));
	memo = calloc(1u << bits, sizeof(*memo));
	if (!cache || !rows || !memo) {
		free(cache);
		free(rows);
		free(memo);
		return;
	}
	memset(rows, 0, (1u << bits) * sizeof(*rows));
	free(s->cache);
	free(s->rows);
	free(s->ucache.e);
	s->cache = cache;
	s->rows = rows;
	s->ucache.e = memo;
	s->ucache.bits = bits;
	s->cache_bits = bits;
}

/* The slot of (current proc, pc) in the PC and row caches. */
static size_t cache_slot(const struct stacks *s, uint64_t pc)
{
	return ((pc ^ ((uintptr_t)s->cur >> 4)) * HASH_K) >> (64 - s->cache_bits);
}

struct pc_entry *stacks_cache_get(struct stacks *s, uint64_t pc)
{
	struct pc_entry *e = &s->cache[cache_slot(s, pc)];

	if (e->proc == s->cur && e->pc == pc && e->gen == s->cur_gen && e->have) {
		s->st.cache_hits++;
		return e;
	}
	s->st.cache_misses++;
	s->cache_misses++;
	e->proc = s->cur;
	e->pc = pc;
	e->gen = s->cur_gen;
	e->have = 0;
	return e;
}

/* find_row_cb()'s miss: look the row up and fill the entry. */
static __attribute__((noinline)) void row_fill(struct stacks *s,
					       struct row_entry *e, uint64_t pc)
{
	struct sframe_func f;
	int rc;

	s->st.cache_misses++;
	s->cache_misses++;
	f.flags = 0;
	e->rc = (int16_t)proc__find_row(s->cur, pc, &e->row, &f, NULL);
	/* a runtime's row (a CPython trampoline's, from its JIT map): kept
	 * nowhere */
	e->valid = 1;
	if (e->rc && (rc = stacks_runtime_row(s, pc, &e->row)) != -ESRCH) {
		e->valid = 0;
		f.flags = UNWIND_FUNC_NO_MEMO;
		if (!rc)
			e->rc = 0;
	}
	/* a miss may have re-read the maps: later lookups of this walk are
	 * answered from the new ones */
	if (proc__generation(s->cur) != s->cur_gen) {
		s->cur_gen = proc__generation(s->cur);
		s->ucache.tag = s->cur_gen;
	}
	e->pc = pc;
	e->proc = s->cur;
	e->gen = (uint32_t)s->cur_gen;
	e->func_flags = e->rc == 0 ? f.flags : 0;
}

/* unwind_ops.reg_rule: the frame's CFI rule for a callee-saved register
 * (the unwinder's slow path: a row's CFA from rbx, below the top frame). */
static int reg_rule_cb(void *ctx, uint64_t pc, unsigned reg, struct unwind_reg_rule *out)
{
	struct stacks *s = ctx;
	struct cfi_reg_rule r;
	/* each answer is an FDE's instructions run again: the last ones
	 * are kept, per (maps version, PC, register) */
	struct stacks_reg_memo *m = &s->reg_memo[((pc * 0x9e3779b97f4a7c15ull) >> 56 ^ reg) %
						 STACKS_REG_MEMO];

	if (!s->cur)
		return -ENOENT;
	if (m->pc == pc && m->reg == reg && m->proc == s->cur && m->gen == s->cur_gen) {
		*out = m->rule;
		return m->rc;
	}
	m->rc = 0;
	if (proc__reg_rule(s->cur, pc, reg, &r) || r.kind == CFI_REG_OTHER)
		m->rc = -ENOENT;
	m->rule.kind = r.kind == CFI_REG_AT_CFA ? UNWIND_REG_AT_CFA
		       : r.kind == CFI_REG_CFA_PLUS ? UNWIND_REG_CFA_PLUS : UNWIND_REG_SAME;
	m->rule.off = m->rc ? 0 : r.off;
	m->pc = pc;
	m->reg = reg;
	m->proc = s->cur;
	m->gen = proc__generation(s->cur); /* (the lookup may have re-read them) */
	*out = m->rule;
	return m->rc;
}

static int find_row_cb(void *ctx, uint64_t pc, struct sframe_row *row,
		       struct sframe_func *fn)
{
	struct stacks *s = ctx;
	struct row_entry *e = &s->rows[cache_slot(s, pc)];

	if (e->valid && e->pc == pc && e->proc == s->cur &&
	    e->gen == (uint32_t)s->cur_gen)
		s->st.cache_hits++;
	else
		row_fill(s, e, pc);
	/* the unwinder reads only the row and func->flags */
	*row = e->row;
	fn->flags = e->func_flags;
	return e->rc;
}

/* The PC cache's entry for pc, symbolized. */
struct pc_entry *stacks_symbolized(struct stacks *s, uint64_t pc)
{
	struct pc_entry *e = stacks_cache_get(s, pc);

	if (!(e->have & HAVE_SYM)) {
		e->sym_rc = proc__symbolize(s->cur, pc, &e->sym);
		e->have |= HAVE_SYM;
	}
	return e;
}

/*
 * The comm's bytes up to its first NUL in two words, the rest zeroed: the
 * usual root (stacks_copy_comm()'s string), hashed and compared without a copy.
 */
void comm_words(const char *comm, uint64_t w[2])
{
	_Static_assert(SFPROF_COMM_LEN == 16, "a comm is two words");
	memcpy(w, comm, 16);
	for (int i = 0; i < 2; i++) {
		/* the lowest flagged byte is the first zero byte */
		uint64_t z = (w[i] - 0x0101010101010101ull) & ~w[i] &
			     0x8080808080808080ull;

		if (z) {
			unsigned bytes = (unsigned)__builtin_ctzll(z) / 8;

			w[i] &= bytes ? ~0ull >> (64 - 8 * bytes) : 0;
			if (i == 0)
				w[1] = 0;
			break;
		}
	}
}

size_t unwind_event(struct stacks *s, const struct sfprof_event *e, int *stop)
{
	struct unwind_ops ops = { find_row_cb, stacks_is_sigtramp, s,
				  &s->ucache, stacks_is_exec, reg_rule_cb };
	unsigned slot = e->pid % 64;

	stacks_go_alt(s, e, &ops);

	caches_fit(s);

	/*
	 * exec gives the process a new comm and a new address space: re-read
	 * its maps at once (a started COMMAND is attached before its exec, so
	 * its first events come from sfprof's own image).
	 */
	if (s->comms[slot].pid != e->pid ||
	    memcmp(s->comms[slot].comm, e->comm, SFPROF_COMM_LEN) != 0) {
		if (s->comms[slot].pid == e->pid)
			proc_cache__note_exec(s->pc, e->pid);
		s->comms[slot].pid = e->pid;
		memcpy(s->comms[slot].comm, e->comm, SFPROF_COMM_LEN);
	}
	s->cur = proc_cache__get(s->pc, e->pid);
	if (!s->cur) {
		*stop = UNWIND_STOP_NO_MAPPING;
		return 0;
	}
	s->cur_gen = proc__generation(s->cur);
	s->ucache.tag = s->cur_gen;
	/*
	 * Sampled in the kernel with no user stack left (BPF's
	 * user_stack_gone): in exit_group after the address space was
	 * dropped, or in execve after the switch to the new one, where the
	 * registers are still the old image's (a PC in none of the new
	 * image's mappings). No user frame can be told: the kernel part
	 * only, as complete. (A stack that is there but could not be read,
	 * SFPROF_EVF_STACK_PARTIAL alone, stays [truncated]: it is counted
	 * lost, lost_stack_read.)
	 */
	if (e->flags & SFPROF_EVF_USER_GONE) {
		*stop = UNWIND_STOP_USER_GONE;
		s->st.unwind.stacks++;
		s->st.unwind.stop[UNWIND_STOP_USER_GONE]++;
		return 0;
	}
	if (e->flags & SFPROF_EVF_NO_USER_REGS) {
		*stop = UNWIND_STOP_NO_REGS;
		s->st.unwind.stacks++;
		s->st.unwind.stop[UNWIND_STOP_NO_REGS]++;
		return 0;
	}
	uint64_t outer = 0;
	size_t n = unwind_stack(&e->regs, e->stack, e->stack_len, &ops, s->frames,
				s->opts.max_depth, stop, &s->st.unwind,
				s->thread_top ? &outer : NULL);

	if (*stop == UNWIND_STOP_STACK_SWITCH)
		n = stacks_go_continue(s, e, &ops, n, stop);
	stacks_jit_tag(s, e, &ops, n, *stop); /* the JIT entries valid then */

	/* the snapshot went on past the entry frame's CFA (SP + 8) and the
	 * slack the capture keeps: the capture's top for this thread was the
	 * thread pointer, above its TLS */
	if (s->thread_top && outer && *stop == UNWIND_STOP_COMPLETE && e->tid != e->pid &&
	    outer > e->regs.sp && e->stack_len > outer - e->regs.sp + 16)
		s->thread_top(s->thread_top_ctx, e->tid, outer);
	return n;
}

struct proc *stacks__resolve_event(struct stacks *s, const struct sfprof_event *e)
{
	int stop;

	s->resolved_n = unwind_event(s, e, &stop);
	s->resolved_stop = stop;
	return s->cur;
}
