# tools/bench/scale.sh — sourced by bench.sh: the workloads of "speed at scale" and the
# floor every plan is compared with.
#   F  Terraform's floor: N terraform_data resources (N = the resources of A, B's and D's
#      domain counts): no-change plan and `plan -refresh=false`, per CLI. The targets are
#      ratios to it, so that a faster or slower machine does not change the verdict.
#   D  N_LARGE (1000) stopped domains: apply, no-change plan, -refresh=false plan, destroy,
#      provider peak RSS.
#   E  a fleet: N_HOSTS (10) provider aliases × N_PER_HOST (100) stopped domains, each alias
#      its own provider process and connection pool, on libvirt's test driver through the
#      daemon (test:///default; a `virsh` kept connected holds the driver's state between
#      commands: the driver forgets it when its last connection closes, and a test:///<file>
#      URI starts from the file on every connection, so one cannot hold state at all).
#   G  the guard: N_GUARD (10) stopped domains that use every device family, no-change plan
#      per domain, next to A's quickstart-shaped guests and B's plain domains. Per domain is
#      CPU (CLI + provider) less what is not the domains: for G the same plan of its data
#      volumes alone (GV), for B a plan of no resource (Z). Target: every family ≤ 1.2 × plain.
N_LARGE=$(scaled 1000)
N_HOSTS=${BENCH_FLEET_HOSTS:-10}
N_PER_HOST=$(scaled 100)
N_GUARD=$(scaled 10)
# What the guard compares with: no-change plan ÷ floor, measured when the guard was made.
# shellcheck source=tools/bench/baseline.env
. "$repo/tools/bench/baseline.env"

floor_dir() { # floor_dir CLI N: terraform_data only, no provider
  local d=$work/$1/floor-$2
  mkdir -p "$d"
  printf 'resource "terraform_data" "r" {\n  count = %s\n  input = count.index\n}\n' "$2" >"$d/main.tf"
  echo "$d"
}

workload_f() {
  local cli n d
  for cli in $CLIS; do
    [ "$cli" = virsh ] && continue
    for n in $((N_RUNNING * 4)) "$N_STOPPED" "$N_LARGE"; do
      d=$(floor_dir "$cli" "$n")
      must "F-$cli-apply-$n" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      must "F-$cli-plan-$n" "${cli_bin[$cli]}" -chdir="$d" plan -input=false -no-color -detailed-exitcode
      must "F-$cli-planr-$n" "${cli_bin[$cli]}" -chdir="$d" plan -refresh=false -input=false -no-color -detailed-exitcode
    done
  done
}

# no_change_plan KEY CLI DIR [ARGS]: measure a plan that must be empty; a plan that is not
# is marked in the table.
no_change_plan() {
  local key=$1 cli=$2 d=$3 rc=0
  shift 3
  measure "$key" "${cli_bin[$cli]}" -chdir="$d" plan "$@" -input=false -no-color -detailed-exitcode || rc=$?
  [ $rc = 0 ] || { log "$key: exit $rc (2 = the plan is not empty)"; echo "$rc" >"$res/$key.drift"; }
}

stopped_domains_tf() { # stopped_domains_tf COUNT NAME-INFIX
  cat <<EOF
resource "libvirt_domain" "vm" {
  count      = $1
  name       = "\${local.prefix}-$2\${count.index}"
  vcpu       = 1
  memory_mib = 256
  running    = false
  network_interface {
    network = local.network
  }
}
EOF
}

workload_d() {
  local cli d
  for cli in $CLIS; do
    [ "$cli" = virsh ] && continue
    d=$(tfdir "$cli" large)
    stopped_domains_tf "$N_LARGE" l >"$d/main.tf"
    must "D-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
    no_change_plan "D-$cli-plan" "$cli" "$d"
    no_change_plan "D-$cli-planr" "$cli" "$d" -refresh=false
    must "D-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
  done
}

