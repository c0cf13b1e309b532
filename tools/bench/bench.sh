#!/usr/bin/env bash
# tools/bench/bench.sh — `make bench`: what the provider costs, measured in one run on the
# local test host (tools/testhost.sh) and printed as a markdown table, next to a sequential
# `virsh` script doing the same work. It is a benchmark, not a test: it asserts nothing
# while measuring, and only reports each target as PASS or MISS at the end.
#
# Workloads, each done by `virsh` (one command per step, one after the other, as a shell
# script would), by the provider under Terraform, and under OpenTofu:
#   A  N_RUNNING (10) running tiny guests, each: a base volume uploaded from the tiny image,
#      a qcow2 overlay on it, a cloud-init seed ISO and a domain, started (4 resources per
#      guest; nobody waits for an IP: every way stops when the domain has been started).
#      apply (wall + client CPU), no-change plan (wall; the median of 3 once the guests idle), destroy (wall).
#   B  N_STOPPED (200) stopped domains (running = false, one NIC, no disk):
#      apply, no-change plan, -refresh=false plan, destroy, and per domain; provider peak
#      RSS during the apply.
#   C  an UPLOAD_MIB (1024) MiB raw file into a volume: libvirt_volume.source_file against
#      `virsh vol-create-as` + `virsh vol-upload`; MiB/s each and the ratio (median of
#      BENCH_UPLOAD_ROUNDS rounds, the ways interleaved: the disk makes single runs noisy).
#
# Environment:
#   BENCH_SCALE=0.2    scale the counts and the upload size (default 1: 10 guests, 200
#                      and 1000 domains, 10 x 100 in the fleet, 1024 MiB); for trying it out
#   BENCH_UPLOAD_ROUNDS=3              uploads per way in C (the median is reported)
#   BENCH_CLIS="virsh terraform tofu"   which ways to run (default all three)
#   BENCH_WORKLOADS="F S A B C D E G"   which workloads to run (default all; F, Terraform's
#                                       floor, and S, the schema floor, are what the ratios
#                                       divide by; S runs the floor of those of A, B, D asked)
#   BENCH_OUT=bin/bench                 where results.md, the raw numbers and logs go
#   TERRAFORM, TOFU                     the CLIs (default: terraform on PATH, tools/opentofu.sh)
#
# Workloads F (Terraform's floor), D (1000 stopped domains), E (a fleet of 10 hosts) and
# G (the guard: a domain with every device family) are in tools/bench/scale.sh; S (the
# schema floor: A's, B's and D's configurations against tools/bench/floor, a provider with
# this one's schema that does nothing) in tools/bench/schema_floor.sh.
#
# Everything it makes is named bench-*; leftovers of an earlier run are removed first and
# everything is removed again at the end (also on failure or Ctrl-C).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

die() { echo "bench: $*" >&2; exit 1; }
log() { echo "bench: $*" >&2; }

