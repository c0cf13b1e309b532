#!/usr/bin/env bash
# The main job: apply examples/quickstart with the freshly built provider against the local
# test host (tools/testhost.sh), inside its network namespace, and print the outputs.
# State is kept in the test host's state dir, so running it again is a no-op; pass
# `destroy` to tear the example down.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
eval "$("$repo/tools/testhost.sh" env)"
terraform=${TERRAFORM:-$(command -v terraform)}
action=${1:-apply}

work="$KVMFORGE_STATE/quickstart"
mkdir -p "$work"
cp "$repo"/examples/quickstart/*.tf "$work/"
# dev_overrides: Terraform uses bin/terraform-provider-libvirt instead of a registry download.
cat >"$work/dev.tfrc" <<TFRC
provider_installation {
  dev_overrides {
    "kvmforge/libvirt" = "$repo/bin"
  }
  direct {}
}
TFRC
export TF_CLI_CONFIG_FILE="$work/dev.tfrc" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
# Inputs the example may declare; undeclared TF_VAR_ variables are ignored.
export TF_VAR_uri="$LIBVIRT_TEST_URI" TF_VAR_pool="$LIBVIRT_TEST_POOL" TF_VAR_network="$LIBVIRT_TEST_NETWORK"
if image=$(ls -1 "${KVMFORGE_CACHE:-/var/cache/kvmforge}/guest-image/tiny.qcow2" 2>/dev/null); then
  export TF_VAR_image_path="$image"
fi

cd "$work"
case "$action" in
  apply)
    ip netns exec "$KVMFORGE_NETNS" "$terraform" apply -auto-approve -input=false -compact-warnings
    # A second plan must be empty: nothing libvirt filled in or rewrote shows as drift.
    if ip netns exec "$KVMFORGE_NETNS" "$terraform" plan -detailed-exitcode -input=false -compact-warnings >"$work/second-plan.txt"; then
      echo "quickstart: second plan is empty (no drift)"
    else
      cat "$work/second-plan.txt"
      echo "quickstart: the second plan is NOT empty (see above)" >&2
      exit 1
    fi
    echo "quickstart: the VM's IP address is $(ip netns exec "$KVMFORGE_NETNS" "$terraform" output -raw ip_address)"
    ;;
  destroy)
    ip netns exec "$KVMFORGE_NETNS" "$terraform" destroy -auto-approve -input=false -compact-warnings
    ;;
  *)
    echo "usage: $0 [apply|destroy]" >&2
    exit 2
    ;;
esac