workload_e() {
  local cli d k
  # The test driver's state lives while a connection is open: this one, until the end
  # (on_exit stops it too, after a failure).
  setsid bash -c 'sleep infinity | virsh -q -c test+unix:///default >/dev/null 2>&1' &
  fleet_keeper=$!
  for cli in $CLIS; do
    [ "$cli" = virsh ] && continue
    d=$(tfdir "$cli" fleet)
    for ((k = 0; k < N_HOSTS; k++)); do
      cat <<EOF
provider "libvirt" {
  alias = "h$k"
  uri   = "test:///default"
}
resource "libvirt_domain" "h$k" {
  provider   = libvirt.h$k
  count      = $N_PER_HOST
  name       = "\${local.prefix}-h$k-\${count.index}"
  type       = "test"
  vcpu       = 1
  memory_mib = 256
  running    = false
  network_interface {
    bridge = "virbr0"
  }
}
EOF
    done >"$d/main.tf"
    must "E-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
    no_change_plan "E-$cli-plan" "$cli" "$d"
    must "E-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
  done
  stop_fleet_keeper
}

fleet_keeper=
# stop_fleet_keeper ends the connection that holds the test driver's state, and with it
# every fleet domain. Never fails.
stop_fleet_keeper() {
  [ -n "$fleet_keeper" ] || return 0
  kill -- "-$fleet_keeper" 2>/dev/null || true # its own process group (setsid)
  fleet_keeper=
}

workload_g() {
  local cli d
  for cli in $CLIS; do
    [ "$cli" = virsh ] && continue
    d=$(tfdir "$cli" guard)
    sed "s/@N@/$N_GUARD/" "$repo/tools/bench/every_family.tf" >"$d/main.tf"
    must "G-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
    no_change_plan "G-$cli-plan" "$cli" "$d"
    must "G-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
    # What G's plan costs besides the domains: the same data volumes alone.
    d=$(tfdir "$cli" guard-volumes)
    sed "s/@N@/$N_GUARD/; /^resource \"libvirt_domain\"/,\$d" "$repo/tools/bench/every_family.tf" >"$d/main.tf"
    must "GV-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
    no_change_plan "GV-$cli-plan" "$cli" "$d"
    must "GV-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
    # And B's: a plan of no resource at all (the CLI's and the provider's start).
    d=$(tfdir "$cli" no-resource)
    no_change_plan "Z-$cli-plan" "$cli" "$d"
  done
}