scale=${BENCH_SCALE:-1}
scaled() { awk -v n="$1" -v s="$scale" 'BEGIN { v = int(n * s + 0.5); if (v < 1) v = 1; print v }'; }
N_RUNNING=$(scaled 10)
N_STOPPED=$(scaled 200)
UPLOAD_MIB=$(scaled 1024)
UPLOAD_ROUNDS=${BENCH_UPLOAD_ROUNDS:-3}
CLIS=${BENCH_CLIS:-virsh terraform tofu}
WORKLOADS=${BENCH_WORKLOADS:-F S A B C D E G}
OUT=${BENCH_OUT:-$repo/bin/bench}
case $OUT in /*) ;; *) OUT=$repo/$OUT ;; esac

# ---------------------------------------------------------------- preflight (outside netns)
if [ "${1:-}" != __inner ]; then
  [ "$(id -u)" = 0 ] || die "run as root (the test host's network namespace needs it)"
  if ! "$repo/tools/testhost.sh" status >/dev/null 2>&1; then
    die "the test host is down (tools/testhost.sh status fails): run 'make testhost-up' first"
  fi
  eval "$("$repo/tools/testhost.sh" env)"
  ip netns exec "$KVMFORGE_NETNS" virsh -q -c "$LIBVIRT_TEST_URI" pool-info "$LIBVIRT_TEST_POOL" >/dev/null 2>&1 ||
    die "libvirtd does not answer on $LIBVIRT_TEST_URI, or pool $LIBVIRT_TEST_POOL is missing: run 'make testhost-up'"
  image="${KVMFORGE_CACHE:-/var/cache/kvmforge}/guest-image/tiny.qcow2"
  [ -r "$image" ] || die "no guest image at $image: run 'make image'"
  [ -x "$repo/bin/terraform-provider-libvirt" ] || die "no provider binary in bin/: run 'make build'"
  terraform=${TERRAFORM:-$(command -v terraform || true)}
  case " $CLIS " in *" terraform "*) [ -x "$terraform" ] || die "terraform not found (set TERRAFORM=/path/to/terraform)" ;; esac
  tofu=${TOFU:-}
  case " $CLIS " in *" tofu "*) [ -n "$tofu" ] || tofu=$("$repo/tools/opentofu.sh") ;; esac
  mkdir -p "$OUT"
  (cd "$repo" && go build -o "$OUT/benchrun" ./tools/bench) || die "cannot build tools/bench"
  # The schema floor, built as the provider is (make build), under the provider's name.
  if [[ " $WORKLOADS " == *" S "* ]]; then
    (cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$OUT/floor/terraform-provider-libvirt" ./tools/bench/floor) ||
      die "cannot build tools/bench/floor"
  fi
  # The upload source: incompressible bytes, made once and kept (page cache warm for both).
  upload_file="$OUT/upload-${UPLOAD_MIB}MiB.raw"
  if [[ " $WORKLOADS " == *" C "* ]] && [ "$(stat -c %s "$upload_file" 2>/dev/null || echo 0)" != $((UPLOAD_MIB * 1048576)) ]; then
    log "making $upload_file ($UPLOAD_MIB MiB of random bytes, once)"
    head -c $((UPLOAD_MIB * 1048576)) /dev/urandom >"$upload_file.tmp" && mv "$upload_file.tmp" "$upload_file"
  fi
  export BENCH_IMAGE=$image BENCH_TERRAFORM=$terraform BENCH_TOFU=$tofu BENCH_UPLOAD_FILE=$upload_file
  # Everything else runs inside the namespace, like the acceptance tests.
  exec ip netns exec "$KVMFORGE_NETNS" "$0" __inner
fi

# ---------------------------------------------------------------- inside the namespace
URI=$LIBVIRT_TEST_URI
POOL=$LIBVIRT_TEST_POOL
NETWORK=$LIBVIRT_TEST_NETWORK
benchrun=$OUT/benchrun
work=$OUT/work
res=$OUT/raw
logs=$OUT/logs
rm -rf "$work" "$res" "$logs"
mkdir -p "$work" "$res" "$logs"
declare -A cli_bin=([terraform]=$BENCH_TERRAFORM [tofu]=$BENCH_TOFU)
virsh() { command virsh -q -c "$URI" "$@"; }

# Remove every bench-* domain and volume (leftovers included). Never fails.
cleanup() {
  local d v
  for d in $(virsh list --all --name 2>/dev/null | grep '^bench-' || true); do
    virsh destroy "$d" >/dev/null 2>&1 || true
    virsh undefine "$d" --nvram >/dev/null 2>&1 || virsh undefine "$d" >/dev/null 2>&1 || true
  done
  virsh pool-refresh "$POOL" >/dev/null 2>&1 || true
  for v in $(virsh vol-list "$POOL" 2>/dev/null | awk '$1 ~ /^bench-/ { print $1 }'); do
    virsh vol-delete --pool "$POOL" "$v" >/dev/null 2>&1 || true
  done
}
on_exit() {
  local rc=$?
  log "removing bench-* domains and volumes"
  stop_fleet_keeper
  cleanup
  [ $rc = 0 ] || log "failed (exit $rc); logs in $logs"
}
# shellcheck source=tools/bench/scale.sh
. "$repo/tools/bench/scale.sh"
# shellcheck source=tools/bench/schema_floor.sh
. "$repo/tools/bench/schema_floor.sh"
trap on_exit EXIT
trap 'exit 130' INT TERM
cleanup

# measure KEY CMD...: run CMD under the helper; numbers in $res/KEY.txt, output in $logs/KEY.log.
measure() {
  local key=$1
  shift
  log "$key: $*"
  "$benchrun" -out "$res/$key.txt" -watch terraform-provider-libvirt -timeout 40m -- "$@" >"$logs/$key.log" 2>&1
}
# get KEY FIELD: a number from $res/KEY.txt, empty when that run did not happen.
get() { [ -f "$res/$1.txt" ] && sed -n "s/^$2=//p" "$res/$1.txt" || true; }
must() { # must KEY CMD...: measure, and stop with the log when it fails
  local key=$1
  local rc=0
  measure "$@" || rc=$?
  [ $rc = 0 ] || { tail -n 40 "$logs/$key.log" >&2; die "$key failed (exit $rc; log $logs/$key.log)"; }
}

dtype=qemu
virsh capabilities | grep -q "<domain type='kvm'" && dtype=kvm
image_bytes=$(qemu-img info --output=json "$BENCH_IMAGE" | sed -n 's/.*"virtual-size": \([0-9]*\).*/\1/p')

