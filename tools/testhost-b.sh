# shellcheck shell=bash
# tools/testhost-b.sh: the second test host ("b") for the migration tests. Sourced by
# tools/testhost.sh (it reuses its helpers: pid files, close_inherited_fds, libvirtd_inner's
# private /dev without kvm); not run on its own.
#
#   tools/testhost.sh up-b     start host b (the main host must be up: b's veth ends in its netns)
#   tools/testhost.sh down-b   destroy and undefine b's domains, stop b, delete netns kvmforge-b
#   tools/testhost.sh status   shows b after the main host (exit code counts b only with KVMFORGE_HOSTS=2)
#
# What b is (see /work/shared/notes/test-environment.md, "Two hosts on one machine"):
# - its own network namespace (KVMFORGE_NETNS_B, default kvmforge-b) and, for libvirtd and its
#   virtlogd, a private mount + UTS namespace (hostname kvmforge-b);
# - a veth pair kvmf-a (netns kvmforge, 10.77.0.1/24) <-> kvmf-b (netns kvmforge-b, 10.77.0.2/24):
#   the migration stream and the NBD disk copy go over it (qemu.conf migration_host on each side);
# - private binds over /run/libvirt, /var/lib/libvirt, /var/cache/libvirt (the QEMU capabilities
#   cache is kept across runs, so a restart takes seconds), /var/log/libvirt and /etc/libvirt
#   (written fresh on every up-b: libvirtd.conf with b's own host_uuid, qemu.conf = the main
#   host's plus migration_host); directories under STATE_B on the shared filesystem;
# - its socket is STATE_B/run/libvirt-sock (b's /run/libvirt is that directory), reachable from
#   every namespace: qemu+unix:///system?socket=STATE_B/run/libvirt-sock, also as the p2p
#   destination of the main host;
# - the main host is also reachable as qemu+unix:///system?socket=STATE_B/main-run/libvirt-sock
#   (LIBVIRT_TEST_URI_A): the p2p destination URI for migrations b -> main (see MAIN_RUN_B);
# - pool "default": in b's mount namespace STATE_B/pool is bound over the main host's pool path,
#   so the pool's path is the same on both hosts. --copy-storage-all needs the target to have
#   an active pool whose directory holds the disk's path; with this every disk of the main
#   host's default pool can be copied to b and back, and the provider's volumes keep their
#   pool name and path. The files are really in STATE_B/pool (LIBVIRT_TEST_POOL_DIR_B).
# - network "default": NAT 192.168.124.0/24 on virbr0 (b's own netns, so the bridge name does
#   not clash with the main host's 192.168.122.0/24 virbr0).
# - pool "shared" on both hosts: see ensure_shared (bindfs with subtype glusterfs).

readonly NETNS_B=${KVMFORGE_NETNS_B:-kvmforge-b}
readonly STATE_B=${KVMFORGE_STATE_B:-/var/lib/kvmforge-testhost-b}
readonly SOCK_B=$STATE_B/run/libvirt-sock
readonly URI_B="qemu+unix:///system?socket=$SOCK_B"
readonly LIBVIRTD_PIDFILE_B=$STATE_B/libvirtd.pid
readonly VIRTLOGD_PIDFILE_B=$STATE_B/virtlogd.pid
readonly LIBVIRTD_STDERR_B=$STATE_B/libvirtd.stderr
readonly POOL_DIR_B=$STATE_B/pool
readonly HOST_UUID_FILE_B=$STATE_B/host-uuid
readonly VETH_A=kvmf-a VETH_B=kvmf-b
readonly ADDR_A=10.77.0.1 ADDR_B=10.77.0.2
readonly NET_B_PREFIX=192.168.124
# The main host's socket under a path every namespace sees: in b's mount namespace
# /run/libvirt is b's own, so qemu:///system there means b, and b's libvirtd (the p2p source of
# a migration b -> main) needs another name for the main daemon. A bind of the root namespace's
# /run/libvirt at STATE_B/main-run, made before b's mount namespace is copied from the root one.
readonly MAIN_RUN_B=$STATE_B/main-run
readonly URI_A="qemu+unix:///system?socket=$MAIN_RUN_B/libvirt-sock"
# The main host's pool path, as b's pool "default" sees it (bound over by STATE_B/pool in b's
# mount namespace). The inner step runs with KVMFORGE_STATE=STATE_B, hence passed explicitly.
readonly MAIN_POOL_DIR=${KVMFORGE_MAIN_POOL_DIR:-$POOL_DIR}
# Shared storage: one directory, seen by both hosts through a bindfs FUSE mount of subtype
# glusterfs at the same path (libvirt counts that as shared, see ensure_shared).
readonly SHARED_BACKING=${KVMFORGE_SHARED_BACKING:-/var/lib/kvmforge-shared-backing}
readonly SHARED_MNT=${KVMFORGE_SHARED_MNT:-/var/lib/kvmforge-shared}
readonly SHARED_POOL=shared