# ---------------------------------------------------------------- rows of the table
# net_cpu_ms KEY BASE-KEY N: (CPU of KEY − CPU of BASE-KEY) ÷ N, in ms (user+sys of the
# whole commands: CLI and provider).
net_cpu_ms() {
  local a b
  a=$(cpu "$1") b=$(cpu "$2")
  if [ "$a" = – ] || [ "$b" = – ]; then
    echo "–"
    return
  fi
  awk -v a="$a" -v b="$b" -v n="$3" 'BEGIN { printf "%.1f", (a - b) * 1000 / n }'
}
# vsfloor KEY N CLI [planr]: the plan's wall time ÷ the floor's of N resources.
vsfloor() { ratio "$(get "$1" wall_s)" "$(get "F-$3-${4:-plan}-$2" wall_s)"; }
ratio_cells() { # ratio_cells KEY-PATTERN N [planr]: "terraform | tofu" ratios
  echo "$(vsfloor "${1//@/terraform}" "$2" terraform "${3:-}") / $(vsfloor "${1//@/tofu}" "$2" tofu "${3:-}")"
}
ratio_verdicts() { # ratio_verdicts KEY-PATTERN N LIMIT [planr]
  echo "$(verdict "$(vsfloor "${1//@/terraform}" "$2" terraform "${4:-}")" "<=" "$3") | $(verdict "$(vsfloor "${1//@/tofu}" "$2" tofu "${4:-}")" "<=" "$3")"
}
# cpu_split KEY: "CLI + provider" CPU seconds of one command (the provider's as sampled).
cpu_split() {
  local u s p
  u=$(get "$1" user_s) s=$(get "$1" sys_s) p=$(get "$1" watched_cpu_s)
  [ -n "$u" ] && [ -n "$p" ] && awk -v u="$u" -v s="$s" -v p="$p" 'BEGIN { printf "%.2f + %.2f", u + s - p, p }' || echo "–"
}
scale_rows() {
  local fa=$((N_RUNNING * 4))
  echo "| F: Terraform's floor | no-change plan, $fa terraform_data, wall s | – | $(wall F-terraform-plan-$fa) | $(wall F-tofu-plan-$fa) | | | |"
  echo "| | no-change plan, $N_STOPPED terraform_data, wall s | – | $(wall F-terraform-plan-$N_STOPPED) | $(wall F-tofu-plan-$N_STOPPED) | | | |"
  echo "| | plan -refresh=false, $N_STOPPED terraform_data, wall s | – | $(wall F-terraform-planr-$N_STOPPED) | $(wall F-tofu-planr-$N_STOPPED) | | | |"
  echo "| | no-change plan, $N_LARGE terraform_data, wall s | – | $(wall F-terraform-plan-$N_LARGE) | $(wall F-tofu-plan-$N_LARGE) | | | |"
  echo "| A vs floor | no-change plan ÷ floor of $fa | – | $(vsfloor A-terraform-plan $fa terraform) | $(vsfloor A-tofu-plan $fa tofu) | ≤ 3 | $(ratio_verdicts A-@-plan $fa 3) |"
  echo "| B vs floor | no-change plan ÷ floor of $N_STOPPED | – | $(vsfloor B-terraform-plan "$N_STOPPED" terraform) | $(vsfloor B-tofu-plan "$N_STOPPED" tofu) | ≤ 3 | $(ratio_verdicts B-@-plan "$N_STOPPED" 3) |"
  echo "| | no-change plan, CPU s: CLI + provider | – | $(cpu_split B-terraform-plan) | $(cpu_split B-tofu-plan) | | | |"
  echo "| | plan -refresh=false, wall s | – | $(wall B-terraform-planr)$(drift B-terraform-planr) | $(wall B-tofu-planr)$(drift B-tofu-planr) | | | |"
  echo "| | plan -refresh=false ÷ floor's | – | $(vsfloor B-terraform-planr "$N_STOPPED" terraform planr) | $(vsfloor B-tofu-planr "$N_STOPPED" tofu planr) | ≤ 2 | $(ratio_verdicts B-@-planr "$N_STOPPED" 2 planr) |"
  local dt=$(get D-terraform-plan wall_s) do=$(get D-tofu-plan wall_s) at=$(get D-terraform-apply wall_s) ao=$(get D-tofu-apply wall_s)
  local pt=$(cpu_ms D-terraform-apply "$N_LARGE" prov) po=$(cpu_ms D-tofu-apply "$N_LARGE" prov)
  local xt=$(get D-terraform-destroy wall_s) xo=$(get D-tofu-destroy wall_s) xf
  local xr=$(ratio "$xt" "$xo")
  xf=$(ratio "$(get S-D-terraform-destroy wall_s)" "$(get S-D-tofu-destroy wall_s)")
  echo "| D: $N_LARGE stopped domains | apply, wall s | – | $(wall D-terraform-apply) | $(wall D-tofu-apply) | < 25 s | $(verdict "$at" "<" 25) | $(verdict "$ao" "<" 25) |"
  echo "| | apply, ms per domain | – | $(per D-terraform-apply "$N_LARGE") | $(per D-tofu-apply "$N_LARGE") | | | |"
  echo "| | apply, CPU s: CLI + provider | – | $(cpu_split D-terraform-apply) | $(cpu_split D-tofu-apply) | | | |"
  echo "| | apply, provider CPU ms per domain created | – | $pt | $po | ≤ 40 ms | $(verdict "$pt" "<=" 40) | $(verdict "$po" "<=" 40) |"
  echo "| | no-change plan, wall s | – | $(wall D-terraform-plan)$(drift D-terraform-plan) | $(wall D-tofu-plan)$(drift D-tofu-plan) | ≤ 12 s | $(verdict "$dt" "<=" 12) | $(verdict "$do" "<=" 12) |"
  echo "| | no-change plan, CPU s: CLI + provider | – | $(cpu_split D-terraform-plan) | $(cpu_split D-tofu-plan) | | | |"
  echo "| | no-change plan ÷ floor of $N_LARGE | – | $(vsfloor D-terraform-plan "$N_LARGE" terraform) | $(vsfloor D-tofu-plan "$N_LARGE" tofu) | | | |"
  echo "| | plan -refresh=false, wall s | – | $(wall D-terraform-planr)$(drift D-terraform-planr) | $(wall D-tofu-planr)$(drift D-tofu-planr) | | | |"
  echo "| | destroy, wall s | – | $(wall D-terraform-destroy) | $(wall D-tofu-destroy) | Terraform ≤ 1.5 × OpenTofu (now $xr; schema floor $xf) | $(verdict "$xr" "<=" 1.5) | |"
  local rt=$(rss D-terraform-apply) ro=$(rss D-tofu-apply)
  echo "| | provider peak RSS, MiB (apply) | – | $rt | $ro | ≤ 150 MiB | $(verdict "$rt" "<=" 150) | $(verdict "$ro" "<=" 150) |"
  local et=$(get E-terraform-plan wall_s) eo=$(get E-tofu-plan wall_s)
  echo "| E: fleet $N_HOSTS hosts × $N_PER_HOST | apply, wall s | – | $(wall E-terraform-apply) | $(wall E-tofu-apply) | | | |"
  echo "| | no-change plan, wall s | – | $(wall E-terraform-plan)$(drift E-terraform-plan) | $(wall E-tofu-plan)$(drift E-tofu-plan) | < 2.5 s | $(verdict "$et" "<" 2.5) | $(verdict "$eo" "<" 2.5) |"
  local gt go
  gt=$(awk -v b="$GUARD_B_PLAN_RATIO_TERRAFORM" 'BEGIN { printf "%.2f", b * 1.2 }')
  go=$(awk -v b="$GUARD_B_PLAN_RATIO_TOFU" 'BEGIN { printf "%.2f", b * 1.2 }')
  echo "| G: guard (no-change plan) | quickstart guest (A), ms per guest | – | $(per A-terraform-plan "$N_RUNNING") | $(per A-tofu-plan "$N_RUNNING") | | | |"
  echo "| | every-family domain, ms per domain ($N_GUARD) | – | $(per G-terraform-plan "$N_GUARD") | $(per G-tofu-plan "$N_GUARD") | | | |"
  local ft fo bt bo rt2 ro2
  ft=$(net_cpu_ms G-terraform-plan GV-terraform-plan "$N_GUARD") fo=$(net_cpu_ms G-tofu-plan GV-tofu-plan "$N_GUARD")
  bt=$(net_cpu_ms B-terraform-plan Z-terraform-plan "$N_STOPPED") bo=$(net_cpu_ms B-tofu-plan Z-tofu-plan "$N_STOPPED")
  rt2=$(ratio "$ft" "$bt") ro2=$(ratio "$fo" "$bo")
  echo "| | every-family domain, CPU ms per domain (CLI + provider, less its volumes' plan) | – | $ft | $fo | | | |"
  echo "| | plain domain (B), CPU ms per domain (CLI + provider, less a plan of nothing) | – | $bt | $bo | | | |"
  echo "| | every family ÷ plain, CPU per domain | – | $rt2 | $ro2 | ≤ 1.2 | $(verdict "$rt2" "<=" 1.2) | $(verdict "$ro2" "<=" 1.2) |"
  # The same ratio for the schema floor (workload S): what the CLI alone makes of it.
  local sft sfo sbt sbo
  sft=$(net_cpu_ms S-G-terraform-plan S-GV-terraform-plan "$N_GUARD") sfo=$(net_cpu_ms S-G-tofu-plan S-GV-tofu-plan "$N_GUARD")
  sbt=$(net_cpu_ms S-B-terraform-plan S-Z-terraform-plan "$N_STOPPED") sbo=$(net_cpu_ms S-B-tofu-plan S-Z-tofu-plan "$N_STOPPED")
  echo "| | the schema floor: every-family / plain, CPU ms per domain | – | $sft / $sbt | $sfo / $sbo | | | |"
  echo "| | the schema floor: every family ÷ plain | – | $(ratio "$sft" "$sbt") | $(ratio "$sfo" "$sbo") | (ours ÷ floor's: $(ratio "$rt2" "$(ratio "$sft" "$sbt")") / $(ratio "$ro2" "$(ratio "$sfo" "$sbo")")) | | |"
  echo "| | plain domain (B) ÷ floor, against $GUARD_B_PLAN_RATIO_TERRAFORM / $GUARD_B_PLAN_RATIO_TOFU at $GUARD_BASELINE_COMMIT | – | $(vsfloor B-terraform-plan "$N_STOPPED" terraform) | $(vsfloor B-tofu-plan "$N_STOPPED" tofu) | ≤ +20 % ($gt / $go) | $(verdict "$(vsfloor B-terraform-plan "$N_STOPPED" terraform)" "<=" "$gt") | $(verdict "$(vsfloor B-tofu-plan "$N_STOPPED" tofu)" "<=" "$go") |"
}
