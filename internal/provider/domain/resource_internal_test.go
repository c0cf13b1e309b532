package domain

import (
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

func TestFromSpec_keepsWhatTheUserWrote(t *testing.T) {
	s := domainxml.Spec{
		Name: "web", UUID: "8d24d164-d0b5-43b9-81fd-4ee366818f31", Type: "qemu", VCPU: 2, MemoryKiB: 256 * domainxml.KiBPerMiB,
		Machine: "pc-q35-7.2", CPUMode: "custom", CPUModel: "qemu64", Firmware: "bios",
		Disks: []domainxml.Disk{
			{VolumeID: "default/web.qcow2", Path: "/pool/web.qcow2", Device: "disk", Bus: "virtio", Target: "vda", Format: "qcow2"},
			{Path: "/srv/x.iso", Device: "cdrom", Bus: "sata", Target: "sda", Format: "raw", BootOrder: 2},
		},
		CloudInit:  &domainxml.CloudInit{ID: "default/seed.iso", Path: "/pool/seed.iso", Target: "sdb"},
		Interfaces: []domainxml.Interface{{Network: "default", MAC: "52:54:00:aa:bb:cc", Model: "virtio"}},
		Graphics:   domainxml.Graphics{Type: "none", Listen: "127.0.0.1"},
		QemuAgent:  true,
	}
	prior := &Model{UpdateMethod: types.StringValue("live")}
	prior.Name = types.StringValue("web") // not an import
	prior.OS = &domainOSGroup{}
	prior.OS.Machine = types.StringValue("q35")
	prior.MaxVCPU = types.Int64Value(2) // written equal to vcpu: libvirt omits current=
	prior.MaxMemoryMiB = types.Int64Null()
	prior.Graphics = &graphicsModel{Type: types.StringValue("none"), Listen: types.StringValue("0.0.0.0")}
	prior.Interfaces = []nicModel{{MAC: types.StringValue("52:54:00:AA:BB:CC"), WaitForIP: &waitModel{Source: types.StringValue("lease")},
		Addresses: tfkit.StringList([]string{"192.168.122.10"})}}
	m := fromSpec(s, prior)
	if m.OS.Machine.ValueString() != "q35" {
		t.Errorf("machine alias lost: %s", m.OS.Machine)
	}
	if m.MaxVCPU.ValueInt64() != 2 || !m.MaxMemoryMiB.IsNull() {
		t.Errorf("maxima: %s %s", m.MaxVCPU, m.MaxMemoryMiB)
	}
	if m.Graphics.Listen.ValueString() != "0.0.0.0" {
		t.Errorf("listen of graphics none: %s", m.Graphics.Listen)
	}
	if m.Disks[0].VolumeID.ValueString() != "default/web.qcow2" || !m.Disks[0].Path.IsNull() ||
		m.Disks[1].Path.ValueString() != "/srv/x.iso" || !m.Disks[1].VolumeID.IsNull() || m.Disks[1].BootOrder.ValueInt64() != 2 {
		t.Errorf("disks: %+v", m.Disks)
	}
	if m.CloudinitID.ValueString() != "default/seed.iso" || len(m.Disks) != 2 {
		t.Errorf("cloudinit: %s", m.CloudinitID)
	}
	n := m.Interfaces[0]
	if n.MAC.ValueString() != "52:54:00:AA:BB:CC" || n.WaitForIP == nil || len(n.Addresses.Elements()) != 1 || !n.Bridge.IsNull() {
		t.Errorf("nic: %+v", n)
	}
	if m.UpdateMethod.ValueString() != "live" || m.Shutdown.Timeout.ValueString() != defaultShutdownTimeout {
		t.Errorf("prior-only values: %s %+v", m.UpdateMethod, m.Shutdown)
	}
	// An import has no prior: every value from the XML, defaults for the rest.
	imp := fromSpec(s, nil)
	if imp.OS.Machine.ValueString() != "pc-q35-7.2" || imp.UpdateMethod.ValueString() != "none" || imp.Interfaces[0].WaitForIP != nil {
		t.Errorf("import: %+v", imp)
	}
	// A second read with the first as prior asks for what the first asked: a refresh plans
	// no change. (The model's spec is not compared with the parsed one: a group the model
	// leaves null asks to keep what the domain has, which the parsed spec spells out.)
	if c := domainxml.Classify(specFromModel(m), specFromModel(fromSpec(s, m)), true, true); c != domainxml.ChangeNone {
		t.Errorf("read-back classifies as %s", c)
	}
}

func TestConsoleURL(t *testing.T) {
	remote := &libvirt.URI{Host: "kvm1.example.com"}
	for _, tc := range []struct {
		u    *libvirt.URI
		g    domainxml.Graphics
		want string
	}{
		{nil, domainxml.Graphics{Type: "vnc", Listen: "127.0.0.1"}, "vnc://127.0.0.1:5900"},
		{remote, domainxml.Graphics{Type: "vnc", Listen: "0.0.0.0"}, "vnc://kvm1.example.com:5900"},
		{remote, domainxml.Graphics{Type: "spice", Listen: "::"}, "spice://kvm1.example.com:5900"},
		{nil, domainxml.Graphics{Type: "vnc", Listen: "::1"}, "vnc://[::1]:5900"},
	} {
		if got := consoleURL(tc.u, tc.g, 5900); got != tc.want {
			t.Errorf("consoleURL(%v) = %s, want %s", tc.g, got, tc.want)
		}
	}
}

func TestSortAddresses(t *testing.T) {
	got := sortAddresses([]string{"fd00::5", "192.168.122.7", "10.0.0.2", "192.168.122.7"})
	want := []string{"10.0.0.2", "192.168.122.7", "fd00::5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v", got)
	}
	for ip, ok := range map[string]bool{"127.0.0.1": false, "169.254.1.1": false, "fe80::1%eth0": false, "::1": false, "192.168.1.2": true, "2001:db8::1": true} {
		if libvirt.UsableAddress(ip) != ok {
			t.Errorf("UsableAddress(%s) != %v", ip, ok)
		}
	}
}
