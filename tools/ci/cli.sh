#!/usr/bin/env bash
# The CLI versions the tests rely on, checked before anything runs (tools/ci/cli-versions.txt).
#
#   tools/ci/cli.sh require BIN        fail, naming the version needed, when BIN (terraform or
#                                       tofu) is older than the newest version any test needs
#   tools/ci/cli.sh require-version V   the same for a version number (a CLI still to be built)
#   tools/ci/cli.sh skip BIN [FILE...]  print the -test.skip pattern for BIN: the tests BIN is
#                                       too old for, plus the names in FILEs (one a line, #
#                                       comments), each by exact name; says on stderr what it
#                                       leaves out and why
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
versions=$here/cli-versions.txt

die() { echo "cli.sh: $*" >&2; exit 1; }

# version BIN: the CLI's version number (Terraform v1.11.4 / OpenTofu v1.12.6 → 1.11.4).
version() {
  local out
  out=$(CHECKPOINT_DISABLE=1 "$1" version 2>/dev/null) || die "$1 version failed"
  # Not the first line: OpenTofu prints CLI configuration warnings on stdout before it.
  [[ $out =~ (Terraform|OpenTofu)\ v([0-9]+\.[0-9]+\.[0-9]+) ]] || die "cannot read a version from \"$out\" ($1 version)"
  echo "${BASH_REMATCH[2]}"
}

# older A B: A < B as versions.
older() { [[ $1 != "$2" && $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1) == "$1" ]]; }

# entries: "name version reason" lines of the versions file.
entries() { grep -Ev '^[[:space:]]*(#|$)' "$versions"; }

newest() { entries | awk '{ print $2 }' | sort -V | tail -n 1; }

require_version() {
  local have=$1 what=$2 need
  need=$(newest)
  if older "$have" "$need"; then
    local who
    who=$(entries | awk -v n="$need" '$2 == n { print $1 }' | paste -sd, - | sed 's/,/, /g')
    die "$what is $have; make check needs $need or newer (for $who; tools/ci/cli-versions.txt). Put a newer CLI first on PATH or pass TERRAFORM=/path (TOFU=/path, OPENTOFU_VERSION=...). An older CLI can run the tests it supports: make testacc-terraform TERRAFORM=/path (or testacc-opentofu TOFU=/path) leaves the others out by name."
  fi
  echo "cli.sh: $what $have (make check needs >= $need)" >&2
}

case ${1:-} in
require)
  [[ -n ${2:-} ]] || die "usage: cli.sh require BIN"
  command -v "$2" >/dev/null || die "$2 not found (Terraform or OpenTofu >= $(newest) is needed)"
  name=Terraform
  [[ $(basename "$2") != *tofu* ]] || name=OpenTofu
  require_version "$(version "$2")" "$name at $(command -v "$2")"
  ;;
require-version)
  [[ -n ${2:-} ]] || die "usage: cli.sh require-version VERSION [WHAT]"
  require_version "$2" "${3:-the CLI}"
  ;;
skip)
  [[ -n ${2:-} ]] || die "usage: cli.sh skip BIN [FILE...]"
  have=$(version "$2")
  shift 2
  names=()
  while read -r name need reason; do
    if older "$have" "$need"; then
      echo "cli.sh: not run with CLI $have: $name (needs $need: $reason)" >&2
      names+=("$name")
    fi
  done < <(entries)
  for f in "$@"; do
    while read -r name; do names+=("$name"); done < <(grep -Ev '^[[:space:]]*(#|$)' "$f" | awk '{ print $1 }')
  done
  if [[ ${#names[@]} -eq 0 ]]; then
    echo '^$' # skips nothing: no test is named ""
  else
    (IFS='|'; echo "^(${names[*]})\$")
  fi
  ;;
*) die "usage: cli.sh require BIN | require-version VERSION [WHAT] | skip BIN [FILE...]" ;;
esac