# ---------------------------------------------------------------- the three ways
# Terraform / OpenTofu: dev_overrides, as tools/quickstart.sh does.
cat >"$work/dev.tfrc" <<TFRC
provider_installation {
  dev_overrides {
    "kvmforge/libvirt" = "$repo/bin"
  }
  direct {}
}
TFRC
export TF_CLI_CONFIG_FILE=$work/dev.tfrc CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
write_floor_tfrc # the schema floor's, for workload S
unset TF_LOG TF_LOG_PROVIDER

# tfdir CLI WORKLOAD: a configuration directory for one CLI and workload.
tfdir() {
  local d=$work/$1/$2
  mkdir -p "$d"
  cat >"$d/provider.tf" <<EOF
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}
provider "libvirt" {
  uri = "$URI"
}
locals {
  prefix  = "bench-$1"
  pool    = "$POOL"
  network = "$NETWORK"
}
EOF
  echo "$d"
}

domain_xml() { # domain_xml NAME [ROOT_VOL SEED_VOL]
  local disks=""
  if [ $# -gt 1 ]; then
    disks="<disk type='volume' device='disk'><driver name='qemu' type='qcow2'/><source pool='$POOL' volume='$2'/><target dev='vda' bus='virtio'/></disk>
    <disk type='volume' device='cdrom'><driver name='qemu' type='raw'/><source pool='$POOL' volume='$3'/><target dev='sda' bus='sata'/><readonly/></disk>"
  fi
  cat <<EOF
<domain type='$dtype'>
  <name>$1</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <features><acpi/><apic/></features>
  <devices>
    $disks
    <interface type='network'><source network='$NETWORK'/><model type='virtio'/></interface>
    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
    <graphics type='vnc' autoport='yes' listen='127.0.0.1'/>
  </devices>
</domain>
EOF
}

# The virsh scripts are written out first (XML, ISO inputs), then run as plain sequential
# scripts, one virsh process per step, which is what the measurement covers.
write_virsh_scripts() {
  local d=$work/virsh i n
  mkdir -p "$d"
  {
    echo 'set -e'
    for ((i = 0; i < N_RUNNING; i++)); do
      n=bench-virsh-$i
      mkdir -p "$d/$n-seed"
      printf '#cloud-config\n{}\n' >"$d/$n-seed/user-data"
      printf 'instance-id: %s\nlocal-hostname: %s\n' "$n" "$n" >"$d/$n-seed/meta-data"
      domain_xml "$n" "$n-root.qcow2" "$n-seed.iso" >"$d/$n.xml"
      cat <<EOF
virsh -q -c $URI vol-create-as $POOL $n-base.qcow2 $image_bytes --format qcow2
virsh -q -c $URI vol-upload --pool $POOL $n-base.qcow2 $BENCH_IMAGE
virsh -q -c $URI vol-create-as $POOL $n-root.qcow2 $image_bytes --format qcow2 --backing-vol $n-base.qcow2 --backing-vol-format qcow2
genisoimage -quiet -output $d/$n-seed.iso -volid cidata -joliet -rock $d/$n-seed/user-data $d/$n-seed/meta-data
virsh -q -c $URI vol-create-as $POOL $n-seed.iso \$(stat -c %s $d/$n-seed.iso) --format raw
virsh -q -c $URI vol-upload --pool $POOL $n-seed.iso $d/$n-seed.iso
rm -f $d/$n-seed.iso
virsh -q -c $URI define $d/$n.xml
virsh -q -c $URI start $n
EOF
    done
  } >"$d/running-apply.sh"
  {
    echo 'set -e'
    for ((i = 0; i < N_RUNNING; i++)); do
      n=bench-virsh-$i
      cat <<EOF
virsh -q -c $URI destroy $n
virsh -q -c $URI undefine $n
virsh -q -c $URI vol-delete --pool $POOL $n-root.qcow2
virsh -q -c $URI vol-delete --pool $POOL $n-base.qcow2
virsh -q -c $URI vol-delete --pool $POOL $n-seed.iso
EOF
    done
  } >"$d/running-destroy.sh"
  {
    echo 'set -e'
    for ((i = 0; i < N_STOPPED; i++)); do
      n=bench-virsh-s$i
      domain_xml "$n" >"$d/$n.xml"
      echo "virsh -q -c $URI define $d/$n.xml"
    done
  } >"$d/stopped-apply.sh"
  {
    echo 'set -e'
    for ((i = 0; i < N_STOPPED; i++)); do echo "virsh -q -c $URI undefine bench-virsh-s$i"; done
  } >"$d/stopped-destroy.sh"
  cat >"$d/upload.sh" <<EOF
set -e
virsh -q -c $URI vol-create-as $POOL bench-virsh-upload.raw $((UPLOAD_MIB * 1048576)) --format raw
virsh -q -c $URI vol-upload --pool $POOL bench-virsh-upload.raw $BENCH_UPLOAD_FILE
EOF
}

# Wait (unmeasured) until the guests of workload A have booted far enough to hold a DHCP
# lease, so that the plan is measured on a settled host, not while 10 TCG guests boot.
settle() { # settle PREFIX
  local deadline=$((SECONDS + 300)) have macs d
  # By MAC, not host name: leases of an earlier run's guests outlive them in the table.
  macs=$(for d in $(virsh list --name | grep "^$1-"); do virsh domiflist "$d" | awk '{ print $5 }'; done)
  [ -n "$macs" ] || { log "settle: no running $1-* domains"; return 0; }
  while :; do
    have=$(virsh net-dhcp-leases "$NETWORK" 2>/dev/null | grep -ciF "$macs" || true)
    [ "$have" -ge "$N_RUNNING" ] && { log "settle: $have of $N_RUNNING guests hold a lease"; break; }
    [ $SECONDS -ge $deadline ] && { log "settle: only $have of $N_RUNNING guests hold a lease after 300 s; measuring anyway"; break; }
    sleep 3
  done
}

# guests_idle PREFIX: wait (at most 180 s) until the PREFIX-* guests' QEMU processes use
# less than a tenth of a core together. A lease comes before cloud-init and the rest of the
# boot, and TCG guests booting on 2 cores starve the CLI and the provider: a plan measured
# then measures the guests. Workload A is about a fleet in its steady state.
guests_idle() {
  local deadline=$((SECONDS + 180)) pids busy d p
  pids=$(for d in $(virsh list --name | grep "^$1-"); do cat "/run/libvirt/qemu/$d.pid" 2>/dev/null; echo; done)
  [ -n "${pids//[[:space:]]/}" ] || return 0
  ticks() { for p in $pids; do awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null; done | awk '{ t += $1 } END { print t + 0 }'; }
  while :; do
    local t0 t1
    t0=$(ticks)
    sleep 5
    t1=$(ticks)
    busy=$(((t1 - t0) * 100 / (5 * $(getconf CLK_TCK))))
    [ "$busy" -lt 10 ] && { log "guests_idle: $1-* guests use ${busy} % of a core"; return 0; }
    [ $SECONDS -ge $deadline ] && { log "guests_idle: $1-* guests still use ${busy} % of a core after 180 s; measuring anyway"; return 0; }
  done
}

# median_run KEY N: KEY.txt becomes the run among KEY-1 ... KEY-N whose wall time is the median.
median_run() {
  local r w best
  best=$(for ((r = 1; r <= $2; r++)); do w=$(get "$1-$r" wall_s); [ -n "$w" ] && echo "$w $r"; done | sort -g |
    awk '{ v[NR] = $2 } END { if (NR) print v[int((NR + 1) / 2)] }')
  [ -n "$best" ] && cp "$res/$1-$best.txt" "$res/$1.txt"
  return 0
}

# ---------------------------------------------------------------- workload A
# running_tf COUNT: workload A's configuration, COUNT quickstart-shaped guests.
running_tf() {
  cat <<EOF
resource "libvirt_volume" "base" {
  count       = $1
  name        = "\${local.prefix}-\${count.index}-base.qcow2"
  pool        = local.pool
  source_file = "$BENCH_IMAGE"
}
resource "libvirt_volume" "root" {
  count          = $1
  name           = "\${local.prefix}-\${count.index}-root.qcow2"
  pool           = local.pool
  backing_volume = libvirt_volume.base[count.index].id
}
resource "libvirt_cloudinit_iso" "seed" {
  count       = $1
  name        = "\${local.prefix}-\${count.index}-seed.iso"
  pool        = local.pool
  instance_id = "\${local.prefix}-\${count.index}"
  hostname    = "\${local.prefix}-\${count.index}"
  user_data   = "#cloud-config\n{}\n"
}
resource "libvirt_domain" "vm" {
  count        = $1
  name         = "\${local.prefix}-\${count.index}"
  vcpu         = 1
  memory_mib   = 256
  cloudinit_id = libvirt_cloudinit_iso.seed[count.index].id
  disk {
    volume_id = libvirt_volume.root[count.index].id
  }
  network_interface {
    network = local.network
  }
}
EOF
}

workload_a() {
  local cli d rc r
  for cli in $CLIS; do
    if [ "$cli" = virsh ]; then
      must A-virsh-apply bash "$work/virsh/running-apply.sh"
      settle bench-virsh
      must A-virsh-destroy bash "$work/virsh/running-destroy.sh"
      continue
    fi
    d=$(tfdir "$cli" running)
    running_tf "$N_RUNNING" >"$d/main.tf"
    must "A-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
    settle "bench-$cli"
    guests_idle "bench-$cli"
    for r in 1 2 3; do
      rc=0
      measure "A-$cli-plan-$r" "${cli_bin[$cli]}" -chdir="$d" plan -input=false -no-color -detailed-exitcode || rc=$?
      [ $rc = 0 ] || { log "A-$cli-plan: exit $rc (2 = the plan is not empty)"; echo "$rc" >"$res/A-$cli-plan.drift"; }
    done
    median_run "A-$cli-plan" 3
    must "A-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
  done
}

# ---------------------------------------------------------------- workload B
workload_b() {
  local cli d
  for cli in $CLIS; do
    if [ "$cli" = virsh ]; then
      must B-virsh-apply bash "$work/virsh/stopped-apply.sh"
      must B-virsh-destroy bash "$work/virsh/stopped-destroy.sh"
      continue
    fi
    d=$(tfdir "$cli" stopped)
    stopped_domains_tf "$N_STOPPED" s >"$d/main.tf"
    must "B-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
    no_change_plan "B-$cli-plan" "$cli" "$d"
    no_change_plan "B-$cli-planr" "$cli" "$d" -refresh=false
    floor_holding_ours "$cli" "$d"
    must "B-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
  done
}

# ---------------------------------------------------------------- workload C
workload_c() {
  local cli d r k
  # Uploads are bound by the host's disk and vary from run to run (dirty page writeback):
  # UPLOAD_ROUNDS rounds, the ways interleaved in each, and the median is reported.
  for ((r = 1; r <= UPLOAD_ROUNDS; r++)); do
    for cli in $CLIS; do
      if [ "$cli" = virsh ]; then
        sync # every upload starts with no dirty pages of an earlier write to flush
        must "C-virsh-upload-$r" bash "$work/virsh/upload.sh"
        virsh vol-delete --pool "$POOL" bench-virsh-upload.raw >/dev/null
        continue
      fi
      d=$(tfdir "$cli" upload)
      cat >"$d/main.tf" <<EOF
resource "libvirt_volume" "upload" {
  name        = "\${local.prefix}-upload.raw"
  pool        = local.pool
  format      = "raw"
  source_file = "$BENCH_UPLOAD_FILE"
}
EOF
      sync
      must "C-$cli-upload-$r" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      must "C-$cli-destroy-$r" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
      # The same apply without the upload (an empty 1 MiB volume): what the CLI's start-up,
      # the provider's start and the plan cost, to take off for the upload alone.
      d=$(tfdir "$cli" empty)
      cat >"$d/main.tf" <<EOF
resource "libvirt_volume" "empty" {
  name           = "\${local.prefix}-empty.raw"
  pool           = local.pool
  format         = "raw"
  capacity_bytes = 1048576
}
EOF
      must "C-$cli-empty-$r" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      must "C-$cli-empty-destroy-$r" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
      awk -v a="$(get "C-$cli-upload-$r" wall_s)" -v b="$(get "C-$cli-empty-$r" wall_s)" \
        'BEGIN { printf "wall_s=%.3f\n", a - b }' >"$res/C-$cli-net-$r.txt"
    done
  done
  for cli in $CLIS; do
    echo "wall_s=$(median "C-$cli-upload" wall_s)" >"$res/C-$cli-upload.txt"
    [ "$cli" = virsh ] && continue
    echo "wall_s=$(median "C-$cli-empty" wall_s)" >"$res/C-$cli-empty.txt"
    echo "wall_s=$(median "C-$cli-net" wall_s)" >"$res/C-$cli-net.txt"
  done
}

# median KEY FIELD: the median of FIELD over $res/KEY-1.txt ... KEY-<UPLOAD_ROUNDS>.txt.
median() {
  local r
  for ((r = 1; r <= UPLOAD_ROUNDS; r++)); do get "$1-$r" "$2"; done | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

write_virsh_scripts
started=$(date -u +%Y-%m-%dT%H:%MZ)
for w in $WORKLOADS; do
  case $w in
    A) workload_a ;;
    B) workload_b ;;
    C) workload_c ;;
    D) workload_d ;;
    E) workload_e ;;
    F) workload_f ;;
    S) workload_s ;;
    G) workload_g ;;
    *) die "unknown workload $w (A to G, S)" ;;
  esac
