package secret

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	value := path.MatchRoot("value")
	resp.Schema = tfkit.ResourceSchema(ctx, "A libvirt secret: a key or passphrase libvirt hands to QEMU itself (a Ceph client key for rbd "+
		"disks, an iSCSI CHAP password, a LUKS volume passphrase, a vTPM state key), so it never appears in a domain's XML. "+
		"Give the value as `value` (sensitive, kept in state) or `value_wo` (write-only: never in plan or state; bump "+
		"`value_wo_version` to set it again). Changing the value or the description changes the secret in place; "+
		"the other attributes replace it. Import by UUID.", tfkit.AllTimeouts, map[string]schema.Attribute{
		"id": tfkit.IDAttribute("The secret's UUID (what disks and pools name it by: `secret_id`)."),
		"uuid": tfkit.DerivedString("UUID of the secret. Default: a random one. Changing it replaces the secret. A UUID a secret on the host has "+
			"already (one no state tracks) is refused, at plan time and again by the create, naming that secret to import.",
			// Lower case only: libvirt reports it so, and a configured upper-case one would read back changed.
			stringvalidator.RegexMatches(validators.LowerUUIDRegexp, "must be a UUID in lower case, as libvirt reports it, such as 6b1c3a5e-0d4f-4c2a-9e1b-1234567890ab")),
		"usage_type": tfkit.RequiredReplace("What the secret is for: `volume` (LUKS passphrase), `ceph` (rbd client key), `iscsi` (CHAP password), "+
			"`tls` (TLS key passphrase) or `vtpm` (TPM state key).", stringvalidator.OneOf(libvirt.SecretUsageTypes...)),
		"usage_name": tfkit.RequiredReplace("Whom it serves, unique per usage type: the volume's path (`volume`), the iSCSI target IQN (`iscsi`), "+
			"or a name of your choice (`ceph`, e.g. `client.libvirt secret`; `tls`; `vtpm`). libvirt keeps one secret per usage: "+
			"a new secret whose usage a secret on the host has already (one no state tracks) is refused at plan time, naming that "+
			"secret's UUID to import.", stringvalidator.LengthAtLeast(1)),
		"description": tfkit.OptionalString("Free text stored with the secret."),
		"value": schema.StringAttribute{
			MarkdownDescription: "The secret's value. For `usage_type = \"ceph\"` the key exactly as `ceph auth get-key` prints it " +
				"(base64; libvirt stores its bytes). Conflicts with `value_wo`. When libvirt reports another value (and the " +
				"secret is not `private`) the next plan sets it again.",
			Optional: true, Sensitive: true,
			Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("value_wo"))},
		},
		"value_wo": tfkit.WriteOnlyString("The value, write-only (Terraform 1.11 or newer): never stored in plan or state. Same format as "+
			"`value`.", stringvalidator.ConflictsWith(value)),
		"value_wo_version": schema.Int64Attribute{MarkdownDescription: "A number to change whenever `value_wo` changes: the " +
			"value is set again (in place). Terraform cannot compare write-only values itself.", Optional: true},
		"ephemeral": tfkit.BoolReplace("Keep the secret in libvirtd's memory only: it is gone after a restart of the daemon. Default `false`.", false),
		"private": tfkit.BoolReplace("libvirt never reveals the value, not even to this provider (so a value changed behind Terraform's "+
			"back is not seen). Default `false`.", false),
	})
}
