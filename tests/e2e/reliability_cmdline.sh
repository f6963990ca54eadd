#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What leaves the machine (issue 12): SVG and pprof, live or from a
# capture, name the command's argv[0] only, unless --keep-cmdline; they
# are created 0644 (no raw memory in them), captures 0600.
set -u
cd "$(dirname "$0")/../.."
SFPROF=${SFPROF:-${BUILD:-build}/sfprof}
WL=${BUILD:-build}/workloads/spin-sframe
[ -x "$SFPROF" ] || { echo "FAIL reliability_cmdline: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP reliability_cmdline: needs root (BPF)"
	exit 0
fi
T=$(mktemp -d /tmp/sfprof-cmdline-XXXXXX)
trap 'rm -rf "$T"' EXIT
umask 022
SECRET=--password=hunter2-$$

has_secret() { # file: 0 when the secret is in it (pprof gunzipped)
	case "$1" in
	*.pb.gz) gzip -dc "$1" | grep -aq -- "$SECRET" ;;
	*) grep -aq -- "$SECRET" "$1" ;;
	esac
}

check() { # name, want (absent|present), file, mode
	local name=$1 want=$2 f=$3 mode=$4 got
	if [ ! -s "$f" ]; then
		echo "FAIL reliability_cmdline_$name: $f not written"
		return
	fi
	if has_secret "$f"; then got=present; else got=absent; fi
	if [ "$got" != "$want" ]; then
		echo "FAIL reliability_cmdline_$name: argument $SECRET $got in $f, expected $want"
	elif [ "$(stat -c %a "$f")" != "$mode" ]; then
		echo "FAIL reliability_cmdline_$name: $f has mode $(stat -c %a "$f"), expected $mode"
	else
		echo "PASS reliability_cmdline_$name"
	fi
}

"$SFPROF" record -o "$T/a.cap" -F 199 -d 1 -- "$WL" 1 "$SECRET" >/dev/null 2>&1
check capture_keeps_it present "$T/a.cap" 600
for ext in svg pb.gz; do
	"$SFPROF" report -o "$T/r.$ext" "$T/a.cap" 2>/dev/null
	check "report_${ext%%.*}_drops_arguments" absent "$T/r.$ext" 644
	"$SFPROF" report --keep-cmdline -o "$T/k.$ext" "$T/a.cap" 2>/dev/null
	[ "$ext" = svg ] && check "report_svg_keep_cmdline" present "$T/k.$ext" 644
done
"$SFPROF" -o "$T/l.svg" -F 199 -d 0.5 -- "$WL" 1 "$SECRET" >/dev/null 2>&1
check live_svg_drops_arguments absent "$T/l.svg" 644
"$SFPROF" --keep-cmdline -o "$T/lk.svg" -F 199 -d 0.5 -- "$WL" 1 "$SECRET" >/dev/null 2>&1
check live_svg_keep_cmdline present "$T/lk.svg" 644
if grep -aq 'spin-sframe' "$T/r.svg"; then
	echo "PASS reliability_cmdline_report_svg_names_argv0"
else
	echo "FAIL reliability_cmdline_report_svg_names_argv0: no spin-sframe in the title"
fi
exit 0
