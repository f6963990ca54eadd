/* SPDX-License-Identifier: MIT */
/*
 * PHP support for one live run (live and record), as rbsession.h is for
 * Ruby: which processes run a PHP engine sfprof has offsets for (an
 * image named php* exporting executor_globals and execute_ex, whose
 * build id string says its ZEND_MODULE_API_NO and NTS), told to the BPF
 * walk (bpf/php.bpf.h) through the capture; the names of their frames
 * by (pid, zend_function, opline index) for the stacks merge, read in
 * the consumer's thread when the event is handled; in record each new
 * name also a PYFRAME record (code: the zend_function, instr: the opline
 * index), which report names PHP frames from.
 *
 * Ownership: borrows the capture and the writer. Single-threaded.
 */
#ifndef SFPROF_PHPSESSION_H
#define SFPROF_PHPSESSION_H

#include <stdint.h>
#include <stdio.h>

#include "pymerge.h"
#include "sfprof_event.h"

struct capture;
struct capfile_writer;
struct phpsession;

struct phpsession *phpsession__new(void); /* NULL + errno */
void phpsession__free(struct phpsession *ps); /* NULL is a no-op */
void phpsession__set_capture(struct phpsession *ps, struct capture *c);
void phpsession__set_writer(struct phpsession *ps, struct capfile_writer *w);
pyname_fn phpsession__namer(struct phpsession *ps, void **ctx);
void phpsession__attach(struct phpsession *ps, uint32_t pid);
void phpsession__event(struct phpsession *ps, const struct sfprof_event *e);
void phpsession__fork(struct phpsession *ps, uint32_t ppid, uint32_t pid);
void phpsession__exec(struct phpsession *ps, uint32_t pid);
void phpsession__exit(struct phpsession *ps, uint32_t pid, uint64_t ts);
size_t phpsession__reap(struct phpsession *ps, uint64_t before);
void phpsession__print_stats(const struct phpsession *ps, FILE *f);

/* An image's engine: its API number, NTS or not, and the vaddrs of
 * executor_globals and execute_ex. 0, or -ENOENT (no PHP engine). */
struct phpimage {
	uint32_t api;
	int zts;
	uint64_t executor_globals, execute_ex;
};
struct elfread;
int phpsession__image(const struct elfread *e, struct phpimage *out);

/* A FORK or EXIT record: __fork or __exit. Every call but __new and
 * __namer is a no-op on NULL (the run has no php support). */
void phpsession__task(struct phpsession *s, const struct sfprof_event *e);

#endif
