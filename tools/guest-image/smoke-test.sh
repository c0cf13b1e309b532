#!/bin/bash
# Boot the tiny guest under plain QEMU (TCG; user-mode network with
# restrict=on, so no route out) and check what the acceptance tests rely on:
# NoCloud hostname and instance-id, DHCP, the user-data script, the real
# qemu-ga (ping, host name, interfaces, exec, file read) and the ACPI power
# button. Ends with "N passed, N failed"; exits non-zero on any failure.
#
# Usage: smoke-test.sh [--direct-kernel] [IMAGE]
#   IMAGE defaults to the output of build.sh (built if needed).
#   --direct-kernel boots vmlinux + initrd.img from IMAGE's cache directory
#   (qemu -kernel), as a test can do with libvirt's <os><kernel>.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIRECT=0
if [ "${1:-}" = --direct-kernel ]; then DIRECT=1; shift; fi
IMG=${1:-$("$HERE/build.sh" | tail -n 1)}
[ -f "$IMG" ] || { echo "no image $IMG" >&2; exit 2; }
IMG=$(readlink -f "$IMG")

if ! command -v socat >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -q -y --no-install-recommends \
		-o DPkg::Lock::Timeout=600 socat >&2
fi

T=$(mktemp -d /tmp/tinyguest-smoke.XXXXXX)
QPID=
cleanup() {
	if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then kill "$QPID"; fi
	rm -rf "$T"
}
trap cleanup EXIT

PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   - $*"; }
nok() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { # check NAME CONDITION-COMMAND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else nok "$name"; fi
}

# --- seed and disk ---------------------------------------------------------------
mkdir -p "$T/seed"
cat > "$T/seed/meta-data" <<'EOF'
instance-id: iid-smoke-1
local-hostname: smoke-host.example.test
EOF
cat > "$T/seed/network-config" <<'EOF'
version: 2
ethernets:
  nic0:
    match:
      name: "eth*"
    dhcp4: true
EOF
cat > "$T/seed/user-data" <<'EOF'
#!/bin/sh
echo "user-data ran on $(hostname)"
EOF
genisoimage -quiet -V cidata -J -r -o "$T/seed.iso" "$T"/seed/*
qemu-img create -q -f qcow2 -F qcow2 -b "$IMG" "$T/disk.qcow2"

boot=()
if [ $DIRECT = 1 ]; then
	D=$(dirname "$IMG")
	boot=(-kernel "$D/vmlinux" -initrd "$D/initrd.img" -append "$(cat "$D/cmdline")")
fi

START=$(date +%s%N)
qemu-system-x86_64 -machine q35 -accel tcg -m 256 -display none -nodefaults \
	-serial "file:$T/console.log" \
	-drive "file=$T/disk.qcow2,if=virtio" \
	-drive "file=$T/seed.iso,media=cdrom,if=none,id=cd0" -device ide-cd,drive=cd0,bus=ide.0 \
	-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 \
	-chardev "socket,path=$T/qga.sock,server=on,wait=off,id=qga0" \
	-device virtio-serial -device virtserialport,chardev=qga0,name=org.qemu.guest_agent.0 \
	-monitor "unix:$T/mon.sock,server=on,wait=off" \
	"${boot[@]}" </dev/null >"$T/qemu.log" 2>&1 &
QPID=$!

# --- boot -------------------------------------------------------------------------
ready=
for _ in $(seq 1 300); do
	ready=$(grep -a -m1 'TINYGUEST READY' "$T/console.log" 2>/dev/null || true)
	[ -n "$ready" ] && break
	kill -0 $QPID 2>/dev/null || break
	sleep 0.3
done
BOOT_MS=$((($(date +%s%N) - START) / 1000000))
echo "# $ready"
echo "# boot to READY: $((BOOT_MS / 1000)).$((BOOT_MS % 1000 / 100))s"
check "guest printed READY" test -n "$ready"
check "hostname from meta-data" grep -q 'hostname=smoke-host ' <<<"$ready"
check "DHCP address" grep -q 'ip=10\.0\.2\.15' <<<"$ready"
if [ -z "$ready" ]; then
	echo "# console:"
	tail -n 30 "$T/console.log" | sed 's/^/#   /'
	echo "$PASS passed, $((FAIL + 1)) failed"
	exit 1
fi

# --- qemu-ga ----------------------------------------------------------------------
set +e # from here on every step is a check that counts its own failure
coproc QGA { socat - "UNIX-CONNECT:$T/qga.sock"; }
# plain copies of the coprocess' pipes (those stay usable in $(...) subshells)
exec {QIN}>&"${QGA[1]}" {QOUT}<&"${QGA[0]}"
qga() { # qga JSON -> the reply line
	local line
	printf '%s\n' "$1" >&$QIN
	read -r -t 20 line <&$QOUT || return 1
	printf '%s\n' "$line"
}
qga_exec() { # qga_exec PATH ARGS-JSON -> base64 stdout of the finished process
	local pid st
	pid=$(qga "{\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"$1\",\"arg\":$2,\"capture-output\":true}}" |
		sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
	[ -n "$pid" ] || return 1
	for _ in $(seq 1 50); do
		st=$(qga "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":$pid}}")
		if grep -q '"exited": *true' <<<"$st"; then
			sed -n 's/.*"out-data": *"\([^"]*\)".*/\1/p' <<<"$st" | base64 -d
			return 0
		fi
		sleep 0.2
	done
	return 1
}

check "guest-ping" grep -q '"return": *{}' <<<"$(qga '{"execute":"guest-ping"}')"
check "guest-get-host-name" grep -q '"host-name": *"smoke-host"' \
	<<<"$(qga '{"execute":"guest-get-host-name"}')"
check "guest-network-get-interfaces" grep -q '"ip-address": *"10.0.2.15"' \
	<<<"$(qga '{"execute":"guest-network-get-interfaces"}')"
check "guest-exec /bin/echo hi" test "$(qga_exec /bin/echo '["hi"]')" = hi
check "user-data script ran" test "$(qga_exec /bin/cat '["/run/user-data.log"]')" = "user-data ran on smoke-host"
check "instance-id" test "$(qga_exec /bin/cat '["/run/instance-id"]')" = iid-smoke-1
h=$(qga '{"execute":"guest-file-open","arguments":{"path":"/etc/hostname"}}' |
	sed -n 's/.*"return": *\([0-9]*\).*/\1/p')
r=$(qga "{\"execute\":\"guest-file-read\",\"arguments\":{\"handle\":${h:-0}}}")
qga "{\"execute\":\"guest-file-close\",\"arguments\":{\"handle\":${h:-0}}}" >/dev/null || true
check "guest-file-open/read" grep -q "\"buf-b64\": *\"$(printf 'smoke-host\n' | base64)\"" <<<"$r"
exec {QIN}>&- {QOUT}<&-
eval "exec ${QGA[1]}>&- ${QGA[0]}<&-"

# --- ACPI power button ----------------------------------------------------------------
printf 'system_powerdown\n' | socat -t 1 - "UNIX-CONNECT:$T/mon.sock" >/dev/null
START=$(date +%s%N)
for _ in $(seq 1 150); do
	kill -0 $QPID 2>/dev/null || break
	sleep 0.2
done
OFF_MS=$((($(date +%s%N) - START) / 1000000))
if kill -0 $QPID 2>/dev/null; then
	nok "ACPI power button powers off (still running after 30s)"
else
	QPID=
	ok "ACPI power button powers off ($((OFF_MS / 1000)).$((OFF_MS % 1000 / 100))s)"
fi

echo "$PASS passed, $FAIL failed"
[ $FAIL = 0 ]