vsh_b() { LC_ALL=C timeout 120 virsh -q -c "$URI_B" "$@"; }

netns_b_exists() { [[ -e /run/netns/$NETNS_B ]] && ip netns exec "$NETNS_B" true 2>/dev/null; }

# in_netns_b PID: the process lives in b's network namespace.
in_netns_b() {
  local ids
  ids=$(ip netns identify "$1" 2>/dev/null) || return 1
  [[ " ${ids//$'\n'/ } " == *" $NETNS_B "* ]]
}

libvirtd_b_pid() { pid_from_file "$LIBVIRTD_PIDFILE_B" libvirtd; }

libvirtd_b_answers() { [[ -S $SOCK_B ]] && timeout 15 virsh -q -c "$URI_B" version >/dev/null 2>&1; }

# b_is_up: cheap (no virsh): what `env` asks before printing b's variables.
b_is_up() { libvirtd_b_pid >/dev/null && [[ -S $SOCK_B ]]; }

# --- veth between the two namespaces --------------------------------------------------------------

# (Outputs captured first: with pipefail, `ip ... | grep -q` fails when grep exits early.)
veth_ok() {
  local a b l
  a=$(ip netns exec "$NETNS" ip -o addr show dev "$VETH_A" 2>/dev/null) || return 1
  b=$(ip netns exec "$NETNS_B" ip -o addr show dev "$VETH_B" 2>/dev/null) || return 1
  l=$(ip netns exec "$NETNS" ip -o link show dev "$VETH_A" 2>/dev/null) || return 1
  [[ $a == *" $ADDR_A/24 "* && $b == *" $ADDR_B/24 "* && $l == *"state UP"* ]]
}

ensure_veth() {
  veth_ok && return 0
  log "linking netns $NETNS ($ADDR_A, $VETH_A) and $NETNS_B ($ADDR_B, $VETH_B) with a veth pair"
  # A half left behind (the main host's netns was recreated) goes first.
  ip netns exec "$NETNS" ip link del "$VETH_A" 2>/dev/null || true
  ip netns exec "$NETNS_B" ip link del "$VETH_B" 2>/dev/null || true
  ip link del "$VETH_A" 2>/dev/null || true
  ip link add "$VETH_A" netns "$NETNS" type veth peer name "$VETH_B" netns "$NETNS_B" ||
    die "creating veth $VETH_A/$VETH_B failed"
  ip netns exec "$NETNS" ip addr add "$ADDR_A/24" dev "$VETH_A"
  ip netns exec "$NETNS_B" ip addr add "$ADDR_B/24" dev "$VETH_B"
  ip netns exec "$NETNS" ip link set "$VETH_A" up
  ip netns exec "$NETNS_B" ip link set "$VETH_B" up
  veth_ok || die "veth $VETH_A/$VETH_B is not up with $ADDR_A and $ADDR_B"
}

# --- b's configuration ----------------------------------------------------------------------------

