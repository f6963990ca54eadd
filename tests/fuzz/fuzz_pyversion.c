// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: CPython detection (pyversion.h) over hostile ELF
 * images: whatever the bytes, the result is consistent (offsets exactly
 * when supported, a TLS offset inside its segment). Seeds
 * (tests/fuzz/corpus/pyversion/): small programs and a shared object with
 * the symbols CPython exports, built by
 *   printf '__thread int a[3]={1};static __thread void *_Py_tss_tstate;char _PyRuntime[64];\n
 *           const unsigned long Py_Version=0x030b02f0;void *f(void){return &_Py_tss_tstate;}\n
 *           int main(void){return a[0];}\n' > f.c
 *   gcc -Os -s -Wl,-z,noseparate-code -Wl,--export-dynamic f.c -o exe-stripped
 *   (exe-tls: without -s; lib-soname.so: -shared -fPIC -Wl,-soname,libpython3.12.so.1.0)
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/elfread.h"
#include "runtimes/python/pyoffsets.h"
#include "runtimes/python/pyversion.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfread *e = elfread__open_mem(data, size);
	struct pyversion_info v;
	char buf[64];
	int r;

	if (!e)
		return 0;
	r = pyversion_detect(e, "libpython3.11.so.1.0", &v);
	if ((r == 0) != (v.offsets != NULL))
		abort();
	if (r != 0 && r != -ENOENT && r != -EPROTONOSUPPORT)
		abort();
	if (v.flags & PYVERSION_F_TLS) {
		if (v.tss_tstate_tls >= v.tls_memsz || !v.tls_align ||
		    (v.tls_align & (v.tls_align - 1)))
			abort();
		if ((v.flags & PYVERSION_F_TLS_STATIC) && v.tls_tp_offset >= 0)
			abort();
	}
	if (r == 0 && (v.offsets->major != v.major || v.offsets->minor != v.minor))
		abort();
	pyversion_describe(&v, r, buf, sizeof(buf));
	elfread__free(e);
	return 0;
}
