package provider

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

func (r *cloudinitISOResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = tfkit.ResourceSchema(ctx, "A cloud-init NoCloud seed: an ISO9660 image labelled `cidata` holding `user-data`, `meta-data` "+
		"and, when given, `network-config` and `vendor-data`, built in memory by the provider (nothing is written to "+
		"the local disk) and stored as a raw volume in a pool. Attach it to a domain as a read-only cdrom "+
		"(`libvirt_domain.cloudinit_id`). Any change replaces it. To keep secrets out of the state, give the contents "+
		"as write-only attributes (`user_data_wo`, `network_config_wo`, `vendor_data_wo`; Terraform >= 1.11, "+
		"OpenTofu >= 1.11) and bump `contents_wo_version` whenever they change.", tfkit.NoUpdateTimeouts,
		storedVolumeAttributes("Volume name, unique in its pool, e.g. `web-1-cloudinit.iso`.",
			"Storage pool to store the seed in, e.g. `default`.", "Path of the ISO volume on the host.", map[string]schema.Attribute{
				"user_data": tfkit.SecretReplace("Content of `user-data` (`#cloud-config` YAML, a `#!` script, ...). Sensitive: it usually "+
					"carries bootstrap secrets, and it is kept in the state; `user_data_wo` is not. An empty `user-data` file is "+
					"written when neither is set.", validators.CloudConfig()),
				"meta_data": tfkit.DerivedString("Content of `meta-data`. Instead of it, set `instance_id` (and `hostname`) to have it "+
					"written for you; then this shows what was written.", validators.YAML()),
				"instance_id": tfkit.DerivedString("Writes `meta-data` as `instance-id: <instance_id>` (plus `local-hostname: <hostname>`). " +
					"cloud-init runs its once-per-instance steps again when it changes. Conflicts with `meta_data`; " +
					"when `meta_data` is set, this shows the instance-id read from it."),
				"hostname": tfkit.DerivedString("`local-hostname` written into `meta-data` with `instance_id`: a host name (RFC 1123), e.g. `web-1`.",
					validators.Hostname()),
				"network_config": tfkit.SecretReplace("Content of `network-config` (network-config v2 YAML, e.g. `version: 2` with `ethernets:`). "+
					"Checked to parse as YAML at plan time. Not written when unset. Sensitive (it may carry Wi-Fi passwords, "+
					"addresses); kept in the state, `network_config_wo` is not.", validators.YAML()),
				"vendor_data": tfkit.SecretReplace("Content of `vendor-data`. Not written when unset. Sensitive; kept in the state, " +
					"`vendor_data_wo` is not."),
				"user_data_wo": tfkit.WriteOnlyString("Write-only `user_data`: written into the seed, never kept in the plan or the state "+
					"(Terraform >= 1.11, OpenTofu >= 1.11; ephemeral values are welcome). A change of it alone is not seen: "+
					"bump `contents_wo_version` to build the seed again. Conflicts with `user_data`. Import cannot know the "+
					"contents were given write-only: it reads the files into `user_data`, `network_config` and `vendor_data` "+
					"(and the state); with the write-only attributes in the configuration the next plan replaces the seed.",
					validators.CloudConfig(), conflictsWith("user_data")),
				"network_config_wo": tfkit.WriteOnlyString("Write-only `network_config`, as `user_data_wo`. Conflicts with `network_config`.",
					validators.YAML(), conflictsWith("network_config")),
				"vendor_data_wo": tfkit.WriteOnlyString("Write-only `vendor_data`, as `user_data_wo`. Conflicts with `vendor_data`.",
					conflictsWith("vendor_data")),
				"contents_wo_version": tfkit.WriteOnlyVersion("Any number, kept in the state: changing it replaces the seed, built again from the " +
					"current write-only contents (`user_data_wo`, `network_config_wo`, `vendor_data_wo`), which Terraform " +
					"cannot compare itself. Bump it whenever they change."),
				"sha256": tfkit.KeptString("sha256 of the ISO image (hex). The image is reproducible, so this is known at plan time " +
					"when all contents are, and none is write-only (write-only values, ephemeral ones say, may differ between " +
					"plan and apply: then it is known after the seed is made)."),
			}))
}

// conflictsWith is the validator of a write-only attribute that conflicts with its
// state-kept twin attr.
func conflictsWith(attr string) validator.String {
	return stringvalidator.ConflictsWith(path.MatchRoot(attr))
}
