package storage

import (
	"context"
	"regexp"
	"strconv"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// volumePerms is libvirt_volume.permissions: the volume's <target><permissions>.
type volumePerms struct {
	Owner types.Int64  `tfsdk:"owner"`
	Group types.Int64  `tfsdk:"group"`
	Mode  types.String `tfsdk:"mode"`
	Label types.String `tfsdk:"label"`
}

var volumePermsTypes = map[string]attr.Type{
	"owner": types.Int64Type, "group": types.Int64Type, "mode": types.StringType, "label": types.StringType,
}

// volumePermissionsAttribute: libvirt reports owner, group and mode of every file-backed
// volume, set or not, so each is computed and kept (a configuration without it plans as
// before); only a configured change replaces the volume, as libvirt cannot change them on
// an existing volume.
func volumePermissionsAttribute() schema.SingleNestedAttribute {
	replaceInt := []planmodifier.Int64{int64planmodifier.UseStateForUnknown(), int64planmodifier.RequiresReplaceIfConfigured()}
	id := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{MarkdownDescription: desc, Optional: true, Computed: true, PlanModifiers: replaceInt,
			Validators: []validator.Int64{int64validator.AtLeast(0)}}
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Owner, group, mode and label libvirt gives the volume's file or device when it makes it. " +
			"Unset fields are libvirt's defaults (for directory pools the daemon's uid and gid, mode `0600`), read back " +
			"when the volume is made or imported and not refreshed after: libvirt itself gives a running domain's disk " +
			"to the qemu user while the domain runs, which is not drift. libvirt cannot change them on an existing " +
			"volume: a configured change replaces the volume; removing a field keeps the volume as it is.",
		Optional: true, Computed: true,
		PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
		Attributes: map[string]schema.Attribute{
			"owner": id("Numeric uid of the owner, e.g. `107` (libvirt takes no user names)."),
			"group": id("Numeric gid of the group, e.g. `107`."),
			"mode": tfkit.DefaultedString("File mode as four octal digits, e.g. `\"0640\"`.",
				stringvalidator.RegexMatches(regexp.MustCompile(`^0[0-7]{3}$`), `must be four octal digits starting with 0, e.g. "0640"`)),
			"label": tfkit.DefaultedString("SELinux label, e.g. `system_u:object_r:virt_image_t:s0`. A host without SELinux ignores it "+
				"and reports none; the configured value is then kept.", stringvalidator.LengthAtLeast(1)),
		},
	}
}

// permsSpec is the known fields of planned permissions, nil when none is known.
func permsSpec(ctx context.Context, o types.Object, d *diag.Diagnostics) *libvirt.VolumePermissions {
	if o.IsNull() || o.IsUnknown() {
		return nil
	}
	var m volumePerms
	d.Append(o.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	p := &libvirt.VolumePermissions{Mode: tfkit.StringOf(m.Mode), Label: tfkit.StringOf(m.Label)}
	if tfkit.Known(m.Owner) {
		p.Owner = strconv.FormatInt(m.Owner.ValueInt64(), 10)
	}
	if tfkit.Known(m.Group) {
		p.Group = strconv.FormatInt(m.Group.ValueInt64(), 10)
	}
	if *p == (libvirt.VolumePermissions{}) {
		return nil
	}
	return p
}

// permsValue is the permissions to keep in state: prior (the state, or a plan) where it is
// wholly known, else what libvirt reports, with a known label of prior kept where libvirt
// reports none (a host without SELinux ignores labels).
//
// Permissions are what the volume was made with: they are read from libvirt when it is
// made, imported, or first refreshed by a provider that has them, never refreshed after.
// libvirt changes them itself while a domain runs on the volume (its DAC driver gives the
// file to the qemu user, and back when the domain stops); that is not drift, and would
// otherwise plan the replacement of a running domain's disk.
func permsValue(ctx context.Context, got *libvirt.VolumePermissions, prior types.Object) types.Object {
	var was volumePerms
	if !prior.IsNull() && !prior.IsUnknown() {
		_ = prior.As(ctx, &was, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})
		if !was.Owner.IsUnknown() && !was.Group.IsUnknown() && !was.Mode.IsUnknown() && !was.Label.IsUnknown() {
			return prior
		}
	}
	if got == nil {
		got = &libvirt.VolumePermissions{}
	}
	m := volumePerms{Owner: numeric(got.Owner), Group: numeric(got.Group), Mode: tfkit.StringOrNull(got.Mode), Label: tfkit.StringOrNull(got.Label)}
	if got.Label == "" && tfkit.Known(was.Label) {
		m.Label = was.Label
	}
	if m == (volumePerms{Owner: types.Int64Null(), Group: types.Int64Null(), Mode: types.StringNull(), Label: types.StringNull()}) {
		return types.ObjectNull(volumePermsTypes)
	}
	v, _ := types.ObjectValueFrom(ctx, volumePermsTypes, m)
	return v
}

// numeric is a uid or gid libvirt reports ("-1" and "" are none).
func numeric(s string) types.Int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return types.Int64Null()
	}
	return types.Int64Value(n)
}
