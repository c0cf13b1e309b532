package storage

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

type CloudinitISOResource struct {
	blobResource[CloudinitISOModel, *CloudinitISOModel]
}

type CloudinitISOModel struct {
	storedVolume
	tfkit.WithTimeouts
	tfkit.OnHost
	UserData      types.String `tfsdk:"user_data"`
	MetaData      types.String `tfsdk:"meta_data"`
	InstanceID    types.String `tfsdk:"instance_id"`
	Hostname      types.String `tfsdk:"hostname"`
	NetworkConfig types.String `tfsdk:"network_config"`
	VendorData    types.String `tfsdk:"vendor_data"`
	// The write-only twins: only ever non-null in req.Config (the framework nulls them in
	// plan and state; their zero value is null, as import leaves them: it cannot know
	// whether a configuration gave the contents write-only, and reads them into the
	// state-kept attributes).
	UserDataWO        types.String `tfsdk:"user_data_wo"`
	NetworkConfigWO   types.String `tfsdk:"network_config_wo"`
	VendorDataWO      types.String `tfsdk:"vendor_data_wo"`
	ContentsWOVersion types.Int64  `tfsdk:"contents_wo_version"`
	SHA256            types.String `tfsdk:"sha256"`
}

func (m *CloudinitISOModel) kind() blobKind        { return seedBlob }
func (m *CloudinitISOModel) what() string          { return seedBlob.what(&m.storedVolume) }
func (m *CloudinitISOModel) digest() *types.String { return &m.SHA256 }

func (r *CloudinitISOResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m CloudinitISOModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	switch {
	case !m.MetaData.IsNull() && (!m.InstanceID.IsNull() || !m.Hostname.IsNull()):
		resp.Diagnostics.AddAttributeError(path.Root("meta_data"), "Conflicting meta-data",
			"meta_data and instance_id / hostname are both set: use meta_data for the whole file, or instance_id (and hostname) to have it written, not both.")
	case m.MetaData.IsNull() && m.InstanceID.IsNull() && !m.Hostname.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("instance_id"), "Missing instance_id",
			"hostname is set without instance_id: NoCloud meta-data needs an instance-id. Set instance_id too (e.g. the domain's name or uuid).")
	case m.MetaData.IsNull() && m.InstanceID.IsNull():
		resp.Diagnostics.AddAttributeError(path.Root("instance_id"), "Missing meta-data",
			"A NoCloud seed needs meta-data: set instance_id (and hostname) to have it written, or meta_data with its content.")
	}
	if v := m.InstanceID; !v.IsNull() && !v.IsUnknown() {
		if _, err := cloudinit.MetaData(v.ValueString(), ""); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("instance_id"), "Invalid instance_id", err.Error()+".")
		}
	}
}

// seed builds the seed from known values (of a configuration: only it holds the
// write-only ones); ok is false while any of them is unknown.
func (m *CloudinitISOModel) seed() (s cloudinit.Seed, ok bool, err error) {
	for _, v := range []types.String{m.UserData, m.MetaData, m.InstanceID, m.Hostname, m.NetworkConfig, m.VendorData,
		m.UserDataWO, m.NetworkConfigWO, m.VendorDataWO} {
		if v.IsUnknown() {
			return s, false, nil
		}
	}
	s.UserData = orWriteOnly(m.UserData, m.UserDataWO).ValueString()
	s.MetaData = m.MetaData.ValueString()
	if m.MetaData.IsNull() {
		if s.MetaData, err = cloudinit.MetaData(m.InstanceID.ValueString(), m.Hostname.ValueString()); err != nil {
			return s, false, err
		}
	}
	if v := orWriteOnly(m.NetworkConfig, m.NetworkConfigWO); !v.IsNull() {
		c := v.ValueString()
		s.NetworkConfig = &c
	}
	if v := orWriteOnly(m.VendorData, m.VendorDataWO); !v.IsNull() {
		c := v.ValueString()
		s.VendorData = &c
	}
	return s, true, nil
}

// orWriteOnly is v, or its write-only twin wo when v is unset (they conflict).
func orWriteOnly(v, wo types.String) types.String {
	if v.IsNull() {
		return wo
	}
	return v
}

// hasWriteOnly reports whether a configuration sets any write-only content.
func (m *CloudinitISOModel) hasWriteOnly() bool {
	return !m.UserDataWO.IsNull() || !m.NetworkConfigWO.IsNull() || !m.VendorDataWO.IsNull()
}

