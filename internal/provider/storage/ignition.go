package storage

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

type IgnitionResource struct {
	blobResource[IgnitionModel, *IgnitionModel]
}

type IgnitionModel struct {
	storedVolume
	tfkit.WithTimeouts
	tfkit.OnHost
	Content types.String `tfsdk:"content"`
	// ContentWO is only ever non-null in req.Config: the framework nulls it in plan and
	// state (its zero value is null, as import leaves it).
	ContentWO        types.String `tfsdk:"content_wo"`
	ContentWOVersion types.Int64  `tfsdk:"content_wo_version"`
	SHA256           types.String `tfsdk:"sha256"`
}

func (m *IgnitionModel) kind() blobKind        { return ignitionBlob }
func (m *IgnitionModel) what() string          { return ignitionBlob.what(&m.storedVolume) }
func (m *IgnitionModel) digest() *types.String { return &m.SHA256 }

func (r *IgnitionResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = tfkit.ResourceSchema(ctx, "An Ignition config for Fedora CoreOS / Flatcar guests, stored byte for byte as a raw volume in a "+
		"pool. Hand it to a domain with `libvirt_domain.ignition_id`: the domain gets it through QEMU's fw_cfg as "+
		"`opt/com.coreos/config`. Any change replaces it. To keep the config out of the state, give it as "+
		"`content_wo` (write-only: Terraform >= 1.11, OpenTofu >= 1.11) and bump `content_wo_version` whenever it changes.", tfkit.NoUpdateTimeouts,
		storedVolumeAttributes("Volume name, unique in its pool, e.g. `node-1.ign`.", "Storage pool to store the config in, e.g. `default`. "+
			"QEMU reads the file directly, so the pool must be a local one (a directory pool).", "Path of the volume on the host.", map[string]schema.Attribute{
			"content": tfkit.SecretReplace("The Ignition config (JSON, e.g. from the `ct` / Butane provider or `jsonencode()`), "+
				"checked to parse as JSON at plan time. Sensitive: Ignition configs carry secrets; kept in the state "+
				"(`content_wo` is not). Exactly one of `content` and `content_wo` is set.", validators.JSON()),
			"content_wo": tfkit.WriteOnlyString("Write-only `content`: stored in the volume, never kept in the plan or the state "+
				"(Terraform >= 1.11, OpenTofu >= 1.11; ephemeral values are welcome). A change of it alone is not seen: "+
				"bump `content_wo_version` to store it again. Import cannot know a config was given write-only: it reads "+
				"the volume into `content` (and the state); with `content_wo` in the configuration the next plan replaces it.",
				validators.JSON()),
			"content_wo_version": tfkit.WriteOnlyVersion("Any number, kept in the state: changing it replaces the config, stored again from the " +
				"current `content_wo`, which Terraform cannot compare itself. Bump it whenever `content_wo` changes."),
			"sha256": tfkit.KeptString("sha256 of the config (hex); known at plan time for `content`, after the apply for " +
				"`content_wo` (write-only values, ephemeral ones say, may differ between plan and apply)."),
		}))
}

// ConfigValidators: the config comes from content or content_wo, not both.
func (r *IgnitionResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.ExactlyOneOf(path.MatchRoot("content"), path.MatchRoot("content_wo"))}
}

// ModifyPlan fills sha256 for a new config whose content is known; for content_wo it
// stays unknown (plan has it null; the write-only value may differ at apply).
func (r *IgnitionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() {
		return
	}
	var plan IgnitionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Content.IsUnknown() || plan.Content.IsNull() {
		return
	}
	plan.SHA256 = types.StringValue(sha256Hex([]byte(plan.Content.ValueString())))
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

// content is the config to store: content, or the configuration's content_wo.
func (m *IgnitionModel) content(config *IgnitionModel) ([]byte, error) { //nolint:unparam // blobModel: building a seed can fail
	if m.Content.IsNull() {
		return []byte(config.ContentWO.ValueString()), nil
	}
	return []byte(m.Content.ValueString()), nil
}

// ImportState takes <pool>/<name> or the volume key and downloads the content, so an
// imported config plans clean against the configuration that made it.
func (r *IgnitionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	r.kind().importState(ctx, r.Client, req, resp, func(v storedVolume, content []byte, _ *diag.Diagnostics) (any, error) {
		if !json.Valid(content) {
			return nil, errors.New("the volume does not hold JSON: not an ignition config")
		}
		return &IgnitionModel{
			storedVolume: v,
			Content:      types.StringValue(string(content)),
			SHA256:       types.StringValue(sha256Hex(content)),
			WithTimeouts: tfkit.WithTimeouts{Timeouts: tfkit.UnsetTimeouts(tfkit.NoUpdateTimeouts)},
		}, nil
	})
}
