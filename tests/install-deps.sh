#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages sfprof needs, only when something is missing.
#   tests/install-deps.sh          building and running (make deps)
#   tests/install-deps.sh test     that and what the tests need (make test-deps,
#                                  which make test runs first)
#   tests/install-deps.sh GROUP --list   print the group's packages, install nothing
# The one list, in two groups: add a package a build or sfprof itself needs
# to pkgs, one only tests or benchmarks need to test_pkgs.
set -eu
group=${1:-build}
case $group in
build | test) ;;
*) echo "usage: $0 [build|test]" >&2; exit 2 ;;
esac

# ---- build and run: make all (sfprof, its BPF skeletons, the workloads) ----
pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev
      binutils liblzma-dev libstdc++-12-dev libbz2-dev"
# sfprof agent: its HTTP server (GnuTLS for --tls-cert)
pkgs="$pkgs libmicrohttpd-dev"

# ---- tests and benchmarks only (make test-deps) ----
# e2e scripts, perf as the unwinding oracle, the processes they inspect
test_pkgs="python3 linux-perf util-linux procps strace"
# fuzz targets (libFuzzer), libc's DWARF for the symbolizer tests, the CFI oracle
test_pkgs="$test_pkgs libclang-rt-14-dev libc6-dbg duktape-dev"
# names test: JIT code named from node --perf-basic-prof's perf map
test_pkgs="$test_pkgs nodejs"
# surface tests: the SVG rendered by a real browser, pprof read by go tool pprof
test_pkgs="$test_pkgs chromium fonts-dejavu-core golang-go"
# and by upstream pprof, built offline from its Debian source package
test_pkgs="$test_pkgs golang-github-google-pprof-dev"
# python reader tests: Debian's python3.11 and its DWARF (pyoffsets, pycode)
test_pkgs="$test_pkgs python3.11 python3.11-dbg"
# the python benchmark compares with austin (bench/python_cost.py)
test_pkgs="$test_pkgs austin"
# sfprof agent tests: scraped by a real Prometheus, a TLS certificate made
# with openssl
test_pkgs="$test_pkgs prometheus openssl"
# ruby reader tests: Debian's ruby3.1 (test_rboffsets, tests/e2e/ruby_*)
test_pkgs="$test_pkgs ruby3.1"
# php reader tests: Debian's php8.2 CLI (test_phpoffsets, tests/e2e/php_*)
test_pkgs="$test_pkgs php8.2-cli"
# a PHP-FPM worker (tests/e2e/php_fpm.py)
test_pkgs="$test_pkgs php8.2-fpm"
# names test: LuaJIT's traces, anonymous code no JIT map names
test_pkgs="$test_pkgs luajit"
# HotSpot test: a plain JVM named from its vmstructs (tests/e2e/hotspot_*;
# javac and jcmd too)
test_pkgs="$test_pkgs openjdk-17-jdk-headless"
# unwind test: libcrypto's CFAs by DWARF expressions (openssl speed; also
# the agent's certificates)
test_pkgs="$test_pkgs openssl"

[ "$group" = test ] && pkgs="$pkgs $test_pkgs"
pkgs="$pkgs ${SFPROF_EXTRA_PKGS:-}"
if [ "${2:-}" = --list ]; then
	echo $pkgs
	exit 0
fi
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "sfprof: missing packages:$missing; run 'sudo make $([ "$group" = test ] && echo test-deps || echo deps)'" >&2
		exit 1
	fi
	echo "installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