# write_b_config: b's /etc/libvirt (STATE_B/etc), written on every up-b. Prints "changed" when the
# daemon's configuration changed (then a running b restarts). Definitions (storage/, qemu/,
# qemu/networks/) that b's libvirtd wrote are kept.
write_b_config() {
  local etc=$STATE_B/etc uuid want_conf want_qemu changed=
  mkdir -p "$etc" "$STATE_B/run" "$STATE_B/lib" "$STATE_B/cache" "$STATE_B/log/qemu" "$POOL_DIR_B"
  [[ -s $HOST_UUID_FILE_B ]] || cat /proc/sys/kernel/random/uuid >"$HOST_UUID_FILE_B"
  uuid=$(cat "$HOST_UUID_FILE_B")
  want_conf=$(
    cat <<EOF
# Written by kvmforge tools/testhost.sh up-b; regenerated on every "up-b".
# A host_uuid of its own: libvirt refuses to migrate to a daemon with the source's host uuid.
host_uuid = "$uuid"
listen_tls = 0
listen_tcp = 1
listen_addr = "$ADDR_B"
auth_tcp = "none"
log_outputs = "3:file:$STATE_B/libvirtd.log"
EOF
  )
  if [[ $(cat "$STATE_B/libvirtd.conf" 2>/dev/null) != "$want_conf" ]]; then
    printf '%s\n' "$want_conf" >"$STATE_B/libvirtd.conf"
    changed=changed
  fi
  # qemu.conf: the main host's (namespaces = [] and whatever else it needs), but b's own address
  # for incoming migrations.
  want_qemu=$(
    sed -E 's/^([[:space:]]*migration_host[[:space:]]*=.*)$/# \1  # the main host'"'"'s; b sets its own below/' "$QEMU_CONF"
    printf '\n# Added by kvmforge tools/testhost.sh up-b: where the source connects for migrations to b.\nmigration_host = "%s"\n' "$ADDR_B"
  )
  if [[ $(cat "$etc/qemu.conf" 2>/dev/null) != "$want_qemu" ]]; then
    printf '%s\n' "$want_qemu" >"$etc/qemu.conf"
    chmod 0600 "$etc/qemu.conf"
    changed=changed
  fi
  # The rest as Debian ships it (not a copy of /etc/libvirt as a whole: that would carry the
  # main daemon's domains, pools, secrets and hooks).
  local f
  for f in libvirt.conf virtlogd.conf qemu-lockd.conf qemu-sanlock.conf; do
    [[ -e /etc/libvirt/$f && ! -e $etc/$f ]] && cp -a "/etc/libvirt/$f" "$etc/$f"
  done
  if [[ -d /etc/libvirt/nwfilter && ! -d $etc/nwfilter ]]; then
    cp -a /etc/libvirt/nwfilter "$etc/nwfilter"
  fi
  echo "$changed"
}

# --- b's daemons ----------------------------------------------------------------------------------

# Runs as `testhost.sh __libvirtd-b-inner` with KVMFORGE_STATE=STATE_B, inside netns kvmforge-b and
# a fresh private mount + UTS namespace (see start_libvirtd_b): bind b's directories over libvirt's,
# start b's virtlogd there (its socket is in b's /run/libvirt), then become libvirtd through the
# main host's libvirtd_inner (private /dev without kvm; pid file and config from STATE_B).
libvirtd_b_inner() {
  close_inherited_fds
  hostname kvmforge-b
  local d
  for d in run:/run/libvirt lib:/var/lib/libvirt cache:/var/cache/libvirt log:/var/log/libvirt etc:/etc/libvirt; do
    mkdir -p "${d#*:}"
    mount --bind "$STATE_B/${d%%:*}" "${d#*:}"
  done
  mkdir -p "$MAIN_POOL_DIR"
  mount --bind "$POOL_DIR_B" "$MAIN_POOL_DIR"
  virtlogd -d -p "$VIRTLOGD_PIDFILE_B" || die "b: virtlogd failed to start"
  local _
  for _ in $(seq 50); do
    [[ -S /run/libvirt/virtlogd-sock ]] && break
    sleep 0.1
  done
  [[ -S /run/libvirt/virtlogd-sock ]] || die "b: virtlogd's socket did not appear"
  libvirtd_inner
}

