# tools/bench/schema_floor.sh — sourced by bench.sh: workload S, the schema's own floor.
#   S  the same configurations as A, B and D (those of them the run has), under both CLIs,
#      against tools/bench/floor: a protocol-6 provider with exactly this provider's schema
#      that does nothing (plan = the proposal, apply = the plan, read = the state). It is
#      served under the same address through a second CLI configuration ($work/floor.tfrc,
#      dev_overrides to $OUT/floor/terraform-provider-libvirt), so every .tf is the same.
#      apply, no-change plan (and -refresh=false, and destroy, for B and D): what the CLI
#      costs for this schema and these resources with a provider that costs (almost)
#      nothing. The table puts our CLI CPU and provider CPU per domain beside the floor's.
#      Nothing is made in libvirt: the floor's state lives in its working directories only.
#      With G: the guard's every-family domains (and their volumes alone, and no resource)
#      against the floor too, so the table shows what every family ÷ plain is for a
#      provider that does nothing: the part of that ratio that is the CLI's.
#      With B: the floor also plans B holding our own state (workload_b copies it before
#      its destroy): the CLI's CPU for exactly the values our state holds, apart from
#      anything else our provider does.

has_workload() { [[ " $WORKLOADS " == *" $1 "* ]]; }

# floored CMD...: run CMD (measure, must, no_change_plan) with the floor's CLI configuration.
floored() {
  local keep=$TF_CLI_CONFIG_FILE rc=0
  export TF_CLI_CONFIG_FILE=$work/floor.tfrc
  "$@" || rc=$?
  export TF_CLI_CONFIG_FILE=$keep
  return $rc
}

write_floor_tfrc() {
  cat >"$work/floor.tfrc" <<TFRC
provider_installation {
  dev_overrides {
    "kvmforge/libvirt" = "$OUT/floor"
  }
  direct {}
}
TFRC
}

workload_s() {
  local cli d
  [ -x "$OUT/floor/terraform-provider-libvirt" ] || die "no schema floor in $OUT/floor (bench.sh builds it when S is asked for)"
  for cli in $CLIS; do
    [ "$cli" = virsh ] && continue
    if has_workload A; then
      d=$(tfdir "$cli" floor-running)
      running_tf "$N_RUNNING" >"$d/main.tf"
      floored must "S-A-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      floored no_change_plan "S-A-$cli-plan" "$cli" "$d"
    fi
    if has_workload B; then
      d=$(tfdir "$cli" floor-stopped)
      stopped_domains_tf "$N_STOPPED" s >"$d/main.tf"
      floored must "S-B-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      floored no_change_plan "S-B-$cli-plan" "$cli" "$d"
      floored no_change_plan "S-B-$cli-planr" "$cli" "$d" -refresh=false
      floored must "S-B-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
    fi
    if has_workload D; then
      d=$(tfdir "$cli" floor-large)
      stopped_domains_tf "$N_LARGE" l >"$d/main.tf"
      floored must "S-D-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      floored no_change_plan "S-D-$cli-plan" "$cli" "$d"
      floored no_change_plan "S-D-$cli-planr" "$cli" "$d" -refresh=false
      floored must "S-D-$cli-destroy" "${cli_bin[$cli]}" -chdir="$d" destroy -input=false -no-color -auto-approve
    fi
    if has_workload G; then
      d=$(tfdir "$cli" floor-guard)
      sed "s/@N@/$N_GUARD/" "$repo/tools/bench/every_family.tf" >"$d/main.tf"
      floored must "S-G-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      floored no_change_plan "S-G-$cli-plan" "$cli" "$d"
      d=$(tfdir "$cli" floor-guard-volumes)
      sed "s/@N@/$N_GUARD/; /^resource \"libvirt_domain\"/,\$d" "$repo/tools/bench/every_family.tf" >"$d/main.tf"
      floored must "S-GV-$cli-apply" "${cli_bin[$cli]}" -chdir="$d" apply -input=false -no-color -auto-approve
      floored no_change_plan "S-GV-$cli-plan" "$cli" "$d"
      d=$(tfdir "$cli" floor-no-resource)
      floored no_change_plan "S-Z-$cli-plan" "$cli" "$d"
    fi
  done
}

# floor_holding_ours CLI DIR: the floor's no-change plan of B's configuration holding the
# state our provider wrote in DIR (key S-Bo-CLI-plan); workload_b calls it before its destroy.
floor_holding_ours() {
  local d
  has_workload S || return 0
  d=$(tfdir "$1" floor-holding-ours)
  cp "$2/main.tf" "$2/terraform.tfstate" "$d/"
  floored no_change_plan "S-Bo-$1-plan" "$1" "$d"
}

