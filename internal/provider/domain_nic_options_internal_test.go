package provider

import (
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// What libvirt fills in reads back in the form the prior NIC had (null or explicit), and
// an import (no prior) reads libvirt's defaults as null.
func TestNICOptionsModelOf_keepsPriorForm(t *testing.T) {
	yes, no := true, false
	parsed := domainxml.Interface{Bridge: "br0", NICOptions: domainxml.NICOptions{
		LinkState: domainxml.LinkStateUp, TrustGuestRXFilters: &no,
		VLAN: &domainxml.VLAN{Tags: []uint{1, 2}, Trunk: true},
	}}
	got := nicOptionsModelOf(parsed, nil)
	if !got.VLAN.Trunk.IsNull() || !got.TrustGuestRXFilters.Equal(types.BoolValue(false)) || got.LinkState.ValueString() != "up" {
		t.Errorf("import: implied trunk must read as null, explicit up/no kept, got %+v", got)
	}
	prior := &nicModel{nicOptionsModel: nicOptionsModel{LinkState: types.StringNull(), TrustGuestRXFilters: types.BoolNull(),
		VLAN: &nicVLANModel{Trunk: types.BoolValue(false)}}}
	got = nicOptionsModelOf(parsed, prior)
	if !got.LinkState.IsNull() || !got.TrustGuestRXFilters.IsNull() || !got.VLAN.Trunk.Equal(types.BoolValue(false)) {
		t.Errorf("with a prior: want its null link, null trust and trunk = false kept, got %+v", got)
	}
	parsed.TrustGuestRXFilters, parsed.LinkState = &yes, domainxml.LinkStateDown
	got = nicOptionsModelOf(parsed, prior)
	if got.LinkState.ValueString() != "down" || !got.TrustGuestRXFilters.ValueBool() {
		t.Errorf("a real change must show, got %+v", got)
	}
	d := nicOptionsModelOf(domainxml.Interface{Direct: &domainxml.Direct{Dev: "eth0"}}, nil)
	if d.Direct.Mode.ValueString() != domainxml.DirectModeVEPA {
		t.Errorf("direct mode: want vepa, got %v", d.Direct.Mode)
	}
}

// The spec from a model and the model from that spec agree.
func TestNICOptions_specRoundTrip(t *testing.T) {
	m := nicOptionsModel{
		Direct: &nicDirectModel{Dev: types.StringValue("eth0"), Mode: types.StringValue("bridge")}, PortGroup: types.StringNull(),
		MTU: types.Int64Value(9000), Queues: types.Int64Value(2), BootOrder: types.Int64Value(3), LinkState: types.StringValue("down"),
		VLAN:                &nicVLANModel{Tags: []types.Int64{types.Int64Value(5)}, Trunk: types.BoolValue(true), NativeTag: types.Int64Null(), NativeMode: types.StringNull()},
		VirtualPort:         &nicVirtualPortModel{Type: types.StringValue("openvswitch"), InterfaceID: types.StringNull(), ProfileID: types.StringValue("p")},
		Bandwidth:           &nicBandwidthModel{Inbound: &nicLimitModel{Average: types.Int64Value(10), Peak: types.Int64Null(), Burst: types.Int64Value(4)}},
		ROM:                 &nicROMModel{Bar: types.StringValue("off"), File: types.StringNull()},
		Filter:              &nicFilterModel{Name: types.StringValue("clean-traffic"), Parameters: map[string]types.String{"IP": types.StringValue("10.0.0.1")}},
		TrustGuestRXFilters: types.BoolValue(true),
	}
	var n domainxml.Interface
	nicOptionsSpec(m, &n)
	back := nicOptionsModelOf(n, &nicModel{nicOptionsModel: m})
	a, b := domainxml.Interface{}, domainxml.Interface{}
	nicOptionsSpec(m, &a)
	nicOptionsSpec(back, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("round trip:\n got %+v\nwant %+v", b, a)
	}
}