start_libvirtd_b() {
  local mode=$1
  if libvirtd_b_answers; then
    die "a libvirtd that $0 did not start already answers on $SOCK_B; stop it first (no pid in $LIBVIRTD_PIDFILE_B)"
  fi
  # A virtlogd of an earlier b whose libvirtd died: it holds b's old mount namespace.
  stop_by_pidfile "b virtlogd" "$VIRTLOGD_PIDFILE_B" virtlogd
  rm -f "$SOCK_B" "$STATE_B/run/virtlogd-sock"
  log "starting host b: virtlogd and libvirtd in netns $NETNS_B (private mount + UTS namespace)"
  printf -- '--- %s start ---\n' "$(date -Is)" >>"$LIBVIRTD_STDERR_B"
  if ! KVMFORGE_NETNS=$NETNS_B KVMFORGE_STATE=$STATE_B KVMFORGE_KVM=$mode KVMFORGE_MAIN_POOL_DIR=$POOL_DIR \
    ip netns exec "$NETNS_B" unshare --mount --uts --propagation private -- "$SELF" __libvirtd-b-inner \
    >>"$LIBVIRTD_STDERR_B" 2>&1 9>&-; then
    tail -n 20 "$LIBVIRTD_STDERR_B" >&2
    die "host b: libvirtd failed to start (see $LIBVIRTD_STDERR_B, $STATE_B/libvirtd.log)"
  fi
  local deadline=$((SECONDS + START_TIMEOUT))
  until libvirtd_b_answers; do
    if ! libvirtd_b_pid >/dev/null || ((SECONDS >= deadline)); then
      tail -n 20 "$LIBVIRTD_STDERR_B" "$STATE_B/libvirtd.log" >&2 2>/dev/null || true
      die "host b: libvirtd did not answer on $URI_B"
    fi
    sleep 0.2
  done
}

network_b_xml() {
  cat <<EOF
<network>
  <name>default</name>
  <forward mode='nat'/>
  <bridge name='virbr0' stp='on' delay='0'/>
  <ip address='$NET_B_PREFIX.1' netmask='255.255.255.0'>
    <dhcp>
      <range start='$NET_B_PREFIX.2' end='$NET_B_PREFIX.254'/>
    </dhcp>
  </ip>
</network>
EOF
}

# ensure_pool_b NAME PATH: a dir pool, active and autostarted, on b.
ensure_pool_b() {
  local name=$1 path=$2 info
  if ! info=$(vsh_b pool-info "$name" 2>/dev/null); then
    log "b: defining dir pool $name at $path"
    vsh_b pool-define-as "$name" dir --target "$path" >/dev/null || die "b: pool-define-as $name failed"
    info=$(vsh_b pool-info "$name") || die "b: pool-info $name failed"
  fi
  if [[ $(info_field "$info" State) != running ]]; then
    vsh_b pool-build "$name" >/dev/null || die "b: pool-build $name failed"
    vsh_b pool-start "$name" >/dev/null || die "b: pool-start $name failed"
  fi
  [[ $(info_field "$info" Autostart) == yes ]] || vsh_b pool-autostart "$name" >/dev/null ||
    die "b: pool-autostart $name failed"
}

ensure_network_b() {
  local info f
  if ! info=$(vsh_b net-info default 2>/dev/null); then
    log "b: defining NAT network default ($NET_B_PREFIX.0/24, virbr0) in netns $NETNS_B"
    f=$(mktemp)
    network_b_xml >"$f"
    vsh_b net-define "$f" >/dev/null || {
      rm -f "$f"
      die "b: net-define default failed"
    }
    rm -f "$f"
    info=$(vsh_b net-info default) || die "b: net-info default failed"
  fi
  [[ $(info_field "$info" Active) == yes ]] || vsh_b net-start default >/dev/null || die "b: net-start default failed"
  [[ $(info_field "$info" Autostart) == yes ]] || vsh_b net-autostart default >/dev/null ||
    die "b: net-autostart default failed"
}

# --- subcommands ----------------------------------------------------------------------------------

lock_state_b() {
  mkdir -p "$STATE_B"
  chmod 0755 "$STATE_B"
  exec 8>"$STATE_B/lock"
  flock 8
}

stop_b_daemons() {
  stop_by_pidfile "b libvirtd" "$LIBVIRTD_PIDFILE_B" libvirtd
  stop_by_pidfile "b virtlogd" "$VIRTLOGD_PIDFILE_B" virtlogd
}

