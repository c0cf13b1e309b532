#!/usr/bin/env bash
# tools/testhost.sh: bring up and tear down a real local libvirt host for acceptance tests.
#
#   tools/testhost.sh up                 install packages if missing, start virtlogd and libvirtd, ensure
#                                        pool + network "default" (idempotent; fast when already up)
#   tools/testhost.sh down               destroy domains/networks of that daemon, stop what `up` started
#   tools/testhost.sh status             show what runs; exit 0 when up, 3 when down
#   tools/testhost.sh env                print `export` lines for the Makefile/tests to eval
#   tools/testhost.sh restart-libvirtd   stop libvirtd by its pid file and start it again (fault tests)
#   tools/testhost.sh exec CMD...        run CMD inside the network namespace
#   tools/testhost.sh up-b | down-b      the second host "b" for migration tests (tools/testhost-b.sh);
#                                        `down` stops b too, `status` and `env` show b when it is up
#
# Environment: KVMFORGE_NETNS (default kvmforge), KVMFORGE_STATE (default /var/lib/kvmforge-testhost),
# KVMFORGE_START_TIMEOUT (seconds to wait for libvirtd, default 120),
# KVMFORGE_KVM=auto|hide|use (default auto): whether libvirtd may see /dev/kvm; auto uses it only
# when a probe shows that KVM really runs guests (see kvm_usable), else hides it.
#
# Why it looks like this (measured on Debian 12, root, no systemd, 2 cores; see
# /work/shared/notes/test-environment.md):
# - No systemd, so virtlogd and libvirtd are started by hand and tracked by pid files in the state dir.
#   We stop them by those pid files only, never by process name.
# - libvirtd runs inside its own network namespace, so bridges, dnsmasq and every guest packet stay
#   in there. Its TCP/TLS listeners are on the namespace's loopback, so tests that use them must run
#   inside the namespace too (`tools/testhost.sh exec go test ...`). The unix socket
#   /run/libvirt/libvirt-sock is on the shared filesystem and is reachable from everywhere.
# - /dev/kvm exists on this machine but does not work. If libvirtd can see it, libvirt re-probes QEMU
#   on every `define` (16 to 55 s each). So libvirtd runs in a private mount namespace whose /dev is a
#   copy without the kvm node. Then the host truthfully offers only type='qemu' (TCG), and
#   qemu.conf needs `namespaces = []` because libvirt's per-domain /dev namespace cannot move
#   /dev/pts there.
# - On a machine whose KVM works (a CI runner with nested virtualisation) hiding it only makes the
#   guests slower, so KVMFORGE_KVM=auto probes it (kvm_usable) and then starts libvirtd with the
#   real /dev. Here the probe fails (this kernel's kvm is kvm_pvm: no vmx/svm, ordinary guests
#   hang) and auto means hide, exactly as before the option existed.
set -euo pipefail

readonly NETNS=${KVMFORGE_NETNS:-kvmforge}
readonly STATE=${KVMFORGE_STATE:-/var/lib/kvmforge-testhost}
readonly START_TIMEOUT=${KVMFORGE_START_TIMEOUT:-120}
readonly KVM_OPTION=${KVMFORGE_KVM:-auto}
readonly URI=qemu:///system
readonly TCP_URI=qemu+tcp://127.0.0.1/system
readonly PKI=$STATE/pki
readonly CLIENT_PKI=$PKI/client
readonly SERVER_PKI=$PKI/server
readonly TLS_URI="qemu+tls://127.0.0.1/system?pkipath=$CLIENT_PKI"
readonly LIBVIRTD_PIDFILE=$STATE/libvirtd.pid
readonly VIRTLOGD_PIDFILE=$STATE/virtlogd.pid
readonly LIBVIRTD_CONF=$STATE/libvirtd.conf
readonly LIBVIRTD_LOG=$STATE/libvirtd.log
readonly LIBVIRTD_STDERR=$STATE/libvirtd.stderr
readonly VIRTLOGD_LOG=$STATE/virtlogd.stderr
readonly POOL_DIR=$STATE/pool
readonly DEV_COPY=$STATE/dev
readonly DEVTMPFS=$STATE/devtmpfs
readonly TAP_FARM_SIZE=32767
readonly SETUP_STAMP=$STATE/setup.stamp
readonly QEMU_CONF=/etc/libvirt/qemu.conf
readonly QEMU_CAPS_CACHE=/var/cache/libvirt/qemu/capabilities
readonly POOL=default
readonly NETWORK=default
readonly PROBE_DOMAIN=kvmforge-testhost-define-probe
# Bump these whenever the daemon's view of the host changes (namespaces, /dev, qemu.conf), so that
# the next cold start clears the QEMU capabilities cache once. One per KVM mode: switching between
# hiding and using /dev/kvm restarts libvirtd and clears the cache.
readonly SETUP_VERSION_HIDE="kvmforge-testhost v2: netns, private /dev without kvm with /dev/tapN links, namespaces=[]"
readonly SETUP_VERSION_USE="kvmforge-testhost v1: netns, /dev with a working kvm, namespaces=[]"
# `define` took 16 ms with the setup above and 16 to 55 s without it (libvirt re-probing QEMU).
# The first define after a cold start is slower (50 ms to 1 s measured, the latter with the 2 cores
# busy compiling), so the limit sits well between the two.
readonly DEFINE_LIMIT_MS=10000

