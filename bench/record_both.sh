# SPDX-License-Identifier: MIT
# Sourced by the report benches: record_both OUT SECS COMMAND... starts
# COMMAND, attaches perf (DWARF call graphs) and sfprof to it side by side
# for SECS s at $HZ with $STACK-byte stacks, and leaves OUT.data (perf)
# and OUT.sfp (sfprof, $SF); then stops COMMAND.
record_both() {
	local out=$1 secs=$2 wpid ppid
	shift 2
	"$@" >/dev/null &
	wpid=$!
	sleep 0.5
	perf record -q -m 4096 --call-graph dwarf,$STACK -F "$HZ" -p "$wpid" -o "$out.data" \
		-- sleep "$secs" 2>/dev/null &
	ppid=$!
	"$SF" record -F "$HZ" --stack-size $STACK -d "$secs" -p "$wpid" -o "$out.sfp" 2>/dev/null
	wait "$ppid"
	kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
}
