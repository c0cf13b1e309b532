#!/usr/bin/env bash
# Refresh the libvirt twins of the adopt fixtures (issue #25).
#
# For every NNN-name.xml here (or only the files given as arguments): define it on
# the test host's libvirtd with --validate, write what libvirt prints back
# (dumpxml --inactive --security-info) to NNN-name.libvirt.xml, and undefine it
# again. No domain is ever started. Idempotent: a leftover adopt-NNN from an
# earlier, interrupted run is undefined first; on exit (also on failure or ^C)
# every domain this run defined is undefined. Exit status is non-zero when a
# fixture was refused (its twin is then left untouched) or an adopt-* domain is
# left on the host.
#
# Usage (from anywhere):
#   internal/domainxml/testdata/adopt/capture.sh [FIXTURE.xml ...]
# The test host must be up: tools/testhost.sh status || tools/testhost.sh up
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
eval "$("$root/tools/testhost.sh" env)"
netns=${KVMFORGE_NETNS:-kvmforge}
uri=${LIBVIRT_TEST_URI:-qemu:///system}

virsh() { ip netns exec "$netns" virsh -q -c "$uri" "$@"; }

undefine() {
	# --nvram / --tpm: remove whatever libvirt may have created for the domain.
	virsh undefine --nvram --tpm --snapshots-metadata --checkpoints-metadata "$1" >/dev/null 2>&1 ||
		virsh undefine "$1" >/dev/null 2>&1 || true
}

current=""
tmp=$(mktemp /tmp/adopt-capture.XXXXXX)
cleanup() {
	if [ -n "$current" ]; then
		undefine "$current"
	fi
	rm -f "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ $# -gt 0 ]; then
	files=("$@")
else
	files=()
	for f in "$here"/[0-9][0-9][0-9]-*.xml; do
		case "$f" in *.libvirt.xml) continue ;; esac
		files+=("$f")
	done
fi

fail=0
ok=0
for f in "${files[@]}"; do
	case "$f" in *.libvirt.xml)
		echo "skipping $(basename "$f"): a twin, not a fixture" >&2
		continue
		;;
	esac
	name=$(sed -n 's:.*<name>\(adopt-[0-9][0-9]*\)</name>.*:\1:p' "$f" | head -n1)
	if [ -z "$name" ]; then
		echo "REFUSED $(basename "$f"): no <name>adopt-NNN</name>" >&2
		fail=$((fail + 1))
		continue
	fi
	twin=${f%.xml}.libvirt.xml
	if virsh dominfo "$name" >/dev/null 2>&1; then
		undefine "$name"
	fi
	if ! out=$(virsh define --validate "$f" 2>&1); then
		echo "REFUSED $(basename "$f"): $out" >&2
		fail=$((fail + 1))
		continue
	fi
	current=$name
	if virsh dumpxml --inactive --security-info "$name" >"$tmp"; then
		cp "$tmp" "$twin"
		ok=$((ok + 1))
	else
		echo "DUMPXML FAILED $(basename "$f")" >&2
		fail=$((fail + 1))
	fi
	undefine "$name"
	current=""
done
echo "captured $ok, refused $fail"
left=$(virsh list --all --name | grep '^adopt-' || true)
if [ -n "$left" ]; then
	echo "left behind: $left" >&2
	fail=$((fail + 1))
fi
[ "$fail" -eq 0 ]