cmd_up_b() {
  require_root
  local t0 pid mode cfg_changed
  t0=$(now_ms)
  ensure_packages
  netns_exists && libvirtd_pid >/dev/null ||
    die "the main host is not up (host b's veth ends in its netns $NETNS); run: $0 up"
  mode=$(stamp_mode)
  lock_state_b
  if ! netns_b_exists; then
    log "creating network namespace $NETNS_B"
    ip netns add "$NETNS_B" || die "ip netns add $NETNS_B failed"
  fi
  ip netns exec "$NETNS_B" ip link set lo up
  ensure_veth
  cfg_changed=$(write_b_config)
  if pid=$(libvirtd_b_pid); then
    if ! in_netns_b "$pid"; then
      die "b's libvirtd (pid $pid) is not in netns $NETNS_B (was the namespace deleted?); run: $0 down-b && $0 up-b"
    fi
    if [[ -n $cfg_changed ]]; then
      log "host b: configuration changed; restarting its libvirtd"
      stop_b_daemons
    fi
  fi
  if ! mountpoint -q "$MAIN_RUN_B"; then
    mkdir -p "$MAIN_RUN_B"
    mount --bind /run/libvirt "$MAIN_RUN_B" || die "bind /run/libvirt at $MAIN_RUN_B failed"
    # b's mount namespace must be copied after that bind, so a running b restarts.
    libvirtd_b_pid >/dev/null && stop_b_daemons
  fi
  libvirtd_b_pid >/dev/null || start_libvirtd_b "$mode"
  libvirtd_b_answers || die "host b: libvirtd (pid $(libvirtd_b_pid)) does not answer on $URI_B"
  pid=$(libvirtd_b_pid)
  if [[ $mode == hide && -e /proc/$pid/root/dev/kvm ]]; then
    die "host b: libvirtd (pid $pid) can see /dev/kvm; run: $0 down-b && $0 up-b"
  fi
  ensure_pool_b "$POOL" "$POOL_DIR"
  ensure_network_b
  ensure_shared
  log "up-b: libvirtd pid $pid in netns $NETNS_B, $URI_B, pool $POOL and network default active ($(($(now_ms) - t0)) ms)"
}

