package provider

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/validators"
)

// NewCloudinitISOResource is the libvirt_cloudinit_iso resource.
func NewCloudinitISOResource() resource.Resource {
	return &cloudinitISOResource{resourceBase{typeName: "cloudinit_iso"}}
}

type cloudinitISOResource struct {
	resourceBase
}

type cloudinitISOModel struct {
	ID            types.String `tfsdk:"id"`
	Name          types.String `tfsdk:"name"`
	Pool          types.String `tfsdk:"pool"`
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
	UserDataWO        types.String   `tfsdk:"user_data_wo"`
	NetworkConfigWO   types.String   `tfsdk:"network_config_wo"`
	VendorDataWO      types.String   `tfsdk:"vendor_data_wo"`
	ContentsWOVersion types.Int64    `tfsdk:"contents_wo_version"`
	Path              types.String   `tfsdk:"path"`
	SHA256            types.String   `tfsdk:"sha256"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

func (m *cloudinitISOModel) readTimeouts() timeouts.Value { return m.Timeouts }

func (r *cloudinitISOResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	computedReplace := []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A cloud-init NoCloud seed: an ISO9660 image labelled `cidata` holding `user-data`, `meta-data` " +
			"and, when given, `network-config` and `vendor-data`, built in memory by the provider (nothing is written to " +
			"the local disk) and stored as a raw volume in a pool. Attach it to a domain as a read-only cdrom " +
			"(`libvirt_domain.cloudinit_id`). Any change replaces it. To keep secrets out of the state, give the contents " +
			"as write-only attributes (`user_data_wo`, `network_config_wo`, `vendor_data_wo`; Terraform >= 1.11, " +
			"OpenTofu >= 1.11) and bump `contents_wo_version` whenever they change.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The volume's key (for directory pools, its path on the host).",
				Computed:            true,
				PlanModifiers:       keep,
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Volume name, unique in its pool, e.g. `web-1-cloudinit.iso`.",
				Required:            true,
				PlanModifiers:       replace,
				Validators:          []validator.String{validators.ObjectName("volume name")},
			},
			"pool": schema.StringAttribute{
				MarkdownDescription: "Storage pool to store the seed in, e.g. `default`.",
				Required:            true,
				PlanModifiers:       replace,
				Validators:          []validator.String{validators.ObjectName("pool name")},
			},
			"user_data": schema.StringAttribute{
				MarkdownDescription: "Content of `user-data` (`#cloud-config` YAML, a `#!` script, ...). Sensitive: it usually " +
					"carries bootstrap secrets, and it is kept in the state; `user_data_wo` is not. An empty `user-data` file is " +
					"written when neither is set.",
				Optional:      true,
				Sensitive:     true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.CloudConfig()},
			},
			"meta_data": schema.StringAttribute{
				MarkdownDescription: "Content of `meta-data`. Instead of it, set `instance_id` (and `hostname`) to have it " +
					"written for you; then this shows what was written.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: computedReplace,
				Validators:    []validator.String{validators.YAML()},
			},
			"instance_id": schema.StringAttribute{
				MarkdownDescription: "Writes `meta-data` as `instance-id: <instance_id>` (plus `local-hostname: <hostname>`). " +
					"cloud-init runs its once-per-instance steps again when it changes. Conflicts with `meta_data`; " +
					"when `meta_data` is set, this shows the instance-id read from it.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: computedReplace,
			},
			"hostname": schema.StringAttribute{
				MarkdownDescription: "`local-hostname` written into `meta-data` with `instance_id`: a host name (RFC 1123), e.g. `web-1`.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       computedReplace,
				Validators:          []validator.String{validators.Hostname()},
			},
			"network_config": schema.StringAttribute{
				MarkdownDescription: "Content of `network-config` (network-config v2 YAML, e.g. `version: 2` with `ethernets:`). " +
					"Checked to parse as YAML at plan time. Not written when unset. Sensitive (it may carry Wi-Fi passwords, " +
					"addresses); kept in the state, `network_config_wo` is not.",
				Optional:      true,
				Sensitive:     true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.YAML()},
			},
			"vendor_data": schema.StringAttribute{
				MarkdownDescription: "Content of `vendor-data`. Not written when unset. Sensitive; kept in the state, " +
					"`vendor_data_wo` is not.",
				Optional:      true,
				Sensitive:     true,
				PlanModifiers: replace,
			},
			"user_data_wo": schema.StringAttribute{
				MarkdownDescription: "Write-only `user_data`: written into the seed, never kept in the plan or the state " +
					"(Terraform >= 1.11, OpenTofu >= 1.11; ephemeral values are welcome). A change of it alone is not seen: " +
					"bump `contents_wo_version` to build the seed again. Conflicts with `user_data`. Import cannot know the " +
					"contents were given write-only: it reads the files into `user_data`, `network_config` and `vendor_data` " +
					"(and the state); with the write-only attributes in the configuration the next plan replaces the seed.",
				Optional:   true,
				WriteOnly:  true,
				Validators: []validator.String{validators.CloudConfig(), stringvalidator.ConflictsWith(path.MatchRoot("user_data"))},
			},
			"network_config_wo": schema.StringAttribute{
				MarkdownDescription: "Write-only `network_config`, as `user_data_wo`. Conflicts with `network_config`.",
				Optional:            true,
				WriteOnly:           true,
				Validators:          []validator.String{validators.YAML(), stringvalidator.ConflictsWith(path.MatchRoot("network_config"))},
			},
			"vendor_data_wo": schema.StringAttribute{
				MarkdownDescription: "Write-only `vendor_data`, as `user_data_wo`. Conflicts with `vendor_data`.",
				Optional:            true,
				WriteOnly:           true,
				Validators:          []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("vendor_data"))},
			},
			"contents_wo_version": schema.Int64Attribute{
				MarkdownDescription: "Any number, kept in the state: changing it replaces the seed, built again from the " +
					"current write-only contents (`user_data_wo`, `network_config_wo`, `vendor_data_wo`), which Terraform " +
					"cannot compare itself. Bump it whenever they change.",
				Optional:      true,
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			},
			"path": schema.StringAttribute{
				MarkdownDescription: "Path of the ISO volume on the host.",
				Computed:            true,
				PlanModifiers:       keep,
			},
			"sha256": schema.StringAttribute{
				MarkdownDescription: "sha256 of the ISO image (hex). The image is reproducible, so this is known at plan time " +
					"when all contents are, and none is write-only (write-only values, ephemeral ones say, may differ between " +
					"plan and apply: then it is known after the seed is made).",
				Computed:      true,
				PlanModifiers: keep,
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Delete: true}),
		},
	}
}

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
	var plan, config cloudinitISOModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
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

