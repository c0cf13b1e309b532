package provider

import (
	"context"
	"fmt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
)

type cloudinitISOResource struct {
	blobResource[cloudinitISOModel, *cloudinitISOModel]
}

type cloudinitISOModel struct {
	storedVolume
	tfkit.WithTimeouts
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

func (m *cloudinitISOModel) kind() blobKind        { return seedBlob }
func (m *cloudinitISOModel) what() string          { return seedBlob.what(&m.storedVolume) }
func (m *cloudinitISOModel) digest() *types.String { return &m.SHA256 }

func (r *cloudinitISOResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m cloudinitISOModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
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
func (m *cloudinitISOModel) seed() (s cloudinit.Seed, ok bool, err error) {
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
func (m *cloudinitISOModel) hasWriteOnly() bool {
	return !m.UserDataWO.IsNull() || !m.NetworkConfigWO.IsNull() || !m.VendorDataWO.IsNull()
}

// derive fills the computed halves of meta_data / instance_id / hostname from the other.
func (m *cloudinitISOModel) derive(metaData string) {
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
func (r *cloudinitISOResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() {
		return // destroy, or an update (only timeouts can change in place)
	}
	plan, config, ok := tfkit.GetBoth[cloudinitISOModel](ctx, &resp.Diagnostics, req.Plan, req.Config)
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
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	if _, sum, err := cloudinit.BuildISO(s); err == nil {
		plan.SHA256 = types.StringValue(sum)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// content builds the seed image from the configuration: the plan's computed halves
// are derived from it, and only it holds the write-only contents. m gets the meta-data
// written.
func (m *cloudinitISOModel) content(config *cloudinitISOModel) ([]byte, error) {
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
func (r *cloudinitISOResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
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
		m := &cloudinitISOModel{
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
