package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// The state upgrade from v2 (schema version 0) to v3 (version 1): every v2 attribute that
// v3 puts into a group moves there (v2Moves), and then, since a v3 group holds only what
// the configuration writes while v2 state also held what libvirt filled in, each grouped
// value is kept only where an import of the same domain would write it: where the domain
// differs from what the provider creates without it (ADR 9). A v2 configuration that wrote
// a value equal to that default plans it once as an in-place update that changes nothing
// on the host; docs/guides/upgrading-to-v3.md says so.

// v2Moves maps a v2 top-level attribute to its v3 group and name.
var v2Moves = map[string][2]string{
	"arch": {groupOS, "arch"}, "machine": {groupOS, "machine"}, "emulator": {groupOS, "emulator"},
	"boot_devices": {groupOS, "boot"}, "boot_menu": {groupOS, "boot_menu"}, "kernel": {groupOS, "kernel"},
	"secure_boot": {groupOS, "secure_boot"}, "smbios": {groupOS, "smbios"}, "fw_cfg": {groupOS, "fw_cfg"},
	"cpu_mode": {groupCPU, "mode"}, "cpu_model": {groupCPU, "model"}, "cpu_features": {groupCPU, "feature"},
	"cpu_topology": {groupCPU, "topology"}, "numa_cell": {groupCPU, "numa_cell"}, "cpu_pinning": {groupCPU, "pinning"},
	"emulator_pinning": {groupCPU, "emulator_pinning"}, "iothreads": {groupCPU, "iothreads"},
	"on_poweroff": {groupEvents, "on_poweroff"}, "on_reboot": {groupEvents, "on_reboot"}, "on_crash": {groupEvents, "on_crash"},
	"video": {groupDevices, "video"}, "sound": {groupDevices, "sound"}, "input": {groupDevices, "input"},
	"serial": {groupDevices, "serial"}, "console": {groupDevices, "console"}, "channel": {groupDevices, "channel"},
	"watchdog": {groupDevices, "watchdog"}, "rng": {groupDevices, "rng"}, "tpm": {groupDevices, "tpm"},
	"panic": {groupDevices, "panic"}, "vsock": {groupDevices, "vsock"}, "memballoon": {groupDevices, "memballoon"},
	"qemu_args": {groupQEMU, "args"}, "qemu_env": {groupQEMU, "env"},
}

// prunedTopLevel are v3 top-level attributes that follow the group rule too (v2 filled them
// from libvirt; v3 holds only what is written).
var prunedTopLevel = []string{"features", "memory_backing"}

func (r *Resource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: r.upgradeFromV2}}
}

func (r *Resource) upgradeFromV2(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	if req.RawState == nil || len(req.RawState.JSON) == 0 {
		resp.Diagnostics.AddError("Unable to upgrade libvirt_domain state", "the stored state is not JSON; nothing to upgrade from")
		return
	}
	var v2 map[string]any
	if err := json.Unmarshal(req.RawState.JSON, &v2); err != nil {
		resp.Diagnostics.AddError("Unable to upgrade libvirt_domain state", fmt.Sprintf("the stored v2 state does not decode: %v", err))
		return
	}
	v3, _ := fitToType(movedToGroups(v2), typ).(map[string]any) // v3's shapes first: the import view has them
	id, _ := v2["id"].(string)
	if written, err := r.importView(ctx, id, sr.Schema); err != nil {
		if !errors.Is(err, libvirt.ErrNotFound) {
			resp.Diagnostics.AddWarning("libvirt_domain state upgraded without its host",
				fmt.Sprintf("libvirt_domain %s: the state moved to v3's groups as it was, since the domain could not be read (%v). "+
					"Values libvirt filled in for v2 may show as changes until the next plan with the host reachable.", nameOfState(v2), err))
		}
	} else {
		pruneToWritten(v3, written)
	}
	b, err := json.Marshal(v3)
	if err != nil {
		resp.Diagnostics.AddError("Unable to upgrade libvirt_domain state", err.Error())
		return
	}
	resp.DynamicValue = &tfprotov6.DynamicValue{JSON: b}
}

func nameOfState(v map[string]any) string {
	if n, ok := v["name"].(string); ok && n != "" {
		return n
	}
	id, _ := v["id"].(string)
	return id
}

