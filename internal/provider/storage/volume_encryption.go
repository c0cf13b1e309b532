package storage

import (
	"context"
	"fmt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// volumeEncryptionPart is libvirt_volume's encryption, embedded in its model.
type volumeEncryptionPart struct {
	Encryption *volumeEncryptionModel `tfsdk:"encryption"`
}

// volumeEncryptionModel is libvirt_volume's `encryption`: LUKS with the passphrase in a
// libvirt_secret.
type volumeEncryptionModel struct {
	Format   types.String `tfsdk:"format"`
	SecretID types.String `tfsdk:"secret_id"`
}

var volumeEncryptionAttribute = schema.SingleNestedAttribute{
	MarkdownDescription: "Encrypt the volume with LUKS (libvirt runs qemu-img: a LUKS image for `format = \"raw\"`, qcow2's " +
		"own LUKS encryption for `qcow2`), the passphrase being the value of a `libvirt_secret` with `usage_type = \"volume\"`. " +
		"For an empty volume or a `clone_from` copy (which is how an image gets encrypted: upload it into a plain volume, " +
		"then clone it into an encrypted one); not with `source_url`, `source_file` or `backing_volume`. A `libvirt_domain` " +
		"disk that uses the volume gets the encryption (and the secret) from it. Give the secret the volume's path as its " +
		"`usage_name` (e.g. `\"${pool path}/${name}\"`): libvirt finds a volume's secret by that once it rescans the pool " +
		"(a restart of libvirtd does), and so does an import. Changing it replaces the volume.",
	Optional: true,
	PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(encryptionReplaces, "Replaces the volume, "+
		"unless only the secret_id an import could not tell is filled in.", "")},
	Attributes: map[string]schema.Attribute{
		"format": schema.StringAttribute{MarkdownDescription: "`luks` (the only format offered).", Required: true,
			Validators: []validator.String{stringvalidator.OneOf(libvirt.EncryptionLUKS)}},
		"secret_id": schema.StringAttribute{MarkdownDescription: "UUID of the `libvirt_secret` holding the passphrase " +
			"(`libvirt_secret.x.id`; its `usage_type` must be `volume`).", Required: true,
			Validators: []validator.String{stringvalidator.RegexMatches(validators.UUIDRegexp, "must be a libvirt secret's UUID (libvirt_secret.x.id)")}},
	},
}

func (e *volumeEncryptionModel) toSpec() *libvirt.VolumeEncryption {
	if e == nil {
		return nil
	}
	return &libvirt.VolumeEncryption{Format: e.Format.ValueString(), Secret: e.SecretID.ValueString()}
}

// volumeEncryptionFrom is the encryption libvirt reports. The secret libvirt no longer
// tells (after a pool refresh, when no volume secret's usage names the path) stays what
// prior had: the volume has not changed.
func volumeEncryptionFrom(e *libvirt.VolumeEncryption, prior *volumeEncryptionModel) *volumeEncryptionModel {
	if e == nil {
		return nil
	}
	m := &volumeEncryptionModel{Format: types.StringValue(e.Format), SecretID: types.StringValue(e.Secret)}
	if e.Secret == "" {
		m.SecretID = types.StringNull()
		if prior != nil {
			m.SecretID = prior.SecretID
		}
	}
	return m
}

// validateVolumeEncryption refuses, at plan time, encryption for a volume whose making
// cannot keep it: an upload writes the image over the LUKS header libvirt made, and an
// encrypted overlay would need its backing chain's secrets in every domain that uses it.
func validateVolumeEncryption(m *VolumeModel, diags *diag.Diagnostics) {
	if m.Encryption == nil {
		return
	}
	what := fmt.Sprintf("libvirt_volume %s", m.Name.ValueString())
	for _, src := range []string{"source_url", "source_file", "backing_volume"} {
		if m.source(src).IsNull() {
			continue
		}
		diags.AddAttributeError(path.Root("encryption"), "Encryption with "+src,
			fmt.Sprintf("%s: encryption is possible for an empty volume or a clone_from copy, not with %s (%s). Make a "+
				"plain volume from it, then the encrypted one with clone_from = that volume's id.", what, src, encryptionWhyNot(src)))
	}
	if f := m.Format; tfkit.Known(f) && f.ValueString() != "raw" && f.ValueString() != "qcow2" {
		diags.AddAttributeError(path.Root("format"), "Encrypted volumes are raw or qcow2",
			fmt.Sprintf("%s: format = %q cannot be encrypted: set format to \"qcow2\" or \"raw\", or remove encryption.", what, f.ValueString()))
	}
}

func encryptionWhyNot(src string) string {
	if src == "backing_volume" {
		return "an encrypted overlay would need its backing chain's keys in every domain using it"
	}
	return "the upload would write the image over the LUKS header"
}

// encryptionKey is m's encryption as one value, for the comparisons that tell a
// replacement.
func encryptionKey(m *VolumeModel) types.String {
	if m.Encryption == nil {
		return types.StringNull()
	}
	return types.StringValue(m.Encryption.Format.ValueString() + "/" + m.Encryption.SecretID.String())
}

// encryptionReplaces: any change of encryption replaces the volume, but for a secret_id
// that state lacks (an import whose secret libvirt could not tell: see
// libvirt.encryptionWithSecret): the configuration's is taken in place, the volume is the
// same.
func encryptionReplaces(_ context.Context, req planmodifier.ObjectRequest, resp *objectplanmodifier.RequiresReplaceIfFuncResponse) {
	state, plan := req.StateValue.Attributes(), req.PlanValue.Attributes()
	resp.RequiresReplace = !(state["secret_id"] != nil && state["secret_id"].IsNull() && plan["format"] != nil && plan["format"].Equal(state["format"]))
}
