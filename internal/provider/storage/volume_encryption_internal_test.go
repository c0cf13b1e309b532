package storage

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// The encryption libvirt reports is the state's; a secret libvirt no longer tells (after
// a pool refresh) stays the one state has; a plain volume has none.
func TestVolumeEncryptionFrom(t *testing.T) {
	const id = "ac979fbe-fa18-40bd-b095-2d3b746edad6"
	prior := &volumeEncryptionModel{Format: types.StringValue("luks"), SecretID: types.StringValue(id)}
	for _, tc := range []struct {
		name  string
		got   *libvirt.VolumeEncryption
		prior *volumeEncryptionModel
		want  types.String // the secret_id; null object when unset below
		plain bool
	}{
		{name: "reported", got: &libvirt.VolumeEncryption{Format: "luks", Secret: id}, want: types.StringValue(id)},
		{name: "refreshed", got: &libvirt.VolumeEncryption{Format: "luks"}, prior: prior, want: types.StringValue(id)},
		{name: "refreshed, imported", got: &libvirt.VolumeEncryption{Format: "luks"}, want: types.StringNull()},
		{name: "plain", prior: prior, plain: true},
	} {
		m := volumeEncryptionFrom(tc.got, tc.prior)
		switch {
		case tc.plain && m != nil:
			t.Errorf("%s: %+v for a plain volume", tc.name, m)
		case !tc.plain && (m == nil || !m.SecretID.Equal(tc.want) || m.Format.ValueString() != "luks"):
			t.Errorf("%s: %+v, want secret %s", tc.name, m, tc.want)
		}
	}
}
