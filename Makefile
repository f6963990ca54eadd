# SPDX-License-Identifier: MIT
# sfprof build. Everything lands in build/. `make V=1` shows full commands.
#
# Layout the rules below rely on (add files, not rules):
#   src/STAGE/*.c      -> build/libsfprof.a (all but src/cli/main.c), linked into build/sfprof
#                         stages, in a sample's order: capture/ (BPF ring, side-band),
#                         capfile/, model/ (address spaces, binaries), unwind/,
#                         symbols/, runtimes/*/ (JIT maps...), stacks/ (events ->
#                         stacks), profile/, output/ (folded/SVG/pprof/diff), cli/;
#                         which may call which: doc/layers.md
#   bpf/*.bpf.c        -> build/bpf/*.bpf.o -> build/*.skel.h (bpftool gen skeleton):
#                         one object per event source; capture.c shares their maps
#   tests/unit/test_*.c-> build/tests/test_*   (each prints PASS/FAIL lines)
#   tests/fuzz/fuzz_*.c-> build/fuzz/fuzz_*    (libFuzzer, clang) and build/tests/replay_*
#   tests/workloads/*.c-> build/workloads/<name>-sframe and <name>-ehframe
#   tests/workloads/*.cc-> the same, built with g++

.DELETE_ON_ERROR:
.SUFFIXES:
# Keep intermediates (BPF objects, skeletons, dir stamps) so rebuilds are incremental.
.SECONDARY:

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
SAN      ?=
ARCH     := x86

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN     := -Wall -Wextra -Werror -Wno-missing-field-initializers
CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SAN) -D_GNU_SOURCE -Iinclude -Isrc -I$(BUILD) -MMD -MP
LDLIBS   := -lbpf -ldw -lelf -lz -llzma -lbz2 -lstdc++ -lmicrohttpd -lpthread
# LINK=static (the default): sfprof links these statically, libc stays
# shared, so one binary drops onto any glibc machine (an agent, a
# container) whatever libbpf/elfutils it has; start-up is 0.6 ms shorter
# (BENCHMARKS.md, "static or dynamic"). LINK=dynamic: against the
# system's shared libraries, as a distribution packages it (security
# updates of libbpf, elfutils, zlib reach it). Sanitizer builds and the
# test programs always link shared.
LINK ?= static
SFPROF_LDLIBS = $(if $(or $(SAN),$(filter dynamic,$(LINK))),$(LDLIBS) -lm,-Wl,-Bstatic -lbpf \
	-ldw -lelf -lz -llzma -lbz2 -lstdc++ -Wl,-Bdynamic -lmicrohttpd -lm -lpthread -static-libgcc)

