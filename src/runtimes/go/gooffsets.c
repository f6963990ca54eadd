// SPDX-License-Identifier: MIT
/* The Go runtime's structure offsets from DWARF (src/runtimes/go/gooffsets.h). */
#include "runtimes/go/gooffsets.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* The members of one runtime structure type that are looked for. */
struct want {
	const char *type;
	const char *member[3];
	int64_t off[3];
};

enum { W_G, W_G2, W_M, W_M2, W_GOBUF, W_STACK, W_NR };

static void members(Dwarf_Die *type, struct want *w)
{
	Dwarf_Die m;

	if (dwarf_child(type, &m) != 0)
		return;
	do {
		Dwarf_Attribute a;
		Dwarf_Word off;
		const char *name;

		if (dwarf_tag(&m) != DW_TAG_member || !(name = dwarf_diename(&m)) ||
		    !dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &off))
			continue;
		for (int i = 0; i < 3; i++)
			if (w->member[i] && !strcmp(name, w->member[i]) && off < SFPROF_GO_OFF_MAX)
				w->off[i] = (int64_t)off;
	} while (dwarf_siblingof(&m, &m) == 0);
}

/* The structure types of the "runtime" unit into w[]; 1 when all found. */
static int scan(Dwarf *dw, struct want *w)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int found = 0;

	while (found < W_NR && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;
		const char *name;

		if (!dwarf_offdie(dw, off + hsize, &cu) || !(name = dwarf_diename(&cu)) ||
		    strcmp(name, "runtime") || dwarf_child(&cu, &d) != 0) {
			off = next;
			continue;
		}
		do {
			const char *tn;

			if (dwarf_tag(&d) != DW_TAG_structure_type || !(tn = dwarf_diename(&d)))
				continue;
			for (int i = 0; i < W_NR; i++)
				if (w[i].off[0] < 0 && !strcmp(tn, w[i].type)) {
					members(&d, &w[i]);
					found += w[i].off[0] >= 0;
				}
		} while (found < W_NR && dwarf_siblingof(&d, &d) == 0);
		off = next;
	}
	return found == W_NR;
}

static int fits(int64_t v, __u16 *out)
{
	if (v < 0 || v >= SFPROF_GO_OFF_MAX)
		return 0;
	*out = (__u16)v;
	return 1;
}

int go_offsets__from_elf(Elf *elf, struct sfprof_go_proc *out)
{
	struct want w[W_NR] = {
		[W_G] = { "runtime.g", { "stack", "m", "sched" }, { -1, -1, -1 } },
		[W_G2] = { "runtime.g", { "atomicstatus", NULL, NULL }, { -1, -1, -1 } },
		[W_M] = { "runtime.m", { "g0", "curg", "vdsoSP" }, { -1, -1, -1 } },
		[W_M2] = { "runtime.m", { "vdsoPC", NULL, NULL }, { -1, -1, -1 } },
		[W_GOBUF] = { "runtime.gobuf", { "sp", "pc", "bp" }, { -1, -1, -1 } },
		[W_STACK] = { "runtime.stack", { "lo", "hi", NULL }, { -1, -1, -1 } },
	};
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	int ok;

	memset(out, 0, sizeof(*out));
	if (!dw)
		return -ENOENT;
	/* (off[0] < 0 marks a type not met yet: none starts at offset < 0) */
	ok = scan(dw, w);
	dwarf_end(dw);
	if (!ok)
		return -ENOENT;
	for (int i = 0; i < W_NR; i++)
		for (int j = 0; j < 3; j++)
			if (w[i].member[j] && w[i].off[j] < 0)
				return -ENOENT;
	if (!fits(w[W_G].off[0] + w[W_STACK].off[1], &out->g_stack_hi) ||
	    !fits(w[W_G].off[1], &out->g_m) || !fits(w[W_G].off[2], &out->g_sched) ||
	    !fits(w[W_M].off[0], &out->m_g0) || !fits(w[W_M].off[1], &out->m_curg) ||
	    !fits(w[W_M].off[2], &out->m_vdso_sp) || !fits(w[W_M2].off[0], &out->m_vdso_pc) ||
	    !fits(w[W_GOBUF].off[0], &out->gobuf_sp) || !fits(w[W_GOBUF].off[1], &out->gobuf_pc) ||
	    !fits(w[W_GOBUF].off[2], &out->gobuf_bp) || !fits(w[W_G2].off[0], &out->g_status) ||
	    out->g_sched + out->gobuf_bp >= SFPROF_GO_OFF_MAX)
		return -EINVAL;
	/* words, as every Go version has them */
	if ((out->g_stack_hi | out->g_m | out->g_sched | out->m_g0 | out->m_curg | out->gobuf_sp |
	     out->gobuf_pc | out->gobuf_bp | out->m_vdso_sp | out->m_vdso_pc) & 7 ||
	    out->g_status & 3)
		return -EINVAL;
	return 0;
}

int go_offsets__from_file(const char *path, struct sfprof_go_proc *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? go_offsets__from_elf(elf, out) : -EINVAL;
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int go_offsets__buildinfo_version(const uint8_t *data, size_t len, char *buf, size_t size)
{
	static const char magic[] = "\xff Go buildinf:";
	uint64_t n = 0;
	size_t i = 32;

	/* header: magic (14), pointer size, flags (2: the strings inline) */
	if (len < 33 || !size || memcmp(data, magic, 14) || !(data[15] & 2))
		return -EINVAL;
	for (int shift = 0;; shift += 7) {
		if (i >= len || shift > 28)
			return -EINVAL;
		n |= (uint64_t)(data[i] & 0x7f) << shift;
		if (!(data[i++] & 0x80))
			break;
	}
	if (n > len - i || n >= size)
		return -EINVAL;
	memcpy(buf, data + i, n);
	buf[n] = 0;
	return 0;
}

/* Checked against the DWARF of Debian's golang-go builds (names_go). */
static const struct {
	const char *version; /* "go1.19": go1.19, go1.19.N */
	struct sfprof_go_proc off;
} go_table[] = {
	{ "go1.19", { .g_stack_hi = 8, .g_m = 48, .g_sched = 56, .m_g0 = 0, .m_curg = 192,
		      .gobuf_sp = 0, .gobuf_pc = 8, .gobuf_bp = 48, .g_status = 144,
		      .m_vdso_sp = 800, .m_vdso_pc = 808 } },
};

int go_offsets__from_version(const char *version, struct sfprof_go_proc *out)
{
	for (size_t i = 0; i < sizeof(go_table) / sizeof(go_table[0]); i++) {
		size_t n = strlen(go_table[i].version);

		if (!strncmp(version, go_table[i].version, n) &&
		    (!version[n] || version[n] == '.' || version[n] == ' ')) {
			*out = go_table[i].off;
			return 0;
		}
	}
	return -ENOENT;
}

int go_offsets__of_elf(Elf *elf, struct sfprof_go_proc *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	char ver[64];

	if (!go_offsets__from_elf(elf, out))
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".go.buildinfo") || sh.sh_type != SHT_PROGBITS)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf ||
		    go_offsets__buildinfo_version(d->d_buf, d->d_size, ver, sizeof(ver)))
			return -ENOENT;
		return go_offsets__from_version(ver, out);
	}
	return -ENOENT;
}