// movedToGroups is the v2 state with every attribute of v2Moves in its group.
func movedToGroups(v2 map[string]any) map[string]any {
	v3 := map[string]any{}
	groups := map[string]map[string]any{}
	for k, v := range v2 {
		mv, ok := v2Moves[k]
		if !ok {
			v3[k] = v
			continue
		}
		if groups[mv[0]] == nil {
			groups[mv[0]] = map[string]any{}
		}
		groups[mv[0]][mv[1]] = v
	}
	for g, vals := range groups {
		v3[g] = vals
	}
	return v3
}

// importView is what an import of the domain writes, as the schema's value by top-level
// attribute: the grouped values the domain has that differ from what the provider
// creates without them.
func (r *Resource) importView(ctx context.Context, id string, s schema.Schema) (map[string]tftypes.Value, error) {
	if r.Client == nil || id == "" {
		return nil, errors.New("the provider is not configured")
	}
	st := tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
	var prior Model
	if d := st.SetAttribute(ctx, path.Root("id"), id); d.HasError() {
		return nil, errors.New("build an import's prior state")
	}
	if d := st.Get(ctx, &prior); d.HasError() {
		return nil, errors.New("build an import's prior state")
	}
	m, err := r.read(ctx, id, &prior, 0)
	if err != nil {
		return nil, err
	}
	if d := tfkit.SetState(ctx, &st, m); d.HasError() {
		return nil, errors.New("store the domain as v3 state")
	}
	var out map[string]tftypes.Value
	if err := st.Raw.As(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// pruneToWritten sets to null each value of a group (and of features / memory_backing),
// at any depth, that the import view leaves null, and a group left with nothing in it.
func pruneToWritten(v3 map[string]any, written map[string]tftypes.Value) {
	names := []string{groupOS, groupCPU, groupEvents, groupDevices, groupQEMU}
	for _, g := range append(names, prunedTopLevel...) {
		if _, ok := v3[g]; !ok {
			continue
		}
		imp, ok := written[g]
		if !ok {
			imp = tftypes.NewValue(tftypes.DynamicPseudoType, nil)
		}
		v3[g] = pruneValue(v3[g], imp)
		if obj, ok := v3[g].(map[string]any); ok && !anyNonNil(obj) {
			v3[g] = nil // v2 held nothing the import writes: the group was never written
		}
	}
}

func anyNonNil(m map[string]any) bool {
	for _, v := range m {
		if v != nil {
			return true
		}
	}
	return false
}

// pruneValue is v with every part the import view imp leaves null set to null: objects
// attribute by attribute, lists element by element (sets and maps whole: their elements
// are not matched by position). An object the import writes stays, even empty (a default
// TPM imports as tpm = {}).
func pruneValue(v any, imp tftypes.Value) any {
	if v == nil || imp.IsNull() || !imp.IsKnown() {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		if _, ok := imp.Type().(tftypes.Object); !ok {
			return v
		}
		var attrs map[string]tftypes.Value
		if imp.As(&attrs) != nil {
			return v
		}
		for k, e := range x {
			a, ok := attrs[k]
			if !ok {
				x[k] = nil
				continue
			}
			x[k] = pruneValue(e, a)
		}
		return x
	case []any:
		if _, ok := imp.Type().(tftypes.List); !ok {
			return v
		}
		var elems []tftypes.Value
		if imp.As(&elems) != nil {
			return v
		}
		for i := range x {
			if i >= len(elems) {
				continue
			}
			x[i] = pruneValue(x[i], elems[i])
		}
		return x
	}
	return v
}

// fitToType shapes a decoded JSON value to t: attributes t does not have are dropped, a
// single object where t wants a list or set becomes a list of one (v2's single devices
// are v3 lists), a bool where t wants an object with `enabled` becomes that object
// (v2's boot_menu), and anything that still does not fit is null.
func fitToType(v any, t tftypes.Type) any {
	if v == nil {
		return nil
	}
	switch t := t.(type) {
	case tftypes.Object:
		if b, ok := v.(bool); ok {
			if _, has := t.AttributeTypes["enabled"]; has {
				v = map[string]any{"enabled": b}
			}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		out := make(map[string]any, len(t.AttributeTypes))
		for k, at := range t.AttributeTypes {
			out[k] = fitToType(m[k], at)
		}
		return out
	case tftypes.List:
		return fitElems(v, t.ElementType)
	case tftypes.Set:
		return fitElems(v, t.ElementType)
	case tftypes.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = fitToType(e, t.ElementType)
		}
		return out
	}
	return v
}

func fitElems(v any, elem tftypes.Type) any {
	if m, ok := v.(map[string]any); ok {
		v = []any{m}
	}
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]any, 0, len(l))
	for _, e := range l {
		out = append(out, fitToType(e, elem))
	}
	return out
}