cmd_down_b() {
  require_root
  lock_state_b
  local name pid f
  if libvirtd_b_pid >/dev/null && libvirtd_b_answers; then
    while IFS= read -r name; do
      [[ -n $name ]] || continue
      log "b: destroying domain $name"
      vsh_b destroy "$name" >/dev/null || log "WARNING: b: destroy $name failed"
    done <<<"$(vsh_b list --name || true)"
    while IFS= read -r name; do
      [[ -n $name ]] || continue
      log "b: undefining domain $name"
      vsh_b undefine --nvram --managed-save --snapshots-metadata --checkpoints-metadata "$name" >/dev/null 2>&1 ||
        vsh_b undefine "$name" >/dev/null || log "WARNING: b: undefine $name failed"
    done <<<"$(vsh_b list --all --name || true)"
    while IFS= read -r name; do
      [[ -n $name ]] || continue
      vsh_b net-destroy "$name" >/dev/null || log "WARNING: b: net-destroy $name failed"
    done <<<"$(vsh_b net-list --name || true)"
  fi
  stop_shared
  stop_b_daemons
  # What b's libvirtd left running: only processes named in the pid files it wrote, in b's netns.
  for f in "$STATE_B"/run/qemu/*.pid "$STATE_B"/run/network/*.pid; do
    [[ -e $f ]] || continue
    pid=$(head -c 32 "$f" 2>/dev/null) || continue
    pid=${pid//[[:space:]]/}
    [[ $pid =~ ^[0-9]+$ ]] && proc_alive "$pid" || continue
    case $(cat "/proc/$pid/comm" 2>/dev/null) in
    dnsmasq | qemu-*) ;;
    *) continue ;;
    esac
    in_netns_b "$pid" && stop_pid "$(cat "/proc/$pid/comm") from $f" "$pid"
  done
  if mountpoint -q "$MAIN_RUN_B"; then umount "$MAIN_RUN_B" || log "WARNING: umount $MAIN_RUN_B failed"; fi
  if netns_b_exists; then
    log "deleting network namespace $NETNS_B (and the veth pair with it)"
    ip netns delete "$NETNS_B" || die "ip netns delete $NETNS_B failed"
  fi
  log "down-b"
}

# status_b: print b's state; 0 when up, 3 when not.
status_b() {
  local up=1 pid
  echo "--- host b ---"
  printf 'netns %s: ' "$NETNS_B"
  if netns_b_exists; then echo present; else
    echo absent
    up=0
  fi
  printf 'veth %s (%s) <-> %s (%s): ' "$VETH_A" "$ADDR_A" "$VETH_B" "$ADDR_B"
  if netns_b_exists && netns_exists && veth_ok; then echo up; else
    echo missing
    up=0
  fi
  printf 'b virtlogd: '
  if pid=$(pid_from_file "$VIRTLOGD_PIDFILE_B" virtlogd); then echo "running (pid $pid)"; else
    echo "not running"
    up=0
  fi
  printf 'b libvirtd: '
  if pid=$(libvirtd_b_pid); then echo "running (pid $pid, pid file $LIBVIRTD_PIDFILE_B)"; else
    echo "not running"
    up=0
  fi
  if ((up)) && libvirtd_b_answers; then
    echo "uri: $URI_B"
    echo "pools:"
    vsh_b pool-list --all | sed 's/^/  /' || true
    echo "networks:"
    vsh_b net-list --all | sed 's/^/  /' || true
    [[ $(info_field "$(vsh_b pool-info "$POOL" 2>/dev/null)" State) == running ]] || {
      echo "b: pool $POOL is not active"
      up=0
    }
  else
    ((up == 0)) || echo "virsh -c $URI_B version: no answer"
    up=0
  fi
  if ((up)); then
    echo "host b: up"
    return 0
  fi
  echo "host b: down (run: $0 up-b)"
  return 3
}

# env_b_lines: KEY=VALUE lines for `env`, only when b is up.
env_b_lines() {
  b_is_up || return 0
  printf '%s\n' \
    "KVMFORGE_NETNS_B=$NETNS_B" \
    "KVMFORGE_STATE_B=$STATE_B" \
    "LIBVIRT_TEST_URI_B=$URI_B" \
    "LIBVIRT_TEST_URI_A=$URI_A" \
    "LIBVIRT_TEST_POOL_B=$POOL" \
    "LIBVIRT_TEST_POOL_PATH_B=$POOL_DIR" \
    "LIBVIRT_TEST_POOL_DIR_B=$POOL_DIR_B" \
    "LIBVIRT_TEST_NETWORK_B=default" \
    "LIBVIRT_TEST_LIBVIRTD_PIDFILE_B=$LIBVIRTD_PIDFILE_B" \
    "LIBVIRT_TEST_MIGRATE_ADDR=$ADDR_A" \
    "LIBVIRT_TEST_MIGRATE_ADDR_B=$ADDR_B"
  if shared_ok; then
    # SHARED_PATH is the pool's path as both daemons see it; from the root namespace (the
    # tests') it is an empty directory, the files are in SHARED_DIR.
    printf '%s\n' "LIBVIRT_TEST_SHARED_POOL=$SHARED_POOL" "LIBVIRT_TEST_SHARED_PATH=$SHARED_MNT" \
      "LIBVIRT_TEST_SHARED_DIR=$SHARED_BACKING"
  fi
}

# --- shared storage (bindfs) ----------------------------------------------------------------------
# libvirt refuses to migrate a disk on a plain directory both hosts see ("Migration without shared
# storage is unsafe"): it trusts only file systems it knows to be shared, and a FUSE mount whose
# subtype is glusterfs is one of them. bindfs (a FUSE bind of SHARED_BACKING) with
# -o subtype=glusterfs gives exactly that, at SHARED_MNT in each libvirtd's own mount namespace
# (both are private, so a mount made in the root namespace would reach neither): one bindfs
# process per host, started through nsenter into that libvirtd's mount namespace and tracked by
# a pid file in STATE_B. Pool "shared" (dir, SHARED_MNT) is defined on both hosts. A running
# guest with a qcow2 disk there migrated live both ways without --copy-storage-all or --unsafe,
# with cache='none' and with the default cache alike (measured 2026-12-05).

bindfs_pidfile() { echo "$STATE_B/bindfs-$1.pid"; }

# shared_mounted PID: libvirtd PID's mount namespace has our glusterfs-typed FUSE mount.
shared_mounted() { awk -v m="$SHARED_MNT" '$5 == m && / - fuse\.glusterfs / { f = 1 } END { exit !f }' "/proc/$1/mountinfo" 2>/dev/null; }

# ensure_shared_on WHO LIBVIRTD_PID
ensure_shared_on() {
  local who=$1 lpid=$2 pidfile pid
  pidfile=$(bindfs_pidfile "$who")
  if pid=$(pid_from_file "$pidfile" bindfs) && shared_mounted "$lpid" &&
    [[ $(readlink "/proc/$pid/ns/mnt") == "$(readlink "/proc/$lpid/ns/mnt")" ]]; then
    return 0
  fi
  # A bindfs left in the mount namespace of an earlier libvirtd (restarted since) goes first.
  stop_by_pidfile "bindfs ($who)" "$pidfile" bindfs
  nsenter -t "$lpid" -m -- umount -l "$SHARED_MNT" 2>/dev/null || true
  log "mounting bindfs (subtype glusterfs) $SHARED_BACKING at $SHARED_MNT for host $who"
  (close_inherited_fds && exec nsenter -t "$lpid" -m -- bindfs -f -o subtype=glusterfs,allow_other \
    "$SHARED_BACKING" "$SHARED_MNT") </dev/null >>"$STATE_B/bindfs-$who.log" 2>&1 &
  echo $! >"$pidfile"
  local _
  for _ in $(seq 50); do
    shared_mounted "$lpid" && return 0
    sleep 0.1
  done
  die "bindfs for host $who did not mount $SHARED_MNT; see $STATE_B/bindfs-$who.log"
}

ensure_shared() {
  mkdir -p "$SHARED_BACKING" "$SHARED_MNT"
  ensure_shared_on a "$(libvirtd_pid)"
  ensure_shared_on b "$(libvirtd_b_pid)"
  ensure_pool_b "$SHARED_POOL" "$SHARED_MNT"
  # The same pool on the main host: one more pool there, at a path nothing else uses.
  local info
  if ! info=$(vsh pool-info "$SHARED_POOL" 2>/dev/null); then
    log "defining dir pool $SHARED_POOL at $SHARED_MNT on the main host"
    vsh pool-define-as "$SHARED_POOL" dir --target "$SHARED_MNT" >/dev/null || die "pool-define-as $SHARED_POOL failed"
    info=$(vsh pool-info "$SHARED_POOL")
  fi
  if [[ $(info_field "$info" State) != running ]]; then
    vsh pool-start "$SHARED_POOL" >/dev/null || die "pool-start $SHARED_POOL failed on the main host"
  else
    vsh pool-refresh "$SHARED_POOL" >/dev/null || true
  fi
}

shared_ok() {
  local lpid
  pid_from_file "$(bindfs_pidfile a)" bindfs >/dev/null && pid_from_file "$(bindfs_pidfile b)" bindfs >/dev/null &&
    lpid=$(libvirtd_pid) && shared_mounted "$lpid" && lpid=$(libvirtd_b_pid) && shared_mounted "$lpid"
}

# stop_shared: the main host's pool "shared" goes (not autostarted: it would come back empty
# without b), and both bindfs mounts.
stop_shared() {
  local lpid
  local xml
  if xml=$(vsh pool-dumpxml "$SHARED_POOL" 2>/dev/null) && [[ $xml == *"<path>$SHARED_MNT</path>"* ]]; then
    vsh pool-destroy "$SHARED_POOL" >/dev/null 2>&1 || true
    vsh pool-undefine "$SHARED_POOL" >/dev/null || log "WARNING: pool-undefine $SHARED_POOL on the main host failed"
  fi
  if lpid=$(libvirtd_pid) && shared_mounted "$lpid"; then
    nsenter -t "$lpid" -m -- umount "$SHARED_MNT" || log "WARNING: umount $SHARED_MNT in the main host's namespace failed"
  fi
  stop_by_pidfile "bindfs (a)" "$(bindfs_pidfile a)" bindfs
  stop_by_pidfile "bindfs (b)" "$(bindfs_pidfile b)" bindfs
}