# gnutls-bin is not needed: the certificates are made with openssl. procps gives pgrep.
# The acceptance tests also need: openssh-server (a real sshd for qemu+ssh), genisoimage
# (seed ISOs made outside the provider, isoinfo to read ours back), lvm2 (a real logical
# pool on a loop device), thin-provisioning-tools (thin logical volumes), tgt (a user-space
# iSCSI target for the iscsi-direct pool) and libvirt's storage drivers that Debian ships apart
# (iscsi-direct, rbd, gluster, zfs: libvirt refuses to define a pool whose driver is not loaded,
# so even the define-only tests of those types need them), bzip2 (a bzip2 image for the
# compressed-upload test: Go writes no bzip2), bindfs (host b's shared pool: tools/testhost-b.sh). On this kind of machine policy-rc.d keeps packages from starting
# their daemons; the tests start their own.
readonly PACKAGES=(libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-utils dnsmasq-base
  ovmf iproute2 openssl procps openssh-server genisoimage lvm2
  swtpm swtpm-tools qemu-system-arm qemu-efi-aarch64
  thin-provisioning-tools tgt libvirt-daemon-driver-storage-iscsi-direct
  libvirt-daemon-driver-storage-rbd libvirt-daemon-driver-storage-gluster
  libvirt-daemon-driver-storage-zfs bzip2 bindfs)

SELF=$(readlink -f "${BASH_SOURCE[0]}")
readonly SELF

log() { printf 'testhost: %s\n' "$*" >&2; }
die() {
  printf 'testhost: ERROR: %s\n' "$*" >&2
  exit 1
}

# virsh against our daemon, bounded so that a wedged libvirtd cannot hang the caller forever.
# LC_ALL=C: we parse pool-info/net-info output.
vsh() { LC_ALL=C timeout 120 virsh -q -c "$URI" "$@"; }

now_ms() { date +%s%3N; }

require_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (it starts libvirtd and creates a network namespace)"
}

# --- processes tracked by pid file ---------------------------------------------------------------

# proc_alive PID: the process exists and is not a zombie (pid 1 here may never reap daemons).
proc_alive() {
  local pid=$1 stat
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# pid_from_file FILE COMM: print the pid in FILE if that process is alive and its name is COMM.
# The name check guards against a recycled pid; we still find processes only through pid files.
pid_from_file() {
  local file=$1 comm=$2 pid
  [[ -r $file ]] || return 1
  # libvirt's daemons write the pid without a trailing newline, so do not rely on read's status.
  pid=$(head -c 32 "$file" 2>/dev/null) || return 1
  pid=${pid//[[:space:]]/}
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  proc_alive "$pid" || return 1
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]] || return 1
  printf '%s\n' "$pid"
}

# wait_gone PID SECONDS: wait until PID has exited; return 1 on timeout.
wait_gone() {
  local pid=$1 deadline=$((SECONDS + $2))
  while proc_alive "$pid"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# stop_pid NAME PID: SIGTERM, wait, then SIGKILL.
stop_pid() {
  local name=$1 pid=$2
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" 30; then
    log "$name (pid $pid) ignored SIGTERM for 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 10 || die "$name (pid $pid) does not exit even after SIGKILL"
  fi
}

# stop_by_pidfile NAME FILE COMM
stop_by_pidfile() {
  local name=$1 file=$2 comm=$3 pid
  if pid=$(pid_from_file "$file" "$comm"); then
    stop_pid "$name" "$pid"
  fi
  rm -f "$file"
}

# --- network namespace ---------------------------------------------------------------------------

netns_exists() { [[ -e /run/netns/$NETNS ]] && ip netns exec "$NETNS" true 2>/dev/null; }

# in_netns PID: the process lives in our network namespace.
in_netns() {
  local ids
  ids=$(ip netns identify "$1" 2>/dev/null) || return 1
  [[ " ${ids//$'\n'/ } " == *" $NETNS "* ]]
}

ensure_netns() {
  if ! netns_exists; then
    log "creating network namespace $NETNS"
    ip netns add "$NETNS" || die "ip netns add $NETNS failed (needs root and CAP_SYS_ADMIN)"
  fi
  # lo must be up: the TCP/TLS listeners and the tests talk over the namespace's 127.0.0.1.
  ip netns exec "$NETNS" ip link set lo up
}

# --- packages ------------------------------------------------------------------------------------

missing_packages() {
  local out p
  # One dpkg-query for all packages (fast warm path); unknown packages print nothing and make
  # dpkg-query fail, hence the || true.
  # shellcheck disable=SC2016 # ${Package}/${Status} are dpkg-query fields, not shell expansions
  out=$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)
  for p in "${PACKAGES[@]}"; do
    grep -qxF "$p install ok installed" <<<"$out" || printf '%s\n' "$p"
  done
}

# dpkg takes fcntl locks; /proc/locks lists them by inode, which tells us without extra tools
# (fuser/lsof are not installed) whether someone holds the dpkg lock.
dpkg_locked() {
  local f ino
  for f in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock; do
    ino=$(stat -c %i "$f" 2>/dev/null) || continue
    awk -v ino="$ino" '{ n = split($6, a, ":"); if (a[n] == ino) found = 1 } END { exit !found }' \
      /proc/locks && return 0
  done
  return 1
}

package_manager_busy() {
  local name
  # One name per pgrep: pgrep refuses patterns longer than 15 characters (the comm length).
  for name in apt-get apt aptitude dpkg unattended-upgr; do
    pgrep -x "$name" >/dev/null && return 0
  done
  dpkg_locked
}

# Another process (e.g. a provisioning step logging to /tmp/apt.log) may be installing these very
# packages right now; wait for it instead of failing on the dpkg lock.
wait_for_package_manager() {
  local waited=0
  while package_manager_busy; do
    if ((waited % 30 == 0)); then
      log "apt/dpkg is busy (another install is running; see /tmp/apt.log if it exists); waiting..."
    fi
    ((waited < 1800)) || die "apt/dpkg still busy after 30 min; finish or stop that install, then rerun"
    sleep 2
    waited=$((waited + 2))
  done
}