done

# ---------------------------------------------------------------- the table
f2() { [ -n "$1" ] && awk -v v="$1" 'BEGIN { printf "%.2f", v }' || echo "–"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" != – ] && [ "$2" != – ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }' || echo "–"; }
cpu() { local u s; u=$(get "$1" user_s) s=$(get "$1" sys_s); [ -n "$u" ] && awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }' || echo "–"; }
wall() { f2 "$(get "$1" wall_s)"; }
per() { local w; w=$(get "$1" wall_s); [ -n "$w" ] && awk -v w="$w" -v n="$2" 'BEGIN { printf "%.0f", w * 1000 / n }' || echo "–"; }
mibs() { local w; w=$(get "$1" wall_s); [ -n "$w" ] && awk -v w="$w" -v m="$UPLOAD_MIB" 'BEGIN { printf "%.0f", m / w }' || echo "–"; }
rss() { local k; k=$(get "$1" rss_peak_kib); [ -n "$k" ] && [ "$k" != 0 ] && awk -v k="$k" 'BEGIN { printf "%.0f", k / 1024 }' || echo "–"; }
drift() { [ -f "$res/$1.drift" ] && echo " (not empty!)" || true; }
# verdict VALUE OP LIMIT: PASS / MISS (– when not measured)
verdict() { [ "$1" = – ] || [ -z "$1" ] && { echo "–"; return; }; awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { ok = (op == "<=") ? v <= l : (op == "<") ? v < l : v >= l; print ok ? "PASS" : "MISS" }'; }
col() { # col FUNC KEY-PATTERN: one cell per CLI column (virsh, terraform, tofu)
  local fn=$1 pat=$2 c out=""
  for c in virsh terraform tofu; do out+=" $($fn "${pat//@/$c}" "${@:3}") |"; done
  echo "$out"
}

host_cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cores=$(nproc)
{
  echo "# make bench — results"
  echo
  echo "Run $started on $(hostname): $cores cores ($host_cpu), $(free -g | awk '/^Mem:/ { print $2 }') GiB RAM,"
  echo "domain type $dtype, libvirt $(virsh version 2>/dev/null | sed -n 's/.*Running against daemon: *//p;s/.*Using library: libvirt //p' | head -1),"
  echo "$("$BENCH_TERRAFORM" version 2>/dev/null | head -1 || true), $([ -n "$BENCH_TOFU" ] && "$BENCH_TOFU" version 2>/dev/null | head -1 || true),"
  echo "provider $(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev). Scale $scale: A = $N_RUNNING running guests ($((N_RUNNING * 4)) resources), B = $N_STOPPED stopped domains, C = $UPLOAD_MIB MiB, D = $N_LARGE stopped domains, E = $N_HOSTS hosts × $N_PER_HOST, G = $N_GUARD."
  echo
  echo "| workload | measure | virsh script | Terraform | OpenTofu | target | Terraform | OpenTofu |"
  echo "|---|---|--:|--:|--:|---|---|---|"
  a_v=$(get A-virsh-apply wall_s)
  a_t=$(ratio "$a_v" "$(get A-terraform-apply wall_s)")
  a_o=$(ratio "$a_v" "$(get A-tofu-apply wall_s)")
  echo "| A: $N_RUNNING running guests | apply, wall s |$(col wall A-@-apply) virsh ÷ CLI ≥ 1.0 (now ${a_t} / ${a_o}) | $(verdict "$a_t" ">=" 1) | $(verdict "$a_o" ">=" 1) |"
  echo "| | apply, client CPU s (user+sys) |$(col cpu A-@-apply) | | |"
  p_t=$(get A-terraform-plan wall_s) p_o=$(get A-tofu-plan wall_s)
  echo "| | no-change plan, wall s ($((N_RUNNING * 4)) resources) | – | $(wall A-terraform-plan)$(drift A-terraform-plan) | $(wall A-tofu-plan)$(drift A-tofu-plan) | ≤ 0.6 s | $(verdict "$p_t" "<=" 0.6) | $(verdict "$p_o" "<=" 0.6) |"
  echo "| | destroy, wall s |$(col wall A-@-destroy) | | |"
  echo "| B: $N_STOPPED stopped domains | apply, wall s |$(col wall B-@-apply) | | |"
  echo "| | apply, ms per domain |$(col per B-@-apply "$N_STOPPED") | | |"
  echo "| | apply, client CPU s (user+sys) |$(col cpu B-@-apply) | | |"
  echo "| | no-change plan, wall s | – | $(wall B-terraform-plan)$(drift B-terraform-plan) | $(wall B-tofu-plan)$(drift B-tofu-plan) | see B vs floor | | |"
  echo "| | no-change plan, ms per domain | – | $(per B-terraform-plan "$N_STOPPED") | $(per B-tofu-plan "$N_STOPPED") | | | |"
  echo "| | destroy, wall s |$(col wall B-@-destroy) | | |"
  echo "| | destroy, ms per domain |$(col per B-@-destroy "$N_STOPPED") | | |"
  r_t=$(rss B-terraform-apply) r_o=$(rss B-tofu-apply)
  echo "| | provider peak RSS, MiB (apply) | – | $r_t | $r_o | ≤ 150 MiB | $(verdict "$r_t" "<=" 150) | $(verdict "$r_o" "<=" 150) |"
  c_v=$(mibs C-virsh-upload)
  c_t=$(ratio "$(mibs C-terraform-upload)" "$c_v") c_o=$(ratio "$(mibs C-tofu-upload)" "$c_v")
  echo "| C: upload $UPLOAD_MIB MiB (median of $UPLOAD_ROUNDS) | wall s |$(col wall C-@-upload) | | |"
  echo "| | MiB/s, whole command (apply: CLI start, plan, upload) |$(col mibs C-@-upload) CLI ÷ virsh ≥ 0.9 (now ${c_t} / ${c_o}) | $(verdict "$c_t" ">=" 0.9) | $(verdict "$c_o" ">=" 0.9) |"
  echo "| | the same apply of an empty volume, wall s | – | $(wall C-terraform-empty) | $(wall C-tofu-empty) | | | |"
  s_t=$(ratio "$(mibs C-terraform-net)" "$c_v") s_o=$(ratio "$(mibs C-tofu-net)" "$c_v")
  echo "| | MiB/s, the upload alone (apply − empty apply) | – | $(mibs C-terraform-net) | $(mibs C-tofu-net) | upload ÷ virsh ≥ 0.9 (now ${s_t} / ${s_o}) | $(verdict "$s_t" ">=" 0.9) | $(verdict "$s_o" ">=" 0.9) |"
  scale_rows
  schema_floor_rows
  echo
  echo "Wall: from starting the command to its exit (CLI start-up, provider start, plan and apply"
  echo "included). CPU: user+sys of the command and everything it waited for (terraform/tofu and the"
  echo "provider plugin; bash, virsh and genisoimage for the script), not libvirtd's or QEMU's."
  echo "Nobody waits for an IP address in A: each way ends once the domains are started. The plans"
  echo "refresh every resource (the default) after the guests hold a DHCP lease."
  echo "S, the schema floor: the same configurations against tools/bench/floor, a provider with exactly"
  echo "this provider's schema that does nothing (plan = proposal, apply = plan, read = state; its state"
  echo "holds null for every computed attribute but id). Provider CPU is sampled from /proc every 20 ms:"
  echo "up to one interval per provider process (a few per command) is counted as the CLI's."
} >"$OUT/results.md"
cat "$OUT/results.md"
log "written to $OUT/results.md (raw numbers in $res, logs in $logs)"
