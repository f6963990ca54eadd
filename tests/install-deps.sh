#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages that building and testing sfprof need,
# only when something is missing.
set -eu
pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev
      linux-perf binutils python3 liblzma-dev duktape-dev util-linux procps
      libclang-rt-14-dev libstdc++-12-dev libc6-dbg libbz2-dev libdeflate-dev"
# names test: JIT code named from node --perf-basic-prof's perf map
pkgs="$pkgs nodejs"
# surface tests: the SVG rendered by a real browser, pprof read by go tool pprof
pkgs="$pkgs chromium fonts-dejavu-core golang-go"
# and by upstream pprof, built offline from its Debian source package
pkgs="$pkgs golang-github-google-pprof-dev"
# python reader tests: Debian's python3.11 and its DWARF (pyoffsets, pycode)
pkgs="$pkgs python3.11 python3.11-dbg"
# the python benchmark compares with austin (bench/python_cost.py)
pkgs="$pkgs austin"
# names test: LuaJIT's traces, anonymous code no JIT map names
pkgs="$pkgs luajit"
# unwind test: libcrypto's CFAs by DWARF expressions (openssl speed)
pkgs="$pkgs openssl"
pkgs="$pkgs ${SFPROF_EXTRA_PKGS:-}"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "sfprof: missing packages:$missing; run 'sudo make deps'" >&2
		exit 1
	fi
	echo "installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