func (r *cloudinitISOResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config cloudinitISOModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 5*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spec := libvirt.VolumeSpec{Pool: plan.Pool.ValueString(), Name: plan.Name.ValueString(), Format: "raw"}

	// Build from the configuration: the plan's computed halves are derived from it, and
	// only the configuration holds the write-only contents.
	config.UserData, config.NetworkConfig, config.VendorData = plan.UserData, plan.NetworkConfig, plan.VendorData
	s, _, err := config.seed()
	if err != nil {
		resp.Diagnostics.AddError("Unable to create cloud-init seed "+spec.String(), err.Error())
		return
	}
	img, sum, err := cloudinit.BuildISO(s)
	if err != nil {
		resp.Diagnostics.AddError("Unable to create cloud-init seed "+spec.String(), "build the ISO image: "+err.Error())
		return
	}
	info, err := r.client.UploadBytes(ctx, spec, "cloud-init seed", img)
	if err != nil {
		resp.Diagnostics.AddError("Unable to create cloud-init seed "+spec.String(), err.Error())
		return
	}
	tflog.Info(ctx, "stored cloud-init seed", map[string]any{"volume": spec.String(), "bytes": len(img), "sha256": sum})
	plan.MetaData, plan.InstanceID, plan.Hostname = config.MetaData, config.InstanceID, config.Hostname
	plan.derive(s.MetaData)
	plan.SHA256 = types.StringValue(sum)
	plan.ID = types.StringValue(info.Key)
	plan.Path = types.StringValue(info.Path)
	plan.Name = types.StringValue(info.Name)
	plan.Pool = types.StringValue(info.Pool)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *cloudinitISOResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, req, resp, 2*time.Minute,
		func(m *cloudinitISOModel) string {
			return "cloud-init seed " + m.Pool.ValueString() + "/" + m.Name.ValueString()
		},
		func(ctx context.Context, m *cloudinitISOModel) (*cloudinitISOModel, error) {
			// In its pool: a seed in a stopped pool is not gone (see volumeModel.ref).
			info, err := r.client.VolumeInfo(ctx, libvirt.VolumeRef{Key: m.ID.ValueString(), Pool: m.Pool.ValueString()})
			if err != nil {
				return nil, err
			}
			m.ID = types.StringValue(info.Key)
			m.Path = types.StringValue(info.Path)
			m.Name = types.StringValue(info.Name)
			m.Pool = types.StringValue(info.Pool)
			return m, nil
		})
}

