# SPDX-License-Identifier: MIT
# Sourced by the reliability_* tests: an unprivileged user of their own
# for hostile targets (created once, idempotent), and a way to run as it.
#
# hostile_user: HOSTILE_USER, created when missing (a system user), and
# AS_HOSTILE set; non-zero when it cannot be made (the caller SKIPs).
HOSTILE_USER=sfprof-hostile
hostile_user() {
	if ! id -u "$HOSTILE_USER" >/dev/null 2>&1; then
		useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$HOSTILE_USER" 2>/dev/null ||
			id -u "$HOSTILE_USER" >/dev/null 2>&1 || return 1
	fi
	AS_HOSTILE=(setpriv --reuid="$HOSTILE_USER" --regid="$(id -g "$HOSTILE_USER")" --clear-groups)
}

# "${AS_HOSTILE[@]}" CMD...: CMD as that user, no groups (an array, not a
# function, so that CMD & gives $! the target's own pid). Set by
# hostile_user.
AS_HOSTILE=()
