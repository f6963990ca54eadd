/* SPDX-License-Identifier: MIT */
/*
 * PHP in an interpreter session (interpsession.h), as rbsession.h is for
 * Ruby: which processes run a PHP engine sfprof has offsets for (an
 * image named php* exporting executor_globals and execute_ex, whose
 * build id string says its ZEND_MODULE_API_NO and NTS), told to the BPF
 * walk (bpf/php.bpf.h) through the capture; the names of their frames
 * by (pid, zend_function, opline index), read in the consumer's thread
 * when the event is handled (the session records them as PYFRAME
 * records: code the zend_function, instr the opline index).
 */
#ifndef SFPROF_PHPSESSION_H
#define SFPROF_PHPSESSION_H

#include <stdint.h>

#include "runtimes/interp/interpsession.h"

extern const struct interp_kind phpsession_kind;

/* An image's engine: its API number, NTS or not, and the vaddrs of
 * executor_globals and execute_ex. 0, or -ENOENT (no PHP engine). */
struct phpimage {
	uint32_t api;
	int zts;
	uint64_t executor_globals, execute_ex;
};
struct elfread;
int phpsession__image(const struct elfread *e, struct phpimage *out);

#endif