// Update only ever changes timeouts: every other attribute replaces the seed.
func (r *cloudinitISOResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan cloudinitISOModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *cloudinitISOResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state cloudinitISOModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, 5*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := r.client.DeleteVolume(ctx, libvirt.VolumeRef{Key: state.ID.ValueString(), Pool: state.Pool.ValueString()})
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError("Unable to delete cloud-init seed "+state.Pool.ValueString()+"/"+state.Name.ValueString(), err.Error()+poolStoppedNote(err))
	}
}

// ImportState takes <pool>/<name> or the volume key, downloads the seed and reads its
// files back, so an imported seed plans clean against the configuration that made it.
func (r *cloudinitISOResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := importContext(ctx, r.client, "libvirt_cloudinit_iso", req.ID)
	defer bound.end(&resp.Diagnostics)
	ref, err := libvirt.ParseVolumeRef(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import id for libvirt_cloudinit_iso", err.Error())
		return
	}
	info, err := r.client.VolumeInfo(ctx, ref)
	if err != nil {
		resp.Diagnostics.AddError("Unable to import cloud-init seed "+ref.String(), err.Error())
		return
	}
	if info.Capacity > 64<<20 {
		resp.Diagnostics.AddError("Unable to import cloud-init seed "+ref.String(),
			fmt.Sprintf("the volume is %d bytes: too large for a cloud-init seed", info.Capacity))
		return
	}
	var buf bytes.Buffer
	if err := r.client.DownloadVolume(ctx, libvirt.VolumeRef{Key: info.Key}, &buf); err != nil {
		resp.Diagnostics.AddError("Unable to import cloud-init seed "+ref.String(), err.Error())
		return
	}
	label, files, err := cloudinit.ReadISO(buf.Bytes())
	if err != nil {
		resp.Diagnostics.AddError("Unable to import cloud-init seed "+ref.String(), "the volume is not an ISO9660 image: "+err.Error())
		return
	}
	if label != cloudinit.VolumeLabel {
		resp.Diagnostics.AddWarning("Not a NoCloud seed label", fmt.Sprintf("volume %s is labelled %q, not %q: cloud-init will not find it.", ref, label, cloudinit.VolumeLabel))
	}
	sum := sha256.Sum256(buf.Bytes())
	opt := func(name string) types.String {
		if b, ok := files[name]; ok {
			return types.StringValue(string(b))
		}
		return types.StringNull()
	}
	m := cloudinitISOModel{
		ID:            types.StringValue(info.Key),
		Name:          types.StringValue(info.Name),
		Pool:          types.StringValue(info.Pool),
		Path:          types.StringValue(info.Path),
		SHA256:        types.StringValue(hex.EncodeToString(sum[:])),
		UserData:      opt(cloudinit.UserDataFile),
		NetworkConfig: opt(cloudinit.NetworkConfigFile),
		VendorData:    opt(cloudinit.VendorDataFile),
		InstanceID:    types.StringNull(),
		Hostname:      types.StringNull(),
		MetaData:      types.StringNull(),
		Timeouts:      timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes("create", "read", "delete"))},
	}
	if m.UserData.ValueString() == "" {
		m.UserData = types.StringNull() // an unset user_data is written as an empty file
	}
	m.derive(string(files[cloudinit.MetaDataFile]))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
