package storage

import (
	"context"
	"fmt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

type poolSourceModel struct {
	Devices   types.List   `tfsdk:"devices"`
	Name      types.String `tfsdk:"name"`
	Host      types.String `tfsdk:"host"`
	Hosts     types.List   `tfsdk:"hosts"`
	Dir       types.String `tfsdk:"dir"`
	Format    types.String `tfsdk:"format"`
	Device    types.String `tfsdk:"device"`
	Initiator types.String `tfsdk:"initiator"`
	Adapter   types.String `tfsdk:"adapter"`
	Auth      types.Object `tfsdk:"auth"`
}

type poolAuthModel struct {
	Username types.String `tfsdk:"username"`
	SecretID types.String `tfsdk:"secret_id"`
}

var poolAuthAttrTypes = map[string]attr.Type{"username": types.StringType, "secret_id": types.StringType}

var poolSourceAttrTypes = map[string]attr.Type{
	"devices": types.ListType{ElemType: types.StringType}, "name": types.StringType,
	"host": types.StringType, "hosts": types.ListType{ElemType: types.StringType}, "dir": types.StringType,
	"format": types.StringType, "device": types.StringType, "initiator": types.StringType, "adapter": types.StringType,
	"auth": types.ObjectType{AttrTypes: poolAuthAttrTypes},
}

// sourceKnown reads the source block; ok is false while a value the spec needs is unknown
// (name and format may be: libvirt fills them in).
func sourceKnown(ctx context.Context, o types.Object, d *diag.Diagnostics) (s poolSourceModel, ok bool) {
	d.Append(o.As(ctx, &s, basetypes.ObjectAsOptions{})...)
	return s, tfkit.AllKnown(s.Devices, s.Host, s.Hosts, s.Dir, s.Device, s.Initiator, s.Adapter, s.Auth)
}

// toSpec is the source block as the spec has it.
func (s *poolSourceModel) toSpec(ctx context.Context, d *diag.Diagnostics) *hostxml.PoolSource {
	src := &hostxml.PoolSource{Name: tfkit.StringOf(s.Name), Host: tfkit.StringOf(s.Host), Dir: tfkit.StringOf(s.Dir), Format: tfkit.StringOf(s.Format),
		Device: tfkit.StringOf(s.Device), Initiator: tfkit.StringOf(s.Initiator), Adapter: tfkit.StringOf(s.Adapter)}
	tfkit.ElementsOf(ctx, s.Devices, &src.Devices, d)
	tfkit.ElementsOf(ctx, s.Hosts, &src.Hosts, d)
	var a poolAuthModel
	if tfkit.PriorObject(ctx, s.Auth, &a, d) {
		src.Auth = &hostxml.PoolAuth{Username: tfkit.StringOf(a.Username), SecretID: tfkit.StringOf(a.SecretID)}
	}
	return src
}

// poolSourceValue is the source block read back from libvirt; lists that were null in
// prior stay null when libvirt has none.
func poolSourceValue(ctx context.Context, src *hostxml.PoolSource, priorSource types.Object) (types.Object, error) {
	var prior poolSourceModel
	var d diag.Diagnostics
	if !tfkit.PriorObject(ctx, priorSource, &prior, &d) {
		prior.Devices = types.ListNull(types.StringType)
		prior.Hosts = types.ListNull(types.StringType)
	}
	if d.HasError() {
		return types.ObjectNull(poolSourceAttrTypes), fmt.Errorf("read the source block: %v", d)
	}
	strs := func(ss []string) []attr.Value {
		var vs []attr.Value
		for _, s := range ss {
			vs = append(vs, types.StringValue(s))
		}
		return vs
	}
	auth := types.ObjectNull(poolAuthAttrTypes)
	if a := src.Auth; a != nil {
		auth = types.ObjectValueMust(poolAuthAttrTypes, map[string]attr.Value{
			"username": tfkit.StringOrNull(a.Username), "secret_id": tfkit.StringOrNull(a.SecretID),
		})
	}
	return types.ObjectValueMust(poolSourceAttrTypes, map[string]attr.Value{
		"devices":   tfkit.ListOrNull(types.StringType, strs(src.Devices), prior.Devices),
		"name":      tfkit.StringOrNull(src.Name),
		"host":      tfkit.StringOrNull(src.Host),
		"hosts":     tfkit.ListOrNull(types.StringType, strs(src.Hosts), prior.Hosts),
		"dir":       tfkit.StringOrNull(src.Dir),
		"format":    tfkit.StringOrNull(src.Format),
		"device":    tfkit.StringOrNull(src.Device),
		"initiator": tfkit.StringOrNull(src.Initiator),
		"adapter":   tfkit.StringOrNull(src.Adapter),
		"auth":      auth,
	}), nil
}
