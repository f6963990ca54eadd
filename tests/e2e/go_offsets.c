// SPDX-License-Identifier: MIT
/*
 * names_go helper: the Go runtime offsets sfprof reads from a binary's
 * DWARF, the ones its table gives for the version in .go.buildinfo, and
 * whether they are the same (the table is checked against the DWARF of
 * the Go that Debian ships).
 *
 * usage: go_offsets BINARY   prints "version V dwarf OFFS table OFFS
 * same|differ|untabled"; exit 1 unless DWARF and table agree.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtimes/go/gooffsets.h"

static void put(const char *what, const struct sfprof_go_proc *p)
{
	printf(" %s stack_hi=%u m=%u sched=%u g0=%u curg=%u sp=%u pc=%u bp=%u status=%u "
	       "vdso_sp=%u vdso_pc=%u", what, p->g_stack_hi, p->g_m, p->g_sched, p->m_g0, p->m_curg,
	       p->gobuf_sp, p->gobuf_pc, p->gobuf_bp, p->g_status, p->m_vdso_sp, p->m_vdso_pc);
}

int main(int argc, char **argv)
{
	struct sfprof_go_proc dw, tab;
	char ver[64] = "";
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;
	int fd, rc_dw, rc_tab = -1;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0) {
		fprintf(stderr, "usage: go_offsets BINARY\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 2;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".go.buildinfo") && (d = elf_getdata(scn, NULL)) && d->d_buf)
			go_offsets__buildinfo_version(d->d_buf, d->d_size, ver, sizeof(ver));
	}
	rc_dw = go_offsets__from_elf(elf, &dw);
	if (ver[0])
		rc_tab = go_offsets__from_version(ver, &tab);
	printf("version %s", ver[0] ? ver : "?");
	if (!rc_dw)
		put("dwarf", &dw);
	if (!rc_tab)
		put("table", &tab);
	printf(" %s\n", rc_dw ? "no-dwarf" : rc_tab ? "untabled" :
			!memcmp(&dw, &tab, sizeof(dw)) ? "same" : "differ");
	elf_end(elf);
	close(fd);
	return !rc_dw && !rc_tab && !memcmp(&dw, &tab, sizeof(dw)) ? 0 : 1;
}
