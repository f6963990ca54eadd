/* SPDX-License-Identifier: MIT */
/*
 * Ruby frames into native stacks: a Ruby section (SFPROF_PYS_RUBY,
 * include/sfprof_event.h) is merged as a Python one is (pymerge.h), its
 * groups (split at VM_FRAME_FLAG_FINISH frames, one per C-level VM call)
 * put in place of the native frames that run the VM: rb_vm_exec (3.0+,
 * exported; 2.7's static vm_exec where a symbol table names it),
 * innermost group in the innermost such frame. The VM loop's own frame above
 * rb_vm_exec (vm_exec_core, unnamed in Debian's stripped libruby) stays
 * where it is, above the group's frames.
 */
#ifndef SFPROF_RBMERGE_H
#define SFPROF_RBMERGE_H

/* Whether a native symbol runs the VM for one C-level call. */
int rbmerge__is_eval(const char *name);

#endif
