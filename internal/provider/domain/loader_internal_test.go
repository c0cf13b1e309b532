package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// os.loader reads back field by field against what was written (flags and type left
// null stay null), os.nvram only where written (an import: its template, and its path
// where it is not libvirt's own); null asks for auto-selection again.
func TestDomainLoaderFromSpec(t *testing.T) {
	yes := true
	s := domainxml.Spec{Name: "l", Firmware: domainxml.FirmwareUEFI,
		Loader: &domainxml.Loader{Path: "/ovmf/CODE.fd", Type: "pflash", Readonly: &yes},
		NVRam:  &domainxml.NVRam{Path: "/var/lib/libvirt/qemu/nvram/l_VARS.fd", Template: "/ovmf/VARS.fd"}}
	written := withGroups(&Model{Name: types.StringValue("l")})
	written.OS.Loader = &loaderModel{Path: types.StringValue("/ovmf/CODE.fd"), Type: types.StringValue("pflash"), Readonly: types.BoolNull(), Secure: types.BoolNull()}
	m := fromSpec(s, written)
	if l := m.OS.Loader; l == nil || l.Path.ValueString() != "/ovmf/CODE.fd" || l.Type.ValueString() != "pflash" || !l.Readonly.IsNull() || !l.Secure.IsNull() {
		t.Errorf("loader: %+v", m.OS.Loader)
	}
	if m.OS.NVRAM != nil {
		t.Errorf("nvram libvirt filled in: %+v", m.OS.NVRAM)
	}
	imp := fromSpec(s, nil)
	if l, n := imp.OS.Loader, imp.OS.NVRAM; l == nil || !l.Readonly.ValueBool() || n == nil || !n.Path.IsNull() || n.Template.ValueString() != "/ovmf/VARS.fd" {
		t.Errorf("import: %+v %+v", l, n)
	}
	if got := specFromModel(withGroups(&Model{})); got.Loader == nil || got.Loader.Path != "" || got.NVRam != nil {
		t.Errorf("null: %+v %+v", got.Loader, got.NVRam)
	}
}
