package secret

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

type Resource struct {
	tfkit.ResourceBase
}

type Model struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID             types.String `tfsdk:"id"`
	UUID           types.String `tfsdk:"uuid"`
	UsageType      types.String `tfsdk:"usage_type"`
	UsageName      types.String `tfsdk:"usage_name"`
	Description    types.String `tfsdk:"description"`
	Value          types.String `tfsdk:"value"`
	ValueWO        types.String `tfsdk:"value_wo"`
	ValueWOVersion types.Int64  `tfsdk:"value_wo_version"`
	Ephemeral      types.Bool   `tfsdk:"ephemeral"`
	Private        types.Bool   `tfsdk:"private"`
}

func secretWhat(m *Model) string {
	if tfkit.Known(m.ID) {
		return fmt.Sprintf("secret %s (%s %s)", m.ID.ValueString(), m.UsageType.ValueString(), m.UsageName.ValueString())
	}
	return fmt.Sprintf("secret for %s %s", m.UsageType.ValueString(), m.UsageName.ValueString())
}

func (m *Model) spec() libvirt.SecretSpec {
	return libvirt.SecretSpec{UUID: tfkit.StringOf(m.UUID), UsageType: m.UsageType.ValueString(), UsageName: m.UsageName.ValueString(),
		Description: m.Description.ValueString(), Ephemeral: m.Ephemeral.ValueBool(), Private: m.Private.ValueBool()}
}

// fromSpec sets m from what libvirt has.
func (m *Model) fromSpec(s *libvirt.SecretSpec) {
	m.ID, m.UUID = types.StringValue(s.UUID), types.StringValue(s.UUID)
	m.UsageType, m.UsageName, m.Description = types.StringValue(s.UsageType), types.StringValue(s.UsageName), tfkit.StringOrNull(s.Description)
	m.Ephemeral, m.Private = types.BoolValue(s.Ephemeral), types.BoolValue(s.Private)
}

// secretBytes is the value libvirt stores for text: a Ceph key's bytes (its base64
// decoded, as `virsh secret-set-value --base64` does), else the text itself.
func secretBytes(usage, text string) ([]byte, error) {
	if usage != libvirt.SecretCeph {
		return []byte(text), nil
	}
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("a ceph secret's value is the key as `ceph auth get-key` prints it (base64): %w", err)
	}
	return b, nil
}

// secretText is secretBytes undone.
func secretText(usage string, b []byte) string {
	if usage == libvirt.SecretCeph {
		return base64.StdEncoding.EncodeToString(b)
	}
	return string(b)
}

// configuredValue is the value the configuration sets (value, else value_wo, which only
// the configuration holds), as libvirt is to store it; nil when it sets none.
func configuredValue(ctx context.Context, plan *Model, config func(context.Context, any) diag.Diagnostics) ([]byte, error) {
	text := plan.Value
	if text.IsNull() {
		var wo types.String
		if d := config(ctx, &wo); d.HasError() {
			return nil, errors.New("read value_wo from the configuration")
		}
		text = wo
	}
	if text.IsNull() {
		return nil, nil
	}
	return secretBytes(plan.UsageType.ValueString(), text.ValueString())
}

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 2*time.Minute, secretWhat, func(ctx context.Context, plan *Model, _ *diag.Diagnostics) (*Model, error) {
		value, err := configuredValue(ctx, plan, func(ctx context.Context, v any) diag.Diagnostics {
			return req.Config.GetAttribute(ctx, path.Root("value_wo"), v)
		})
		if err != nil {
			return nil, err
		}
		return createSecret(ctx, r.Client, plan, value)
	})
}

// secretCreator is what a secret's create asks of libvirt (*libvirt.Client).
type secretCreator interface {
	CreateSecret(ctx context.Context, s libvirt.SecretSpec, value []byte) (string, error)
	GetSecret(ctx context.Context, id string) (*libvirt.SecretSpec, error)
}

