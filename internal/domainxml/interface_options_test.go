package domainxml

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func ptr[T any](v T) *T { return &v }

// nicSpec has one NIC of each source with every option set.
func nicSpec() Spec {
	s := Spec{Name: "n", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Firmware: FirmwareBIOS, Graphics: Graphics{Type: GraphicsNone}}
	s.Interfaces = []Interface{
		{Direct: &Direct{Dev: "eth0", Mode: "bridge"}, MAC: "52:54:00:00:00:01", Model: "virtio",
			NICOptions: NICOptions{MTU: 9000, Queues: 2, LinkState: LinkStateDown, BootOrder: 1,
				ROM: &ROM{Bar: "off"}, TrustGuestRXFilters: ptr(true)}},
		{Bridge: "br0", MAC: "52:54:00:00:00:02", Model: "virtio", NICOptions: NICOptions{
			VLAN:        &VLAN{Tags: []uint{42, 43}, Trunk: true, NativeTag: 7, NativeMode: "untagged"},
			VirtualPort: &VirtualPort{Type: VirtualPortOVS, InterfaceID: "e4c424fd-9215-41fa-b14f-d0b7152f1fd1", ProfileID: "p"},
			ROM:         &ROM{File: "/srv/pxe.rom"}}},
		{Network: "default", MAC: "52:54:00:00:00:03", Model: "e1000", NICOptions: NICOptions{
			PortGroup: "pg1", VirtualPort: &VirtualPort{Type: VirtualPortQbg, InterfaceID: "dfdddc32-c6b0-4853-a54f-a9647e9b2f4c"},
			Bandwidth:           &Bandwidth{Inbound: &BandwidthLimit{Average: 1000, Peak: 2000, Burst: 512}, Outbound: &BandwidthLimit{Average: 100}},
			Filter:              &Filter{Name: "clean-traffic", Parameters: map[string]string{"IP": "10.0.0.1", "A": "b"}},
			TrustGuestRXFilters: ptr(false)}},
		{Bridge: "br1", MAC: "52:54:00:00:00:04", Model: "virtio", NICOptions: NICOptions{
			VirtualPort: &VirtualPort{Type: VirtualPortQbh, ProfileID: "prof1"}}},
	}
	return s
}

func TestNICOptions_roundTrip(t *testing.T) {
	s := nicSpec()
	_, text := build(t, nil, s)
	for _, want := range []string{`<source dev="eth0" mode="bridge">`, `<driver queues="2">`, `<mtu size="9000">`,
		`<link state="down">`, `<boot order="1">`, `<rom bar="off">`, `trustGuestRxFilters="yes"`, `trustGuestRxFilters="no"`,
		`<vlan trunk="yes">`, `<tag id="7" nativeMode="untagged">`, `<virtualport type="openvswitch">`,
		`<virtualport type="802.1Qbg">`, `<virtualport type="802.1Qbh">`, `<source network="default" portgroup="pg1">`,
		`<parameter name="A" value="b">`, `<inbound average="1000" peak="2000" burst="512">`,
		`<rom file="/srv/pxe.rom">`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, "<boot dev=") {
		t.Errorf("a NIC boot order must drop <os><boot dev>:\n%s", text)
	}
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Spec.Interfaces, s.Interfaces) {
		t.Errorf("round trip:\n got %+v\nwant %+v", p.Spec.Interfaces, s.Interfaces)
	}
	if Classify(s, p.Spec, true, true) != ChangeNone {
		t.Error("a round trip must be the same")
	}
}

