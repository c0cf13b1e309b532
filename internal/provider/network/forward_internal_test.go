package network

import (
	"context"
	"reflect"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// A network beyond NAT read back from what libvirt keeps is the spec it was made from,
// in the forms the prior model wrote: a pool given as interfaces only (libvirt adds dev),
// an implied trunk, explicit default = false and SRV zeros, which libvirt does not keep.
func TestNetworkModelBeyondNAT(t *testing.T) {
	ctx := context.Background()
	for _, n := range []*hostxml.Network{
		{Name: "r", Mode: hostxml.ModeRoute, Addresses: []string{"10.20.0.0/24"},
			Routes: []hostxml.Route{{Address: "10.30.0.0/24", Gateway: "10.20.0.2", Metric: 3}},
			DNS: &hostxml.DNS{Enabled: true, SRVs: []hostxml.SRV{{Service: "ldap", Protocol: "tcp", Target: "ldap.x", Port: 389}},
				TXTs: []hostxml.TXT{{Name: "a", Value: "b"}}},
			PortGroups:     []hostxml.PortGroup{{Name: "a", Default: true, Bandwidth: &hostxml.Bandwidth{Inbound: &hostxml.BandwidthLimit{Average: 5}}}, {Name: "b"}},
			DnsmasqOptions: []string{"log-queries"}},
		{Name: "m", Mode: hostxml.ModeVEPA, Forward: &hostxml.Forward{Interfaces: []string{"eth1", "eth2"}}},
		{Name: "o", Mode: hostxml.ModeBridge, Bridge: "ovsbr0", VirtualPort: &hostxml.VirtualPort{Type: hostxml.VirtualPortOVS},
			PortGroups: []hostxml.PortGroup{{Name: "t", VLAN: &hostxml.VLAN{Tags: []uint{2, 3}}}}},
	} {
		d, err := n.Definition()
		if err != nil {
			t.Fatal(err)
		}
		if n.Forward != nil && len(n.Forward.Interfaces) > 0 {
			d.Forward.Dev = n.Forward.Interfaces[0] // as libvirt writes it back
		}
		doc, _ := d.Marshal()
		back, err := hostxml.ParseNetworkXML(doc)
		if err != nil {
			t.Fatal(err)
		}
		// The prior: the model of the spec as a configuration writes it (no read).
		prior := Model{Name: types.StringValue(n.Name)}
		st := &libvirt.NetworkState{Doc: back, Def: back.Network}
		if err := prior.fromState(ctx, st, Model{DHCP: types.ObjectNull(networkDHCPAttrTypes), DNS: types.ObjectNull(networkDNSAttrTypes)}); err != nil {
			t.Fatal(err)
		}
		if n.Forward != nil {
			prior.Forward.Dev = types.StringNull() // the configuration gave interfaces only
		}
		var pgs []netPortGroupModel
		var dg diag.Diagnostics
		tfkit.ElementsOf(ctx, prior.PortGroups, &pgs, &dg)
		for i := range pgs {
			if !pgs[i].Default.ValueBool() {
				pgs[i].Default = types.BoolValue(false) // written explicitly
			}
		}
		if len(pgs) > 0 {
			prior.PortGroups, _ = types.SetValueFrom(ctx, tfkit.NestedType(networkAttrTypes["port_groups"]), pgs)
		}
		got := prior
		if err := got.fromState(ctx, st, prior); err != nil {
			t.Fatal(err)
		}
		spec, ok, diags := got.toSpec(ctx)
		if !ok || diags.HasError() {
			t.Fatalf("%s: toSpec: %v", n.Name, diags)
		}
		want := *n
		if want.DNS != nil {
			want.DNS.ManageHosts = false // no hosts in the model
		}
		if spec.Mode == hostxml.ModeNAT {
			spec.Mode = want.Mode
		}
		if !reflect.DeepEqual(spec, &want) {
			t.Errorf("%s: read back as\n %+v\nwant %+v", n.Name, spec, &want)
		}
		if n.Forward != nil && !got.Forward.Dev.IsNull() {
			t.Errorf("%s: dev %s read back, but the configuration gave interfaces only", n.Name, got.Forward.Dev)
		}
		var gotPGs []netPortGroupModel
		tfkit.ElementsOf(ctx, got.PortGroups, &gotPGs, &dg)
		if dg.HasError() {
			t.Fatal(dg)
		}
		for _, g := range gotPGs {
			if g.Default.IsNull() {
				t.Errorf("%s: port group %s: the explicit default = false read back as null", n.Name, g.Name)
			}
			if g.VLAN != nil && !g.VLAN.Trunk.IsNull() {
				t.Errorf("%s: port group %s: trunk %s, want null (implied by two tags)", n.Name, g.Name, g.VLAN.Trunk)
			}
		}
	}
}
