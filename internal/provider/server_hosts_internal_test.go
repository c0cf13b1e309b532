package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var hostsTestType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"host": tftypes.String, "name": tftypes.String, "disks": tftypes.List{ElementType: tftypes.Object{
		AttributeTypes: map[string]tftypes.Type{"path": tftypes.String}}},
}}

func hostsTestValue(t *testing.T, host any) *tfprotov6.DynamicValue {
	t.Helper()
	disk := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"path": tftypes.String}}
	v := tftypes.NewValue(hostsTestType, map[string]tftypes.Value{
		"host": tftypes.NewValue(tftypes.String, host),
		"name": tftypes.NewValue(tftypes.String, "web"),
		"disks": tftypes.NewValue(tftypes.List{ElementType: disk}, []tftypes.Value{
			tftypes.NewValue(disk, map[string]tftypes.Value{"path": tftypes.NewValue(tftypes.String, "/x")})}),
	})
	dv, err := tfprotov6.NewDynamicValue(hostsTestType, v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// hostOf reads `host` out of a request's msgpack without decoding the rest: a named
// host, a null one (the default host), an unknown one (no host until known: plan-time
// checks ask none); a null object (a create's prior state, a destroy's plan) lets the
// next candidate decide.
func TestHostOf(t *testing.T) {
	for _, c := range []struct {
		host        any
		want        string
		wantPresent bool
	}{
		{"b", "b", true},
		{nil, "", true},
		{tftypes.UnknownValue, unknownHost, true},
	} {
		got, present := hostOf(hostsTestValue(t, c.host))
		if got != c.want || present != c.wantPresent {
			t.Errorf("host %v: got %q %v, want %q %v", c.host, got, present, c.want, c.wantPresent)
		}
	}
	null, err := tfprotov6.NewDynamicValue(hostsTestType, tftypes.NewValue(hostsTestType, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, present := hostOf(&null); present {
		t.Error("a null object names a host")
	}
	if _, present := hostOf(nil); present {
		t.Error("no value names a host")
	}
	ctx := onHost(t.Context(), &null, hostsTestValue(t, "b"))
	if got := tfkit.HostFrom(ctx); got != "b" || tfkit.HostUnknown(ctx) {
		t.Errorf("routed to %q (unknown %v), want b (the first non-null value's)", got, tfkit.HostUnknown(ctx))
	}
	if ctx := onHost(t.Context(), hostsTestValue(t, tftypes.UnknownValue), hostsTestValue(t, "b")); !tfkit.HostUnknown(ctx) {
		t.Error("a plan whose host is not known yet is routed to a host")
	}
}

// An import id starts with a host only when that is one of the provider's named hosts;
// the imported state then says which.
func TestHostPrefixAndWithHost(t *testing.T) {
	hosts := tfkit.NewHosts()
	hosts.AddHost(tfkit.DefaultHost, nil, nil)
	hosts.AddHost("b", nil, nil)
	s := shortcutServer{provider: &libvirtProvider{hosts: hosts}}
	for id, want := range map[string][2]string{
		"b/web":                    {"b", "web"},
		"b/default/52:54:00:aa:bb": {"b", "default/52:54:00:aa:bb"},
		"default/52:54:00:aa:bb":   {}, // a dhcp reservation on network default, default host
		"web-1/before":             {}, // a snapshot: web-1 is no host
		"/var/lib/pool/x.qcow2":    {}, // a volume key
		"b/":                       {},
		"web":                      {},
	} {
		host, rest, ok := s.hostPrefix(id)
		if ok != (want[0] != "") || host != want[0] || rest != want[1] {
			t.Errorf("%q: %q %q %v, want %q %q", id, host, rest, ok, want[0], want[1])
		}
	}
	st, err := withHost(hostsTestType, hostsTestValue(t, nil), "b")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := hostOf(st); got != "b" {
		t.Errorf("imported state's host %q, want b", got)
	}
	noHost := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String}}
	dv, _ := tfprotov6.NewDynamicValue(noHost, tftypes.NewValue(noHost, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, "x")}))
	if _, err := withHost(noHost, &dv, "b"); err == nil {
		t.Error("a type without host took one")
	}
	var _ *libvirt.Client // hosts hold clients; these tests need none
}