// createSecret makes the secret plan describes and reads it back. A secret with the
// planned UUID or usage already on the host is refused (CreateSecret), naming it: it is
// imported, not taken over. When the secret was made but cannot be read back, the plan
// with its UUID is returned with the error, so that it is stored (tainted, replaced by the
// next apply) and no secret is left on the host that the state does not track.
func createSecret(ctx context.Context, c secretCreator, plan *Model, value []byte) (*Model, error) {
	id, err := c.CreateSecret(ctx, plan.spec(), value)
	var taken *libvirt.SecretExistsError
	if errors.As(err, &taken) && taken.ByUUID {
		return nil, tfkit.AtAttribute(path.Root("uuid"), err)
	} else if taken != nil {
		return nil, tfkit.AtAttribute(path.Root("usage_name"), err)
	}
	if err != nil {
		return nil, err
	}
	got, err := tfkit.ReadBack(ctx, func(ctx context.Context) (*libvirt.SecretSpec, error) { return c.GetSecret(ctx, id) })
	if err != nil {
		plan.ID, plan.UUID = types.StringValue(id), types.StringValue(id)
		return plan, fmt.Errorf("secret %s was created, but reading it back failed; it stays in state, tainted, and the "+
			"next apply replaces it: %w", id, err)
	}
	plan.fromSpec(got)
	return plan, nil
}

// Update redefines the secret under its UUID (the description) and sets its value when
// value or value_wo_version changed.
func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.Update(ctx, req, resp, 2*time.Minute, secretWhat, func(ctx context.Context, plan, state *Model, _ *diag.Diagnostics) (*Model, error) {
		var value []byte
		if !plan.Value.Equal(state.Value) || !plan.ValueWOVersion.Equal(state.ValueWOVersion) {
			var err error
			if value, err = configuredValue(ctx, plan, func(ctx context.Context, v any) diag.Diagnostics {
				return req.Config.GetAttribute(ctx, path.Root("value_wo"), v)
			}); err != nil {
				return nil, err
			}
		}
		spec := plan.spec()
		spec.UUID = state.ID.ValueString()
		s, err := r.Client.DefineSecret(ctx, spec, value)
		if err != nil {
			return nil, err
		}
		plan.fromSpec(s)
		return plan, nil
	})
}

// Read reads the definition, and the value when state keeps one and libvirt shows it.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	trackSecret(ctx, req.State)
	tfkit.Refresh(ctx, req, resp, time.Minute, secretWhat, func(ctx context.Context, m *Model) (*Model, error) {
		s, err := r.Client.GetSecret(ctx, m.ID.ValueString())
		if err != nil {
			return nil, err
		}
		m.fromSpec(s)
		imported, _ := req.Private.GetKey(ctx, secretImportedKey)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, secretImportedKey, nil)...)
		if (m.Value.IsNull() && imported == nil) || s.Private {
			return m, nil
		}
		b, ok, err := r.Client.SecretValue(ctx, s.UUID)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			m.Value = types.StringNull() // no value on the host: the next plan sets it
		case secretText(s.UsageType, b) != m.Value.ValueString():
			m.Value = types.StringValue(secretText(s.UsageType, b))
		}
		return m, nil
	})
}

func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 2*time.Minute, secretWhat, func(ctx context.Context, state *Model, _ *diag.Diagnostics) error {
		return r.Client.DeleteSecret(ctx, state.ID.ValueString())
	})
}

// secretImportedKey marks, in private state, a secret just imported: its first Read
// reads the value too (unless the secret is private), so that a configuration with
// `value` plans clean. One with `value_wo` shows a value in state until it is applied.
const secretImportedKey = "imported"

// ImportState takes the UUID.
func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !validators.UUIDRegexp.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("expected the secret's UUID (virsh secret-list), got %q", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, secretImportedKey, []byte(`true`))...)
}

// ValidateConfig checks a ceph value's encoding at plan time.
func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m Model
	if d := req.Config.Get(ctx, &m); d.HasError() || !tfkit.Known(m.UsageType) {
		return
	}
	for _, v := range []struct {
		name string
		text types.String
	}{{"value", m.Value}, {"value_wo", m.ValueWO}} {
		if tfkit.Known(v.text) {
			if _, err := secretBytes(m.UsageType.ValueString(), v.text.ValueString()); err != nil {
				resp.Diagnostics.AddAttributeError(path.Root(v.name), "Invalid ceph key", fmt.Sprintf("libvirt_secret for %s: %s.", m.UsageName.ValueString(), err))
			}
		}
	}
}