LIB_SRCS := $(filter-out src/cli/main.c,$(wildcard src/*.c src/*/*.c src/*/*/*.c))
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/obj/%.o)
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
SKELS    := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.skel.h)
UNIT_SRCS:= $(wildcard tests/unit/test_*.c)
UNIT_BINS:= $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRCS:= $(wildcard tests/fuzz/fuzz_*.c)
REPLAY_BINS := $(FUZZ_SRCS:tests/fuzz/fuzz_%.c=$(BUILD)/tests/replay_%)
FUZZ_BINS:= $(FUZZ_SRCS:tests/fuzz/fuzz_%.c=$(BUILD)/fuzz/fuzz_%)
WL_SRCS  := $(filter-out tests/workloads/lib%.c,$(wildcard tests/workloads/*.c))
WL_LIBS  := $(wildcard tests/workloads/lib*.c)
WL_CXX_SRCS := $(wildcard tests/workloads/*.cc)
WL_BINS  := $(foreach s,$(WL_SRCS) $(WL_CXX_SRCS),$(BUILD)/workloads/$(basename $(notdir $(s)))-sframe $(BUILD)/workloads/$(basename $(notdir $(s)))-ehframe)
WL_SOS   := $(foreach s,$(WL_LIBS),$(BUILD)/workloads/$(basename $(notdir $(s))).so $(BUILD)/workloads/$(basename $(notdir $(s)))-ehframe.so)

# Workloads: -fomit-frame-pointer so frame pointers cannot hide unwinder bugs.
# Always gcc: they need gas's --gsframe whatever CC builds sfprof with.
WL_CC ?= gcc
WL_CXX ?= g++
WL_CFLAGS := -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -pthread -D_GNU_SOURCE

.PHONY: all deps test-deps test test-quick check fuzz fuzz-smoke bench demo clean install workloads FORCE
all: $(BUILD)/sfprof workloads

workloads: $(WL_BINS) $(WL_SOS) $(BUILD)/workloads/demo-nopie

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c include/sfprof_event.h | $(BUILD)/bpf/.dir
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Iinclude -MMD -MP -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/obj/%.o: src/%.c | $(SKELS) $(BUILD)/obj/.dir
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) $(ALL_CFLAGS) -c $< -o $@

# --version: the build's `git describe`, "unknown" outside a git tree; the
# stamp changes (and options_table.o rebuilds) only when the describe does.
GIT_DESCRIBE := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(BUILD)/obj/cli/options_table.o: ALL_CFLAGS += -DSFPROF_GIT_DESCRIBE='"$(GIT_DESCRIBE)"'
$(BUILD)/obj/cli/options_table.o: $(BUILD)/git-describe
$(BUILD)/git-describe: FORCE | $(BUILD)/obj/.dir
	$(Q)echo '$(GIT_DESCRIBE)' | cmp -s - $@ || echo '$(GIT_DESCRIBE)' > $@
FORCE:

$(BUILD)/libsfprof.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/sfprof: $(BUILD)/obj/cli/main.o $(BUILD)/libsfprof.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(SFPROF_LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/testlib.h $(BUILD)/libsfprof.a | $(BUILD)/tests/.dir
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(BUILD)/libsfprof.a $(LDLIBS)

# Fuzz targets built as plain programs that replay files (tests/fuzz/replay.c).
$(BUILD)/tests/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/libsfprof.a | $(BUILD)/tests/.dir
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/libsfprof.a $(LDLIBS)

# libFuzzer builds: the library compiled once more with coverage and the
# sanitizers (fuzzer-no-link) into its own archive, each target linked
# against it with the fuzzer runtime. (Compiling every library source into
# every target cost a minute a target, 29 targets.)
FUZZ_CFLAGS := -std=gnu11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -Iinclude -Isrc -I$(BUILD) -Wall -Wextra -Werror -Wno-missing-field-initializers
FUZZ_FLAGS := $(FUZZ_CFLAGS) -fsanitize=fuzzer
FUZZ_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/fuzzobj/%.o)
$(BUILD)/fuzzobj/%.o: src/%.c | $(SKELS) $(BUILD)/fuzzobj/.dir
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(dir $@) && $(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(BUILD)/libsfprof-fuzz.a: $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/libsfprof-fuzz.a | $(SKELS) $(BUILD)/fuzz/.dir
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -MMD -MP -o $@ $< $(BUILD)/libsfprof-fuzz.a $(LDLIBS)

$(BUILD)/workloads/%-sframe: tests/workloads/%.c tests/workloads/workload.h | $(BUILD)/workloads/.dir
	$(call msg,WL,$@)
	$(Q)$(WL_CC) $(WL_CFLAGS) -Wa,--gsframe -o $@ $< -ldl -lm
$(BUILD)/workloads/%-ehframe: tests/workloads/%.c tests/workloads/workload.h | $(BUILD)/workloads/.dir
	$(call msg,WL,$@)
	$(Q)$(WL_CC) $(WL_CFLAGS) -o $@ $< -ldl -lm
$(BUILD)/workloads/%-sframe: tests/workloads/%.cc | $(BUILD)/workloads/.dir
	$(call msg,WL,$@)
	$(Q)$(WL_CXX) $(WL_CFLAGS) -Wa,--gsframe -o $@ $<
$(BUILD)/workloads/%-ehframe: tests/workloads/%.cc | $(BUILD)/workloads/.dir
	$(call msg,WL,$@)
	$(Q)$(WL_CXX) $(WL_CFLAGS) -o $@ $<
# A non-PIE build, for pprof's -symbolize=force on ET_EXEC mappings.
$(BUILD)/workloads/%-nopie: tests/workloads/%.c tests/workloads/workload.h | $(BUILD)/workloads/.dir
	$(call msg,WL,$@)
	$(Q)$(WL_CC) $(WL_CFLAGS) -fno-pie -no-pie -o $@ $< -ldl -lm
$(BUILD)/workloads/%-ehframe.so: tests/workloads/%.c | $(BUILD)/workloads/.dir
	$(call msg,WL,$@)
	$(Q)$(WL_CC) $(WL_CFLAGS) -shared -fPIC -o $@ $<
$(BUILD)/workloads/%.so: tests/workloads/%.c | $(BUILD)/workloads/.dir
	$(call msg,WL,$@)
	$(Q)$(WL_CC) $(WL_CFLAGS) -Wa,--gsframe -shared -fPIC -o $@ $<

%/.dir:
	$(Q)mkdir -p $(dir $@) && touch $@

# Install the Debian packages the build and the tests need (idempotent).
# what building and running need; test-deps adds what the tests need
# (a browser, Go, node, austin...): `make test` installs it first
deps:
	$(Q)./tests/install-deps.sh build

test-deps:
	$(Q)./tests/install-deps.sh test

# The suite's budget: `make test` <= 15 minutes on a 2-core machine (it
# prints its wall time), `.ci/run` (test, check, fuzz-smoke) <= 45. The e2e
# scripts run TEST_JOBS (2) at a time but for those that must run alone
# (tests/run-tests.sh says which and why). `make test-quick` is the inner
# loop: unit tests, fuzz replays and a few fast e2e scripts.
TEST_JOBS ?= 2
test: test-deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(REPLAY_BINS)
	$(Q)BUILD=$(BUILD) TEST_JOBS=$(TEST_JOBS) ./tests/run-tests.sh

test-quick: test-deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(REPLAY_BINS)
	$(Q)BUILD=$(BUILD) TEST_JOBS=$(TEST_JOBS) TEST_TIER=quick ./tests/run-tests.sh

# The whole suite again under ASan+UBSan, in its own build tree.
check:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan CC=$(CC) \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  CFLAGS="-O1 -g" test

fuzz: $(FUZZ_BINS)

# A short libFuzzer pass over every target, seeded by its corpus.
FUZZ_SECONDS ?= 20
fuzz-smoke: fuzz
	$(Q)for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; mkdir -p $(BUILD)/fuzz/corpus-$$n; \
	  echo "fuzz $$n: $(FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 $(BUILD)/fuzz/corpus-$$n tests/fuzz/corpus/$$n >$(BUILD)/fuzz/$$n.log 2>&1 \
	  || { tail -40 $(BUILD)/fuzz/$$n.log; exit 1; }; done

# The libraries a program linking $(BUILD)/libsfprof.a needs (bench/, e2e helpers).
print-ldlibs:
	@echo $(LDLIBS)

bench: all
	$(Q)./bench/run.sh

demo: all
	$(Q)./tests/demo.sh

PREFIX ?= /usr/local
# systemd looks for units of /usr/local in /usr/local/lib/systemd/system
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
install: $(BUILD)/sfprof
	install -D -m 0755 $(BUILD)/sfprof $(DESTDIR)$(PREFIX)/bin/sfprof
	if [ -f doc/sfprof.1 ]; then install -D -m 0644 doc/sfprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/sfprof.1; fi
	mkdir -p $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed 's|@BINDIR@|$(PREFIX)/bin|g' dist/sfprof-agent.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/sfprof-agent.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/sfprof-agent.service

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
