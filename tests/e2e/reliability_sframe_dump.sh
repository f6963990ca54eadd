#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sframe-dump refuses from a file's header and size before reading it
# (issue 23.14, 23.15): a 10 GB file (over the 4 GiB bound) and a 3 GB
# file that does not start with the ELF magic are refused at once (the
# former used to be read 4 GiB deep, 2 GB of RSS, before the refusal);
# --raw of an empty file is an error, not a silent exit 0. Sparse files:
# they cost no disk.
set -u
cd "$(dirname "$0")/../.."
SFPROF=${SFPROF:-${BUILD:-build}/sfprof}
[ -x "$SFPROF" ] || { echo "FAIL reliability_sframe_dump: $SFPROF not built"; exit 0; }
T=$(mktemp -d /tmp/sfprof-sfdump-XXXXXX)
trap 'rm -rf "$T"' EXIT

# refused NAME WHAT-IN-THE-LINE ARGS...: exit 1 within 2 s, one line
refused() {
	local name=$1 what=$2 start ms err rc
	shift 2
	start=$(date +%s%N)
	err=$(timeout 60 "$SFPROF" sframe-dump "$@" 2>&1 >/dev/null); rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	if [ $rc -ne 1 ]; then
		echo "FAIL reliability_sframe_dump_$name: expected exit 1, got $rc: $err"
	elif [ $ms -gt 2000 ]; then
		echo "FAIL reliability_sframe_dump_$name: took $ms ms, expected a refusal from the header"
	elif [[ "$err" != sfprof:*"$what"* ]]; then
		echo "FAIL reliability_sframe_dump_$name: expected a line saying '$what', got: $err"
	else
		echo "PASS reliability_sframe_dump_$name"
	fi
}
printf '\177ELF' >"$T/huge" && truncate -s 10G "$T/huge"
refused oversized "more than" "$T/huge"
truncate -s 3G "$T/notelf"
refused not_elf "not an ELF" "$T/notelf"
: >"$T/empty"
refused raw_empty "empty" --raw --base 0 "$T/empty"
