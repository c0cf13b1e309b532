package storage

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

func permsObject(owner, group attr.Value, mode, label attr.Value) types.Object {
	return types.ObjectValueMust(volumePermsTypes, map[string]attr.Value{"owner": owner, "group": group, "mode": mode, "label": label})
}

// Permissions are read from libvirt where state has none (create, import, a state from
// before the attribute) and kept after: libvirt's DAC driver changing a running
// domain's disk owner is no drift.
func TestPermsValue(t *testing.T) {
	ctx := context.Background()
	running := &libvirt.VolumePermissions{Owner: "64055", Group: "64055", Mode: "0600"}
	made := permsObject(types.Int64Value(0), types.Int64Value(0), types.StringValue("0600"), types.StringNull())
	for name, c := range map[string]struct {
		got         *libvirt.VolumePermissions
		prior, want types.Object
	}{
		"state kept":       {running, made, made},
		"import":           {running, types.ObjectNull(volumePermsTypes), permsObject(types.Int64Value(64055), types.Int64Value(64055), types.StringValue("0600"), types.StringNull())},
		"none reported":    {nil, types.ObjectNull(volumePermsTypes), types.ObjectNull(volumePermsTypes)},
		"unset uid is -1":  {&libvirt.VolumePermissions{Owner: "-1", Group: "-1"}, types.ObjectUnknown(volumePermsTypes), types.ObjectNull(volumePermsTypes)},
		"created, partial": {&libvirt.VolumePermissions{Owner: "0", Group: "0", Mode: "0640"}, permsObject(types.Int64Unknown(), types.Int64Unknown(), types.StringValue("0640"), types.StringUnknown()), permsObject(types.Int64Value(0), types.Int64Value(0), types.StringValue("0640"), types.StringNull())},
		"label kept without SELinux": {&libvirt.VolumePermissions{Owner: "0", Group: "0", Mode: "0600"},
			permsObject(types.Int64Unknown(), types.Int64Unknown(), types.StringUnknown(), types.StringValue("system_u:object_r:virt_image_t:s0")),
			permsObject(types.Int64Value(0), types.Int64Value(0), types.StringValue("0600"), types.StringValue("system_u:object_r:virt_image_t:s0"))},
	} {
		if got := permsValue(ctx, c.got, c.prior); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
