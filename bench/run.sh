#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every benchmark script in bench/ (bench/*.sh and bench/*.py, except
# this one). Each prints its figures and the command that produced them.
set -u
cd "$(dirname "$0")/.."
rc=0
for b in bench/*.sh bench/*.py; do
	[ -f "$b" ] || continue
	case "$b" in bench/run.sh|bench/lib*) continue;; esac
	echo "== $b"
	"$b" || { echo "benchmark $b failed" >&2; rc=1; }
done
exit $rc
