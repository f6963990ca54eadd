/* SPDX-License-Identifier: MIT */
/*
 * CRuby in an interpreter session (interpsession.h): which processes run
 * CRuby (rbprocs.h, told to the BPF walk through the capture), the iseq
 * reader for them (rbreader.h), and the names of their frames, by (pid,
 * iseq, pc index), labelled with their class (from the method entry the
 * BPF walk found for the iseq's frame when it first saw it: the one of
 * its first sighting names it, so a module_function's iseq, run as Mod.f
 * and as Mod#f, is named as it ran first). The session records them as
 * PYFRAME records (code: the iseq, instr: the pc index).
 *
 * Each iseq a process runs for the first time comes through the rb_new
 * ring (bpf/ruby.bpf.h) to a thread of this kind, which reads its names
 * and line table at once and keeps them (a snapshot); a Ruby thread's
 * frames are also noted when it blocks. What is lost: a thread that
 * blocked before sfprof knew its process for Ruby (the first events
 * after its exec are handled a drain later) is seen only when its block
 * ends; if the process exits within milliseconds of that, its frames are
 * named PYMERGE_UNREADABLE_RUBY.
 */
#ifndef SFPROF_RBSESSION_H
#define SFPROF_RBSESSION_H

#include "runtimes/interp/interpsession.h"

extern const struct interp_kind rbsession_kind;

#endif