ensure_packages() {
  local missing
  # Cheap check first: on a warm host this is all we do.
  missing=$(missing_packages)
  [[ -n $missing ]] || return 0
  wait_for_package_manager
  missing=$(missing_packages) # the other install may have brought them in
  [[ -n $missing ]] || return 0
  # shellcheck disable=SC2086 # one package per word
  log "installing missing packages: "$missing
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update >&2 ||
    die "apt-get update failed; check access to the Debian mirrors"
  # shellcheck disable=SC2086 # one package per word
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends $missing >&2 ||
    die "apt-get install failed for: $missing"
  missing=$(missing_packages)
  [[ -z $missing ]] || die "packages still not installed after apt-get: $missing"
}

# --- qemu.conf and the capabilities cache --------------------------------------------------------

# Prints "changed" when it edited qemu.conf.
ensure_qemu_conf() {
  [[ -f $QEMU_CONF ]] || die "$QEMU_CONF is missing; is libvirt-daemon-system installed?"
  local active changed=
  active=$(grep -Ec '^[[:space:]]*namespaces[[:space:]]*=' "$QEMU_CONF" || true)
  if [[ $active != 1 ]] ||
    ! grep -Eq '^[[:space:]]*namespaces[[:space:]]*=[[:space:]]*\[[[:space:]]*\][[:space:]]*$' "$QEMU_CONF"; then
    log "setting namespaces = [] in $QEMU_CONF (original kept as $QEMU_CONF.kvmforge-orig)"
    [[ -e $QEMU_CONF.kvmforge-orig ]] || cp -a "$QEMU_CONF" "$QEMU_CONF.kvmforge-orig"
    sed -i -E 's/^([[:space:]]*namespaces[[:space:]]*=.*)$/# \1  # disabled by kvmforge tools\/testhost.sh/' \
      "$QEMU_CONF"
    cat >>"$QEMU_CONF" <<'EOF'

# Added by kvmforge tools/testhost.sh: libvirtd runs in a private mount namespace whose /dev has no
# kvm node; libvirt's per-domain /dev namespace cannot move /dev/pts there.
namespaces = []
EOF
    changed=1
  fi
  # Host b (tools/testhost-b.sh) migrates to this host over the veth address: without
  # migration_host this daemon would advertise its hostname, which b resolves to itself. Only
  # read when this host is a migration's destination, so harmless when b is not up.
  if [[ $(grep -Ec '^[[:space:]]*migration_host[[:space:]]*=' "$QEMU_CONF" || true) != 1 ]] ||
    ! grep -Eq "^[[:space:]]*migration_host[[:space:]]*=[[:space:]]*\"$ADDR_A\"[[:space:]]*\$" "$QEMU_CONF"; then
    log "setting migration_host = \"$ADDR_A\" in $QEMU_CONF (host b migrates to this address)"
    [[ -e $QEMU_CONF.kvmforge-orig ]] || cp -a "$QEMU_CONF" "$QEMU_CONF.kvmforge-orig"
    sed -i -E 's/^([[:space:]]*migration_host[[:space:]]*=.*)$/# \1  # replaced by kvmforge tools\/testhost.sh/' \
      "$QEMU_CONF"
    cat >>"$QEMU_CONF" <<EOF

# Added by kvmforge tools/testhost.sh: where host b's qemu connects for migrations to this host.
migration_host = "$ADDR_A"
EOF
    changed=1
  fi
  [[ -z $changed ]] || echo changed
}

clear_caps_cache() {
  if [[ -d $QEMU_CAPS_CACHE ]]; then
    log "clearing QEMU capabilities cache $QEMU_CAPS_CACHE"
    find "$QEMU_CAPS_CACHE" -mindepth 1 -maxdepth 1 -type f -name '*.xml' -delete
  fi
}

# --- swtpm's local CA ----------------------------------------------------------------------------

# libvirt runs swtpm_setup as qemu.conf's swtpm_user (Debian: tss), and swtpm_setup signs the
# TPM's endorsement key with the local CA in /var/lib/swtpm-localca, taking its lock file
# there. On a machine where swtpm_setup once ran as root, that lock (and the CA's files)
# belong to root and every emulated TPM fails to start: "Need read/write rights on
# /var/lib/swtpm-localca/.lock.swtpm-localca for user tss" (seen on a fresh CI run). The
# test host owns that state for the user libvirt runs swtpm as.
ensure_swtpm_localca() {
  local dir=/var/lib/swtpm-localca user
  user=$(sed -nE 's/^[[:space:]]*swtpm_user[[:space:]]*=[[:space:]]*"([^"]+)".*/\1/p' "$QEMU_CONF" | tail -n 1)
  user=${user:-tss}
  id "$user" >/dev/null 2>&1 || die "swtpm user $user (qemu.conf swtpm_user) does not exist; is swtpm-tools installed?"
  mkdir -p "$dir"
  if [[ -n $(find "$dir" ! -user "$user" -print -quit) ]]; then
    log "giving $dir to $user (swtpm_setup runs as that user; some files there were someone else's)"
    chown -R "$user" "$dir"
  fi
  chmod 0750 "$dir"
}

# --- PKI for the TLS listener --------------------------------------------------------------------