// derive fills the computed halves of meta_data / instance_id / hostname from the other.
func (m *CloudinitISOModel) derive(metaData string) {
	if m.MetaData.IsNull() || m.MetaData.IsUnknown() {
		m.MetaData = types.StringValue(metaData)
	}
	if m.InstanceID.IsNull() || m.InstanceID.IsUnknown() {
		id, host, err := cloudinit.ParseMetaData(metaData)
		m.InstanceID, m.Hostname = types.StringNull(), types.StringNull()
		if err == nil && id != "" {
			m.InstanceID = types.StringValue(id)
		}
		if err == nil && host != "" {
			m.Hostname = types.StringValue(host)
		}
	}
	if m.Hostname.IsUnknown() {
		m.Hostname = types.StringNull()
	}
}

// ModifyPlan computes, for a new seed whose contents are known, the meta-data it will
// hold and the image's sha256: the image is reproducible, so both are known at plan time.
// Not the sha256 of a seed with write-only contents: those may be ephemeral values that
// differ at apply, and a planned value that then changes fails the apply.
func (r *CloudinitISOResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() {
		return // destroy, or an update (only timeouts can change in place)
	}
	plan, config, ok := tfkit.GetBoth[CloudinitISOModel](ctx, &resp.Diagnostics, req.Plan, req.Config)
	if !ok {
		return
	}
	// Plan from what is configured: computed halves are unknown in the plan.
	s, ok, err := config.seed()
	if err != nil || !ok {
		return
	}
	plan.derive(s.MetaData)
	if config.hasWriteOnly() {
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	if _, sum, err := cloudinit.BuildISO(s); err == nil {
		plan.SHA256 = types.StringValue(sum)
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

// content builds the seed image from the configuration: the plan's computed halves
// are derived from it, and only it holds the write-only contents. m gets the meta-data
// written.
func (m *CloudinitISOModel) content(config *CloudinitISOModel) ([]byte, error) {
	config.UserData, config.NetworkConfig, config.VendorData = m.UserData, m.NetworkConfig, m.VendorData
	s, _, err := config.seed()
	if err != nil {
		return nil, err
	}
	img, _, err := cloudinit.BuildISO(s)
	if err != nil {
		return nil, fmt.Errorf("build the ISO image: %w", err)
	}
	m.MetaData, m.InstanceID, m.Hostname = config.MetaData, config.InstanceID, config.Hostname
	m.derive(s.MetaData)
	return img, nil
}

// ImportState takes <pool>/<name> or the volume key, downloads the seed and reads its
// files back, so an imported seed plans clean against the configuration that made it.
func (r *CloudinitISOResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	r.kind().importState(ctx, r.Client, req, resp, func(v storedVolume, img []byte, d *diag.Diagnostics) (any, error) {
		label, files, err := cloudinit.ReadISO(img)
		if err != nil {
			return nil, fmt.Errorf("the volume is not an ISO9660 image: %w", err)
		}
		if label != cloudinit.VolumeLabel {
			d.AddWarning("Not a NoCloud seed label", fmt.Sprintf("volume %s is labelled %q, not %q: cloud-init will not find it.", req.ID, label, cloudinit.VolumeLabel))
		}
		opt := func(name string) types.String {
			if b, ok := files[name]; ok {
				return types.StringValue(string(b))
			}
			return types.StringNull()
		}
		m := &CloudinitISOModel{
			storedVolume:  v,
			SHA256:        types.StringValue(sha256Hex(img)),
			UserData:      opt(cloudinit.UserDataFile),
			NetworkConfig: opt(cloudinit.NetworkConfigFile),
			VendorData:    opt(cloudinit.VendorDataFile),
			InstanceID:    types.StringNull(),
			Hostname:      types.StringNull(),
			MetaData:      types.StringNull(),
			WithTimeouts:  tfkit.WithTimeouts{Timeouts: tfkit.UnsetTimeouts(tfkit.NoUpdateTimeouts)},
		}
		if m.UserData.ValueString() == "" {
			m.UserData = types.StringNull() // an unset user_data is written as an empty file
		}
		m.derive(string(files[cloudinit.MetaDataFile]))
		return m, nil
	})
}

func (r *CloudinitISOResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
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