# ---------------------------------------------------------------- rows of the table
# cpu_ms KEY N cli|prov: CPU ms per domain of one command: the CLI's (user+sys of the whole
# command less the provider processes') or the provider processes' (as sampled).
cpu_ms() {
  local u s p
  u=$(get "$1" user_s) s=$(get "$1" sys_s) p=$(get "$1" watched_cpu_s)
  if [ -z "$u" ] || [ -z "$p" ]; then
    echo "–"
    return
  fi
  awk -v u="$u" -v s="$s" -v p="$p" -v n="$2" -v w="$3" 'BEGIN { printf "%.1f", ((w == "cli") ? u + s - p : p) * 1000 / n }'
}
# pair OURS-KEY FLOOR-KEY N cli|prov|wall: "ours / floor" for one CLI.
pair() {
  if [ "$4" = wall ]; then
    echo "$(wall "$1") / $(wall "$2")"
  else
    echo "$(cpu_ms "$1" "$3" "$4") / $(cpu_ms "$2" "$3" "$4")"
  fi
}
# floor_rows W N WHAT TARGET-CLI TARGET-PROV: the rows of workload W's no-change plan (keys
# W-<cli>-plan, S-W-<cli>-plan) against the floor; a target is "" (ratio only) or a limit.
floor_rows() {
  local w=$1 n=$2 what=$3 tc=$4 tp=$5 kind lim label cell vt vo rt ro
  echo "| S: schema floor, $what | no-change plan, wall s: ours / floor | – | $(pair "$w-terraform-plan" "S-$w-terraform-plan" "$n" wall) | $(pair "$w-tofu-plan" "S-$w-tofu-plan" "$n" wall) | | | |"
  for kind in cli prov; do
    if [ $kind = cli ]; then lim=$tc label="CLI CPU"; else lim=$tp label="provider CPU"; fi
    rt=$(ratio "$(cpu_ms "$w-terraform-plan" "$n" $kind)" "$(cpu_ms "S-$w-terraform-plan" "$n" $kind)")
    ro=$(ratio "$(cpu_ms "$w-tofu-plan" "$n" $kind)" "$(cpu_ms "S-$w-tofu-plan" "$n" $kind)")
    if [ -n "$lim" ]; then
      cell="≤ $lim × floor (now $rt / $ro)" vt=$(verdict "$rt" "<=" "$lim") vo=$(verdict "$ro" "<=" "$lim")
    else
      cell="÷ floor: $rt / $ro" vt="" vo=""
    fi
    echo "| | $label, ms per ${what##* }: ours / floor | – | $(pair "$w-terraform-plan" "S-$w-terraform-plan" "$n" $kind) | $(pair "$w-tofu-plan" "S-$w-tofu-plan" "$n" $kind) | $cell | $vt | $vo |"
  done
}

schema_floor_rows() {
  local pt po
  # A: per guest (4 resources each); ratios only.
  floor_rows A "$N_RUNNING" "$N_RUNNING running guests (A), per guest" "" ""
  # B: the targets.
  floor_rows B "$N_STOPPED" "$N_STOPPED stopped domains (B), per domain" 1.15 3
  pt=$(cpu_ms B-terraform-plan "$N_STOPPED" prov) po=$(cpu_ms B-tofu-plan "$N_STOPPED" prov)
  echo "| | provider CPU, ms per domain (ours) | – | $pt | $po | ≤ 8 ms | $(verdict "$pt" "<=" 8) | $(verdict "$po" "<=" 8) |"
  echo "| | plan -refresh=false, CPU ms per domain, CLI: ours / floor | – | $(pair B-terraform-planr S-B-terraform-planr "$N_STOPPED" cli) | $(pair B-tofu-planr S-B-tofu-planr "$N_STOPPED" cli) | | | |"
  echo "| | plan -refresh=false, CPU ms per domain, provider: ours / floor | – | $(pair B-terraform-planr S-B-terraform-planr "$N_STOPPED" prov) | $(pair B-tofu-planr S-B-tofu-planr "$N_STOPPED" prov) | | | |"
  echo "| | CLI CPU, ms per domain: ours / the floor holding our state | – | $(pair B-terraform-plan S-Bo-terraform-plan "$N_STOPPED" cli) | $(pair B-tofu-plan S-Bo-tofu-plan "$N_STOPPED" cli) | ÷: $(ratio "$(cpu_ms B-terraform-plan "$N_STOPPED" cli)" "$(cpu_ms S-Bo-terraform-plan "$N_STOPPED" cli)") / $(ratio "$(cpu_ms B-tofu-plan "$N_STOPPED" cli)" "$(cpu_ms S-Bo-tofu-plan "$N_STOPPED" cli)") | | |"
  echo "| | apply, CPU ms per domain, CLI: ours / floor | – | $(pair B-terraform-apply S-B-terraform-apply "$N_STOPPED" cli) | $(pair B-tofu-apply S-B-tofu-apply "$N_STOPPED" cli) | | | |"
  echo "| | apply, CPU ms per domain, provider: ours / floor | – | $(pair B-terraform-apply S-B-terraform-apply "$N_STOPPED" prov) | $(pair B-tofu-apply S-B-tofu-apply "$N_STOPPED" prov) | | | |"
  # D: ratios only (its own targets are in D's rows).
  if has_workload D; then
    floor_rows D "$N_LARGE" "$N_LARGE stopped domains (D), per domain" "" ""
    echo "| | apply, CPU ms per domain, provider: ours / floor | – | $(pair D-terraform-apply S-D-terraform-apply "$N_LARGE" prov) | $(pair D-tofu-apply S-D-tofu-apply "$N_LARGE" prov) | | | |"
    echo "| | destroy, wall s: ours / floor | – | $(pair D-terraform-destroy S-D-terraform-destroy "$N_LARGE" wall) | $(pair D-tofu-destroy S-D-tofu-destroy "$N_LARGE" wall) | | | |"
  fi
}