# Generated once. Layout: $PKI/client is what `?pkipath=` wants (cacert.pem, clientcert.pem,
# clientkey.pem); $PKI/server is what libvirtd.conf's ca_file/cert_file/key_file point at;
# $PKI/ca holds the CA key.
ensure_pki() {
  if [[ -s $CLIENT_PKI/cacert.pem && -s $CLIENT_PKI/clientcert.pem && -s $CLIENT_PKI/clientkey.pem &&
    -s $SERVER_PKI/cacert.pem && -s $SERVER_PKI/servercert.pem && -s $SERVER_PKI/serverkey.pem ]]; then
    return 0
  fi
  log "generating test CA, server and client certificates in $PKI"
  local tmp=$PKI.tmp
  rm -rf "$tmp"
  mkdir -p "$tmp/ca" "$tmp/server" "$tmp/client"
  # set -e does not apply inside a subshell whose status is tested, hence the explicit || exit.
  (
    umask 077
    cd "$tmp" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
      -keyout ca/cakey.pem -out ca/cacert.pem -subj "/O=kvmforge/CN=kvmforge test CA" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null || exit 1
    # libvirt checks key usage and purpose on both sides, and the client checks that the server
    # certificate names the host of the URI (127.0.0.1; localhost for good measure).
    cat >server.ext <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
EOF
    cat >client.ext <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
EOF
    local who cn
    for who in server client; do
      cn=127.0.0.1
      [[ $who == server ]] || cn=kvmforge-test-client
      openssl req -new -newkey rsa:2048 -nodes -sha256 -keyout "$who/${who}key.pem" \
        -out "$who.csr" -subj "/O=kvmforge/CN=$cn" 2>/dev/null || exit 1
      openssl x509 -req -sha256 -days 3650 -in "$who.csr" -CA ca/cacert.pem -CAkey ca/cakey.pem \
        -set_serial "0x$(openssl rand -hex 8)" -extfile "$who.ext" \
        -out "$who/${who}cert.pem" 2>/dev/null || exit 1
      openssl verify -CAfile ca/cacert.pem "$who/${who}cert.pem" >/dev/null || exit 1
      cp ca/cacert.pem "$who/cacert.pem" || exit 1
    done
    rm -f ./*.csr ./*.ext
    chmod 0644 ./*/cacert.pem ./*/*cert.pem
  ) || die "generating certificates with openssl failed in $tmp"
  rm -rf "$PKI"
  mv "$tmp" "$PKI"
}

write_libvirtd_conf() {
  local want
  # Our own config (libvirtd -f): the unix socket stays at its default /run/libvirt/libvirt-sock
  # with the default unix auth; TCP and TLS listen on the namespace's loopback only.
  want=$(
    cat <<EOF
# Written by kvmforge tools/testhost.sh; regenerated on every "up".
listen_tls = 1
listen_tcp = 1
listen_addr = "127.0.0.1"
tcp_port = "16509"
tls_port = "16514"
auth_tcp = "none"
auth_tls = "none"
ca_file = "$SERVER_PKI/cacert.pem"
cert_file = "$SERVER_PKI/servercert.pem"
key_file = "$SERVER_PKI/serverkey.pem"
log_outputs = "3:file:$LIBVIRTD_LOG"
EOF
  )
  if [[ ! -f $LIBVIRTD_CONF || $(cat "$LIBVIRTD_CONF") != "$want" ]]; then
    printf '%s\n' "$want" >"$LIBVIRTD_CONF"
    echo changed
  fi
}

# --- KVM -----------------------------------------------------------------------------------------

# kvm_usable: print why and succeed when KVM can run ordinary guests here; print why not and fail
# otherwise. Cheap: a flag check, then one QEMU run of a few hundred ms.
# - KVM for ordinary (unmodified) x86 guests needs VT-x or AMD-V: the vmx or svm CPU flag. This
#   machine's /dev/kvm is kvm_pvm (no vmx/svm), on which QEMU even starts and runs real-mode code,
#   but a real guest kernel hangs. That is why opening /dev/kvm, `-machine none,accel=kvm` or
#   query-kvm are not enough as a probe: all of them succeed here.
# - Then QEMU must run guest code under KVM: a 64 KiB "BIOS" whose reset vector writes to
#   isa-debug-exit (QEMU then exits with status (0x10 << 1) | 1 = 33). Anything else (failed to
#   initialize kvm, a hang cut by the timeout) means unusable.
kvm_usable() {
  if [[ ! -c /dev/kvm ]]; then
    echo "no /dev/kvm"
    return 1
  fi
  if ! grep -qwE 'vmx|svm' /proc/cpuinfo; then
    echo "the CPU offers no vmx/svm (hardware virtualisation); /dev/kvm is $(kvm_flavour)"
    return 1
  fi
  command -v qemu-system-x86_64 >/dev/null || {
    echo "qemu-system-x86_64 is not installed"
    return 1
  }
  local bios rc=0
  bios=$(mktemp)
  { head -c 65520 /dev/zero; printf '\xb0\x10\xe6\xf4\xf4'; head -c 11 /dev/zero; } >"$bios"
  timeout 10 qemu-system-x86_64 -machine pc,accel=kvm -nodefaults -no-user-config -display none \
    -m 16 -bios "$bios" -device isa-debug-exit,iobase=0xf4,iosize=0x04 >/dev/null 2>&1 || rc=$?
  rm -f "$bios"
  if ((rc != 33)); then
    echo "a test guest under qemu -accel kvm did not run (exit $rc; 124 is a timeout)"
    return 1
  fi
  echo "vmx/svm present and a test guest ran under qemu -accel kvm"
}

# kvm_flavour: the loaded kvm vendor modules, for messages.
kvm_flavour() {
  local m found=()
  for m in kvm_intel kvm_amd kvm_pvm; do
    [[ -d /sys/module/$m ]] && found+=("$m")
  done
  if ((${#found[@]})); then echo "${found[*]}"; else echo "of unknown kind"; fi
}

# kvm_mode: resolve KVMFORGE_KVM to hide or use (logging the reason when auto).
kvm_mode() {
  local why
  case $KVM_OPTION in
  hide | use) echo "$KVM_OPTION" ;;
  auto)
    if why=$(kvm_usable); then
      log "KVMFORGE_KVM=auto: using /dev/kvm ($why)"
      echo use
    else
      log "KVMFORGE_KVM=auto: hiding /dev/kvm ($why)"
      echo hide
    fi
    ;;
  *) die "KVMFORGE_KVM must be auto, hide or use (got '$KVM_OPTION')" ;;
  esac
}

setup_version() { if [[ $1 == use ]]; then echo "$SETUP_VERSION_USE"; else echo "$SETUP_VERSION_HIDE"; fi; }

# stamp_mode: the mode the running libvirtd was started with (from the setup stamp); hide when
# unknown, which is how every libvirtd was started before KVMFORGE_KVM existed.
stamp_mode() {
  if [[ $(cat "$SETUP_STAMP" 2>/dev/null) == "$SETUP_VERSION_USE" ]]; then echo use; else echo hide; fi
}

# --- daemons -------------------------------------------------------------------------------------

# close_inherited_fds: close every descriptor above stderr in this shell. Daemons started
# from here must not inherit what their caller held open: a caller running us under
# `flock LOCKFILE tools/testhost.sh restart-libvirtd` would otherwise leave libvirtd holding
# that lock for as long as it runs (flock locks belong to the open file, which the daemon
# then shares), and everything else waiting on the lock hangs.
close_inherited_fds() {
  local fd # (255 is where bash reads this script from)
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    ((fd > 2 && fd != 255)) && eval "exec $fd>&-" 2>/dev/null
  done
  return 0
}

ensure_virtlogd() {
  pid_from_file "$VIRTLOGD_PIDFILE" virtlogd >/dev/null && return 0
  log "starting virtlogd"
  # In a subshell without inherited descriptors (our lock on the state dir, callers' locks).
  (close_inherited_fds && exec virtlogd -d -p "$VIRTLOGD_PIDFILE") >>"$VIRTLOGD_LOG" 2>&1 ||
    die "virtlogd failed to start; see $VIRTLOGD_LOG"
  local _
  for _ in $(seq 50); do
    pid_from_file "$VIRTLOGD_PIDFILE" virtlogd >/dev/null && [[ -S /run/libvirt/virtlogd-sock ]] && return 0
    sleep 0.1
  done
  die "virtlogd did not come up (pid file $VIRTLOGD_PIDFILE, socket /run/libvirt/virtlogd-sock); see $VIRTLOGD_LOG"
}

# Runs as `testhost.sh __libvirtd-inner` inside the network namespace and a fresh private mount
# namespace (see start_libvirtd): replace /dev by a copy without kvm (unless KVMFORGE_KVM=use,
# already resolved by start_libvirtd), then become libvirtd.
libvirtd_inner() {
  close_inherited_fds
  if [[ $KVM_OPTION == use ]]; then
    exec libvirtd -d --listen -f "$LIBVIRTD_CONF" --pid-file "$LIBVIRTD_PIDFILE"
  fi
  mkdir -p "$DEV_COPY"
  mount -t tmpfs -o mode=0755,nosuid kvmforge-dev "$DEV_COPY"
  # --one-file-system: do not copy the contents of /dev/pts, /dev/shm (bound below instead).
  cp -a --one-file-system /dev/. "$DEV_COPY/"
  rm -f "$DEV_COPY/kvm"
  local sub
  for sub in pts shm mqueue hugepages; do
    if mountpoint -q "/dev/$sub"; then
      mkdir -p "$DEV_COPY/$sub"
      mount --rbind "/dev/$sub" "$DEV_COPY/$sub"
    fi
  done
  # macvtap: libvirt opens /dev/tap<ifindex> for a direct NIC, a node the kernel makes only in
  # devtmpfs, never in this copy. A devtmpfs mounted in this private namespace (the same
  # kernel instance, invisible outside) and a farm of /dev/tapN links into it make those
  # nodes reachable; ifindex in the netns grows with every link made there, so a run that
  # passes TAP_FARM_SIZE fails its macvtap test with a message saying so.
  mkdir -p "$DEVTMPFS"
  mount -t devtmpfs kvmforge-devtmpfs "$DEVTMPFS"
  seq -f "$DEVTMPFS/tap%g" 1 "$TAP_FARM_SIZE" | xargs ln -sf -t "$DEV_COPY" # -f: a tap node cp copied (a macvtap NIC up now) becomes a link too
  mount --move "$DEV_COPY" /dev
  [[ ! -e /dev/kvm ]] || die "/dev/kvm is still visible in libvirtd's mount namespace"
  exec libvirtd -d --listen -f "$LIBVIRTD_CONF" --pid-file "$LIBVIRTD_PIDFILE"
}

libvirtd_pid() { pid_from_file "$LIBVIRTD_PIDFILE" libvirtd; }

libvirtd_answers() { timeout 15 virsh -q -c "$URI" version >/dev/null 2>&1; }

tail_libvirtd_logs() {
  local f
  for f in "$LIBVIRTD_STDERR" "$LIBVIRTD_LOG"; do
    [[ -s $f ]] || continue
    printf -- '--- last lines of %s ---\n' "$f" >&2
    tail -n 20 "$f" >&2
  done
}

# start_libvirtd MODE (hide|use)
start_libvirtd() {
  local mode=$1 what="a private /dev without kvm"
  [[ $mode == use ]] && what="/dev/kvm visible"
  netns_exists || die "network namespace $NETNS is missing; run: $0 up"
  pid_from_file "$VIRTLOGD_PIDFILE" virtlogd >/dev/null || die "virtlogd is not running; run: $0 up"
  if libvirtd_answers; then
    die "a libvirtd that $0 did not start already answers on /run/libvirt/libvirt-sock; stop it first (no pid in $LIBVIRTD_PIDFILE)"
  fi
  log "starting libvirtd in netns $NETNS with $what"
  printf -- '--- %s start ---\n' "$(date -Is)" >>"$LIBVIRTD_STDERR"
  # The inner step needs our NETNS/STATE and the resolved KVM mode; export them explicitly so
  # defaults and overrides agree.
  if ! KVMFORGE_NETNS=$NETNS KVMFORGE_STATE=$STATE KVMFORGE_KVM=$mode \
    ip netns exec "$NETNS" unshare --mount --propagation private -- "$SELF" __libvirtd-inner \
    >>"$LIBVIRTD_STDERR" 2>&1 9>&-; then
    tail_libvirtd_logs
    die "libvirtd failed to start (see above and $LIBVIRTD_STDERR, $LIBVIRTD_LOG)"
  fi
}

wait_libvirtd_ready() {
  local deadline=$((SECONDS + START_TIMEOUT))
  while :; do
    if ! libvirtd_pid >/dev/null; then
      tail_libvirtd_logs
      die "libvirtd (pid file $LIBVIRTD_PIDFILE) is not running; it exited during startup"
    fi
    libvirtd_answers && return 0
    if ((SECONDS >= deadline)); then
      tail_libvirtd_logs
      die "libvirtd did not answer 'virsh -c $URI version' within ${START_TIMEOUT}s"
    fi
    sleep 0.2
  done
}

stop_libvirtd() { stop_by_pidfile libvirtd "$LIBVIRTD_PIDFILE" libvirtd; }

# --- pool and network ----------------------------------------------------------------------------

network_xml() {
  cat <<'EOF'
<network>
  <name>default</name>
  <forward mode='nat'/>
  <bridge name='virbr0' stp='on' delay='0'/>
  <ip address='192.168.122.1' netmask='255.255.255.0'>
    <dhcp>
      <range start='192.168.122.2' end='192.168.122.254'/>
    </dhcp>
  </ip>
</network>
EOF
}

# info_field OUTPUT FIELD: value of "FIELD:" in pool-info/net-info output (virsh runs with LC_ALL=C).
info_field() { awk -v f="$2:" '$1 == f { print $2; exit }' <<<"$1"; }

ensure_pool() {
  local info xml
  if ! info=$(vsh pool-info "$POOL" 2>/dev/null); then
    log "defining dir pool $POOL at $POOL_DIR"
    vsh pool-define-as "$POOL" dir --target "$POOL_DIR" >/dev/null || die "pool-define-as $POOL failed"
    info=$(vsh pool-info "$POOL") || die "pool-info $POOL failed after defining it"
  fi
  xml=$(vsh pool-dumpxml "$POOL") || die "pool-dumpxml $POOL failed"
  if ! grep -qF "<path>$POOL_DIR</path>" <<<"$xml"; then
    log "WARNING: pool $POOL exists but does not point at $POOL_DIR; leaving it as it is"
  fi
  if [[ $(info_field "$info" State) != running ]]; then
    log "building and starting pool $POOL"
    vsh pool-build "$POOL" >/dev/null || die "pool-build $POOL failed"
    vsh pool-start "$POOL" >/dev/null || die "pool-start $POOL failed"
  fi
  if [[ $(info_field "$info" Autostart) != yes ]]; then
    vsh pool-autostart "$POOL" >/dev/null || die "pool-autostart $POOL failed"
  fi
}

ensure_network() {
  local info xml f
  if ! info=$(vsh net-info "$NETWORK" 2>/dev/null); then
    log "defining NAT network $NETWORK (192.168.122.0/24, virbr0) in netns $NETNS"
    f=$(mktemp)
    network_xml >"$f"
    if ! vsh net-define "$f" >/dev/null; then
      rm -f "$f"
      die "net-define $NETWORK failed"
    fi
    rm -f "$f"
    info=$(vsh net-info "$NETWORK") || die "net-info $NETWORK failed after defining it"
  fi
  xml=$(vsh net-dumpxml --inactive "$NETWORK") || die "net-dumpxml $NETWORK failed"
  if ! grep -q "<forward mode='nat'" <<<"$xml" || ! grep -q "<bridge name='virbr0'" <<<"$xml" ||
    ! grep -q "<ip address='192.168.122.1' netmask='255.255.255.0'" <<<"$xml" ||
    ! grep -q "<range start='192.168.122.2' end='192.168.122.254'" <<<"$xml"; then
    log "WARNING: network $NETWORK differs from NAT 192.168.122.0/24 on virbr0; leaving it as it is"
  fi
  if [[ $(info_field "$info" Active) != yes ]]; then
    log "starting network $NETWORK"
    if ! vsh net-start "$NETWORK" >/dev/null; then
      tail_libvirtd_logs
      die "net-start $NETWORK failed"
    fi
  fi
  if [[ $(info_field "$info" Autostart) != yes ]]; then
    vsh net-autostart "$NETWORK" >/dev/null || die "net-autostart $NETWORK failed"
  fi
  # The bridge must exist inside the namespace (and only there).
  ip netns exec "$NETNS" ip link show virbr0 >/dev/null 2>&1 ||
    die "network $NETWORK is active but virbr0 is not in netns $NETNS"
}

# --- checks --------------------------------------------------------------------------------------

# check_kvm_offer MODE: libvirt offers domain type kvm exactly when we let it see /dev/kvm.
check_kvm_offer() {
  local mode=$1 caps
  caps=$(vsh capabilities) || die "virsh capabilities failed"
  if [[ $mode == use ]]; then
    grep -q "<domain type='kvm'" <<<"$caps" ||
      die "KVM is in use (KVMFORGE_KVM=$KVM_OPTION) but libvirt offers no domain type kvm: can the qemu user open /dev/kvm (ls -l /dev/kvm)? Or run with KVMFORGE_KVM=hide"
  elif grep -q "<domain type='kvm'" <<<"$caps"; then
    die "libvirt offers domain type kvm although /dev/kvm is hidden; libvirtd is not running in the private /dev. Run: $0 down && $0 up"
  fi
  grep -q "<domain type='qemu'" <<<"$caps" ||
    die "libvirt offers no domain type qemu; is qemu-system-x86 installed? (virsh capabilities)"
}

check_define_latency() {
  local f t0 t1 ms
  f=$(mktemp)
  cat >"$f" <<EOF
<domain type='qemu'>
  <name>$PROBE_DOMAIN</name>
  <memory unit='MiB'>32</memory>
  <os><type arch='x86_64'>hvm</type></os>
</domain>
EOF
  vsh undefine "$PROBE_DOMAIN" >/dev/null 2>&1 || true
  t0=$(now_ms)
  vsh define "$f" >/dev/null || {
    rm -f "$f"
    die "virsh define of a trivial domain failed"
  }
  t1=$(now_ms)
  rm -f "$f"
  vsh undefine "$PROBE_DOMAIN" >/dev/null || die "could not undefine probe domain $PROBE_DOMAIN"
  ms=$((t1 - t0))
  log "define of a trivial domain took ${ms} ms"
  if ((ms > DEFINE_LIMIT_MS)); then
    die "define took ${ms} ms (limit ${DEFINE_LIMIT_MS} ms): libvirt is re-probing QEMU; check that /dev/kvm is hidden from libvirtd (ls /proc/\$(cat $LIBVIRTD_PIDFILE)/root/dev/kvm) or, with KVMFORGE_KVM=use, that KVM really works; then: $0 down && $0 up"
  fi
}

# --- subcommands ---------------------------------------------------------------------------------

lock_state() {
  mkdir -p "$STATE"
  # libvirt-qemu must be able to traverse to the pool directory below.
  chmod 0755 "$STATE"
  exec 9>"$STATE/lock"
  flock 9
}

cmd_up() {
  require_root
  local t0 conf_changed cfg_changed cold=0 pid mode want_setup
  t0=$(now_ms)
  ensure_packages
  mode=$(kvm_mode)
  want_setup=$(setup_version "$mode")
  lock_state
  ensure_netns
  conf_changed=$(ensure_qemu_conf)
  ensure_swtpm_localca
  ensure_pki
  cfg_changed=$(write_libvirtd_conf)
  ensure_virtlogd

  if pid=$(libvirtd_pid); then
    if ! in_netns "$pid"; then
      die "libvirtd (pid $pid) is not in netns $NETNS (was the namespace deleted?); run: $0 down && $0 up"
    fi
    if [[ -n $conf_changed || -n $cfg_changed || $(cat "$SETUP_STAMP" 2>/dev/null) != "$want_setup" ]]; then
      log "configuration changed; restarting libvirtd"
      stop_libvirtd
    fi
  fi
  if ! libvirtd_pid >/dev/null; then
    if [[ -n $conf_changed || $(cat "$SETUP_STAMP" 2>/dev/null) != "$want_setup" ]]; then
      clear_caps_cache
    fi
    start_libvirtd "$mode"
    cold=1
  fi
  wait_libvirtd_ready
  printf '%s\n' "$want_setup" >"$SETUP_STAMP"
  pid=$(libvirtd_pid)
  if [[ $mode == use ]]; then
    [[ -e /proc/$pid/root/dev/kvm ]] ||
      die "libvirtd (pid $pid) cannot see /dev/kvm although KVM is to be used; run: $0 down && $0 up"
  else
    [[ ! -e /proc/$pid/root/dev/kvm ]] ||
      die "libvirtd (pid $pid) can see /dev/kvm; run: $0 down && $0 up"
  fi

  check_kvm_offer "$mode"
  ensure_pool
  ensure_network
  ((cold == 0)) || check_define_latency
  log "up: libvirtd pid $pid in netns $NETNS, pool $POOL and network $NETWORK active, /dev/kvm $([[ $mode == use ]] && echo used || echo hidden) ($(($(now_ms) - t0)) ms)"
}

cmd_down() {
  require_root
  if netns_b_exists || libvirtd_b_pid >/dev/null; then (cmd_down_b); fi
  lock_state
  local pid f name
  if pid=$(libvirtd_pid); then
    if libvirtd_answers; then
      local doms nets
      doms=$(vsh list --name) || true
      while IFS= read -r name; do
        [[ -n $name ]] || continue
        log "destroying domain $name"
        vsh destroy "$name" >/dev/null || log "WARNING: destroy $name failed"
      done <<<"$doms"
      nets=$(vsh net-list --name) || true
      while IFS= read -r name; do
        [[ -n $name ]] || continue
        log "destroying network $name"
        vsh net-destroy "$name" >/dev/null || log "WARNING: net-destroy $name failed"
      done <<<"$nets"
    else
      log "WARNING: libvirtd (pid $pid) does not answer; cleaning up by libvirt's pid files instead"
    fi
  fi
  stop_libvirtd

  # What libvirtd could not clean up: only processes named in the pid files libvirt wrote, and only
  # when they live in our namespace (or in a namespace other than ours, if ours is already gone).
  local own_ns
  own_ns=$(readlink /proc/self/ns/net)
  for f in /run/libvirt/qemu/*.pid /run/libvirt/network/*.pid; do
    [[ -e $f ]] || continue
    pid=$(head -c 32 "$f" 2>/dev/null) || continue
    pid=${pid//[[:space:]]/}
    [[ $pid =~ ^[0-9]+$ ]] || continue
    proc_alive "$pid" || continue
    case $(cat "/proc/$pid/comm" 2>/dev/null) in
    dnsmasq | qemu-*) ;;
    *) continue ;;
    esac
    if in_netns "$pid" || { ! netns_exists && [[ $(readlink "/proc/$pid/ns/net") != "$own_ns" ]]; }; then
      stop_pid "$(cat "/proc/$pid/comm") from $f" "$pid"
    fi
  done

  stop_by_pidfile virtlogd "$VIRTLOGD_PIDFILE" virtlogd

  if netns_exists; then
    local left
    left=$(ip netns pids "$NETNS" 2>/dev/null | tr '\n' ' ')
    if [[ -n $left ]]; then
      log "WARNING: processes still in netns $NETNS (not started by this script, left alone): $left"
    fi
    log "deleting network namespace $NETNS"
    ip netns delete "$NETNS" || die "ip netns delete $NETNS failed"
  fi
  log "down"
}

cmd_status() {
  local up=1 pid out
  printf 'netns %s: ' "$NETNS"
  if netns_exists; then echo present; else
    echo absent
    up=0
  fi
  printf 'virtlogd: '
  if pid=$(pid_from_file "$VIRTLOGD_PIDFILE" virtlogd); then echo "running (pid $pid)"; else
    echo "not running"
    up=0
  fi
  printf 'libvirtd: '
  if pid=$(libvirtd_pid); then
    printf 'running (pid %s, pid file %s' "$pid" "$LIBVIRTD_PIDFILE"
    if in_netns "$pid"; then printf ', in netns %s' "$NETNS"; else
      printf ', NOT in netns %s' "$NETNS"
      up=0
    fi
    if [[ $(stamp_mode) == use ]]; then
      if [[ -e /proc/$pid/root/dev/kvm ]]; then printf ', /dev/kvm used'; else
        printf ', CANNOT SEE /dev/kvm'
        up=0
      fi
    elif [[ -e /proc/$pid/root/dev/kvm ]]; then
      printf ', SEES /dev/kvm'
      up=0
    else printf ', /dev/kvm hidden'; fi
    echo ')'
  else
    echo "not running"
    up=0
  fi
  if out=$(timeout 15 virsh -c "$URI" version 2>&1); then
    printf '%s\n' "$out" | sed 's/^/  /'
    echo "pools:"
    vsh pool-list --all | sed 's/^/  /' || true
    echo "networks:"
    vsh net-list --all | sed 's/^/  /' || true
    local info
    info=$(vsh pool-info "$POOL" 2>/dev/null) || true
    if [[ $(info_field "$info" State) != running ]]; then
      echo "pool $POOL is not active"
      up=0
    fi
    info=$(vsh net-info "$NETWORK" 2>/dev/null) || true
    if [[ $(info_field "$info" Active) != yes ]]; then
      echo "network $NETWORK is not active"
      up=0
    fi
  else
    echo "virsh -c $URI version: no answer"
    up=0
  fi
  if netns_exists; then
    echo "listeners in netns $NETNS:"
    ip netns exec "$NETNS" ss -Hltnp 2>/dev/null | sed 's/^/  /' || true
  fi
  if netns_b_exists || libvirtd_b_pid >/dev/null || ((${KVMFORGE_HOSTS:-1} >= 2)); then
    status_b || { ((${KVMFORGE_HOSTS:-1} < 2)) || up=0; }
  fi
  if ((up)); then
    echo "status: up"
    return 0
  fi
  echo "status: down (run: $0 up)"
  return 3
}

# shell_quote VALUE: single-quote for eval.
shell_quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

cmd_env() {
  local kv b_env
  mapfile -t b_env < <(env_b_lines) # host b's variables, only when b is up
  for kv in \
    "KVMFORGE_NETNS=$NETNS" \
    "KVMFORGE_STATE=$STATE" \
    "LIBVIRT_TEST_URI=$URI" \
    "LIBVIRT_TEST_TCP_URI=$TCP_URI" \
    "LIBVIRT_TEST_TLS_URI=$TLS_URI" \
    "LIBVIRT_TEST_PKIPATH=$CLIENT_PKI" \
    "LIBVIRT_TEST_POOL=$POOL" \
    "LIBVIRT_TEST_POOL_PATH=$POOL_DIR" \
    "LIBVIRT_TEST_NETWORK=$NETWORK" \
    "LIBVIRT_TEST_LIBVIRTD_PIDFILE=$LIBVIRTD_PIDFILE" \
    "LIBVIRT_TEST_KVM=$(stamp_mode)" \
    "LIBVIRT_TEST_TAP_LINKS=$TAP_FARM_SIZE" \
    "${b_env[@]}"; do
    printf 'export %s=%s\n' "${kv%%=*}" "$(shell_quote "${kv#*=}")"
  done
}

cmd_restart_libvirtd() {
  require_root
  lock_state
  local t0
  t0=$(now_ms)
  stop_libvirtd
  start_libvirtd "$(stamp_mode)"
  wait_libvirtd_ready
  # With host b up, the shared pool's bindfs mount lives in this libvirtd's own mount
  # namespace: a new libvirtd needs it again (and its pool "shared" started over it), else
  # the files it makes there are not the ones b sees.
  if libvirtd_b_pid >/dev/null 2>&1; then
    ensure_shared
  fi
  log "libvirtd restarted (pid $(libvirtd_pid)) in $(($(now_ms) - t0)) ms"
}

cmd_exec() {
  (($# > 0)) || die "usage: $0 exec CMD [ARGS...]"
  netns_exists || die "network namespace $NETNS is missing; run: $0 up"
  exec ip netns exec "$NETNS" "$@"
}

# The second host (b), for the migration tests.
# shellcheck source=tools/testhost-b.sh
source "$(dirname "$SELF")/testhost-b.sh"

usage() {
  sed -n '2,17p' "$SELF" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

main() {
  (($# > 0)) || usage
  local cmd=$1
  shift
  case $cmd in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  restart-libvirtd) cmd_restart_libvirtd ;;
  exec) cmd_exec "$@" ;;
  up-b) cmd_up_b ;;
  down-b) cmd_down_b ;;
  __libvirtd-inner) libvirtd_inner ;;
  __libvirtd-b-inner) libvirtd_b_inner ;;
  __kvm-probe)
    # For checking the probe by hand: prints the decision, changes nothing.
    kvm_mode
    ;;
  -h | --help | help) usage ;;
  *)
    log "unknown subcommand: $cmd"
    usage
    ;;
  esac
}

main "$@"