// What libvirt 9.0 wrote back for a definition with these options (virsh define, then
// dumpxml --inactive): the same as the spec that asked for it, with libvirt's fills.
func TestNICOptions_libvirtFixture(t *testing.T) {
	text, err := os.ReadFile("testdata/nic_options_inactive.xml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Spec.Interfaces
	if len(got) != 4 {
		t.Fatalf("want 4 NICs, got %+v", got)
	}
	asked := []Interface{
		{Direct: &Direct{Dev: "eth0"}, Model: "virtio"},
		{Bridge: "br0", Model: "virtio", NICOptions: NICOptions{VLAN: &VLAN{Tags: []uint{42}, NativeTag: 43, NativeMode: "untagged"},
			VirtualPort: &VirtualPort{Type: VirtualPortOVS}, Queues: 2, MTU: 9000, LinkState: LinkStateDown, BootOrder: 1, ROM: &ROM{Bar: "off"}}},
		{Network: "default", Model: "e1000", NICOptions: NICOptions{PortGroup: "pg1", TrustGuestRXFilters: ptr(true),
			VirtualPort: &VirtualPort{Type: VirtualPortQbg},
			Bandwidth:   &Bandwidth{Inbound: &BandwidthLimit{Average: 1000, Peak: 2000, Burst: 512}, Outbound: &BandwidthLimit{Average: 100}},
			Filter:      &Filter{Name: "clean-traffic", Parameters: map[string]string{"IP": "10.0.0.1"}}}},
		{Bridge: "br0", Model: "rtl8139", NICOptions: NICOptions{VirtualPort: &VirtualPort{Type: VirtualPortQbh, ProfileID: "prof1"},
			ROM: &ROM{File: "/tmp/x.rom"}}},
	}
	if !interfaceFamily.same(Spec{Interfaces: asked}, Spec{Interfaces: got}) {
		t.Errorf("libvirt's fills read as drift:\n got %+v", got)
	}
	if got[0].Direct.Mode != DirectModeVEPA || got[1].VirtualPort.InterfaceID == "" || got[2].VirtualPort.InterfaceID == "" {
		t.Errorf("want libvirt's vepa mode and generated ids read back, got %+v", got)
	}
	// Rebuilding onto the definition keeps the generated ids when the spec has none.
	_, text2 := build(t, mustDomain(t, string(text)), Spec{Name: "nic-options", Type: "qemu", VCPU: 1, MemoryKiB: 64 * KiBPerMiB,
		Firmware: FirmwareBIOS, Graphics: Graphics{Type: GraphicsNone}, Interfaces: withMACs(asked, got)})
	for _, id := range []string{got[1].VirtualPort.InterfaceID, got[2].VirtualPort.InterfaceID} {
		if !strings.Contains(text2, id) {
			t.Errorf("generated id %s lost on rebuild:\n%s", id, text2)
		}
	}
}

func withMACs(asked, got []Interface) []Interface {
	out := make([]Interface, len(asked))
	for i := range asked {
		out[i] = asked[i]
		out[i].MAC = got[i].MAC
	}
	return out
}

func TestNICOptions_same(t *testing.T) {
	base := Interface{Bridge: "br0", NICOptions: NICOptions{VLAN: &VLAN{Tags: []uint{1, 2}}}}
	tests := []struct {
		name string
		a, b func(*Interface)
		same bool
	}{
		{"implied trunk", func(n *Interface) {}, func(n *Interface) { n.VLAN = &VLAN{Tags: []uint{1, 2}, Trunk: true} }, true},
		{"link up is absent", func(n *Interface) {}, func(n *Interface) { n.LinkState = LinkStateUp }, true},
		{"link down", func(n *Interface) {}, func(n *Interface) { n.LinkState = LinkStateDown }, false},
		{"trust no is absent", func(n *Interface) {}, func(n *Interface) { n.TrustGuestRXFilters = ptr(false) }, true},
		{"trust yes", func(n *Interface) {}, func(n *Interface) { n.TrustGuestRXFilters = ptr(true) }, false},
		{"vepa is default", func(n *Interface) { n.Bridge, n.Direct = "", &Direct{Dev: "e"} },
			func(n *Interface) { n.Bridge, n.Direct = "", &Direct{Dev: "e", Mode: "vepa"} }, true},
		{"direct mode", func(n *Interface) { n.Bridge, n.Direct = "", &Direct{Dev: "e"} },
			func(n *Interface) { n.Bridge, n.Direct = "", &Direct{Dev: "e", Mode: "bridge"} }, false},
		{"generated id", func(n *Interface) { n.VirtualPort = &VirtualPort{Type: VirtualPortOVS} },
			func(n *Interface) { n.VirtualPort = &VirtualPort{Type: VirtualPortOVS, InterfaceID: "x"} }, true},
		{"other id", func(n *Interface) { n.VirtualPort = &VirtualPort{Type: VirtualPortOVS, InterfaceID: "y"} },
			func(n *Interface) { n.VirtualPort = &VirtualPort{Type: VirtualPortOVS, InterfaceID: "x"} }, false},
		{"bandwidth", func(n *Interface) { n.Bandwidth = &Bandwidth{Inbound: &BandwidthLimit{Average: 1}} },
			func(n *Interface) { n.Bandwidth = &Bandwidth{Inbound: &BandwidthLimit{Average: 2}} }, false},
		{"filter params", func(n *Interface) { n.Filter = &Filter{Name: "f"} },
			func(n *Interface) { n.Filter = &Filter{Name: "f", Parameters: map[string]string{"IP": "1"}} }, false},
		{"queues", func(n *Interface) {}, func(n *Interface) { n.Queues = 2 }, false},
		{"mtu", func(n *Interface) {}, func(n *Interface) { n.MTU = 1400 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base, base
			tc.a(&a)
			tc.b(&b)
			if got := interfaceFamily.same(Spec{Interfaces: []Interface{a}}, Spec{Interfaces: []Interface{b}}); got != tc.same {
				t.Errorf("same = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestNICOptions_validate(t *testing.T) {
	tests := map[string]struct {
		nic  Interface
		want string
	}{
		"two sources":   {Interface{Network: "n", Direct: &Direct{Dev: "e"}}, "exactly one of network, bridge and direct"},
		"no source":     {Interface{}, "exactly one of"},
		"port group":    {Interface{Bridge: "b", NICOptions: NICOptions{PortGroup: "p"}}, "port_group needs a network"},
		"queues":        {Interface{Bridge: "b", Model: "e1000", NICOptions: NICOptions{Queues: 2}}, "queues needs model virtio"},
		"vlan range":    {Interface{Bridge: "b", NICOptions: NICOptions{VLAN: &VLAN{Tags: []uint{5000}}}}, "beyond 4095"},
		"vlan empty":    {Interface{Bridge: "b", NICOptions: NICOptions{VLAN: &VLAN{}}}, "needs tags or native_tag"},
		"native":        {Interface{Bridge: "b", NICOptions: NICOptions{VLAN: &VLAN{NativeTag: 3}}}, "go together"},
		"qbh":           {Interface{Bridge: "b", NICOptions: NICOptions{VirtualPort: &VirtualPort{Type: VirtualPortQbh}}}, "needs profile_id"},
		"qbg":           {Interface{Bridge: "b", NICOptions: NICOptions{VirtualPort: &VirtualPort{Type: VirtualPortQbg, ProfileID: "p"}}}, "no profile_id"},
		"bandwidth":     {Interface{Bridge: "b", NICOptions: NICOptions{Bandwidth: &Bandwidth{Outbound: &BandwidthLimit{Peak: 1}}}}, "outbound needs average_kib"},
		"boot conflict": {Interface{Bridge: "b", NICOptions: NICOptions{BootOrder: 1}}, "boot_order 1 is already used"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := nicSpec()
			s.Disks = []Disk{{Path: "/p", BootOrder: 1}}
			s.Interfaces = []Interface{tc.nic}
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	if err := nicSpec().Validate(); err != nil {
		t.Errorf("nicSpec: %v", err)
	}
}

func mustDomain(t *testing.T, text string) *libvirtxml.Domain {
	t.Helper()
	d := &libvirtxml.Domain{}
	if err := d.Unmarshal(text); err != nil {
		t.Fatal(err)
	}
	return d
}

// link_state and bandwidth change a running domain live; every other NIC option restarts
// it; a stopped one is only redefined.
func TestNICOptions_classify(t *testing.T) {
	want := map[string]Change{"link_state": ChangeLive, "bandwidth": ChangeLive}
	for name, change := range map[string]func(*Interface){
		"link_state": func(n *Interface) { n.LinkState = LinkStateDown },
		"bandwidth":  func(n *Interface) { n.Bandwidth = &Bandwidth{Outbound: &BandwidthLimit{Average: 5}} },
		"vlan":       func(n *Interface) { n.VLAN = &VLAN{Tags: []uint{9}} },
		"direct":     func(n *Interface) { n.Network, n.Direct = "", &Direct{Dev: "eth0"} },
	} {
		if want[name] == "" {
			want[name] = ChangeRestart
		}
		old := nicSpec()
		next := nicSpec()
		next.Interfaces = append([]Interface(nil), old.Interfaces...)
		change(&next.Interfaces[2])
		if got := Classify(old, next, true, true); got != want[name] {
			t.Errorf("%s on a running domain: %s, want %s", name, got, want[name])
		}
		if got := Classify(old, next, false, false); got != ChangeDefinition {
			t.Errorf("%s on a stopped domain: %s, want definition", name, got)
		}
	}
}

func TestNICLiveChange(t *testing.T) {
	old := nicSpec().Interfaces[2]
	next := old
	next.LinkState, next.Bandwidth = LinkStateDown, &Bandwidth{Inbound: &BandwidthLimit{Average: 7}}
	if link, bw, ok := NICLiveChange(old, next); !link || !bw || !ok {
		t.Errorf("link and bandwidth only: got link %v bandwidth %v ok %v", link, bw, ok)
	}
	next.MTU = 1400
	if _, _, ok := NICLiveChange(old, next); ok {
		t.Error("an mtu change is not live")
	}
	if link, bw, ok := NICLiveChange(old, old); link || bw || !ok {
		t.Errorf("no change: got link %v bandwidth %v ok %v", link, bw, ok)
	}
}
