package domainxml

import (
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func netSpec(disks ...Disk) Spec {
	return Spec{Name: "n", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Firmware: FirmwareBIOS, Graphics: Graphics{Type: GraphicsNone},
		Disks: disks}
}

func TestNetworkDisk_roundTrip(t *testing.T) {
	rbd := &NetworkSource{Protocol: ProtocolRBD, Name: "pool/image", Hosts: []NetworkHost{{Name: "mon1", Port: 6789}, {Name: "mon2"}},
		Auth: &DiskAuth{Username: "libvirt", SecretID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f"}}
	nbd := &NetworkSource{Protocol: ProtocolNBD, Name: "exp", Hosts: []NetworkHost{{Name: "127.0.0.1", Port: 10809}}}
	s := netSpec(Disk{Network: rbd, Device: DeviceDisk, Format: "raw"}, Disk{Network: nbd, Device: DeviceDisk})
	_, text := build(t, nil, s)
	for _, want := range []string{`<disk type="network" device="disk">`, `<source protocol="rbd" name="pool/image">`,
		`<host name="mon1" port="6789">`, `<host name="mon2">`, `<auth username="libvirt">`,
		`<secret type="ceph" uuid="0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f">`, `<source protocol="nbd" name="exp">`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Spec.Disks[0].Network, rbd) || !reflect.DeepEqual(p.Spec.Disks[1].Network, nbd) || p.Spec.Disks[0].Path != "" {
		t.Fatalf("read back %+v / %+v", p.Spec.Disks[0], p.Spec.Disks[1])
	}
	if Classify(s, p.Spec, true, true) != ChangeNone {
		t.Fatal("a network disk must read back the same")
	}
	moved := netSpec(Disk{Network: &NetworkSource{Protocol: ProtocolRBD, Name: "pool/other", Hosts: rbd.Hosts, Auth: rbd.Auth}}, s.Disks[1])
	if Classify(s, moved, true, true) != ChangeRestart {
		t.Fatal("another image is another disk")
	}
}

// An older definition has <auth> beside <source>, not inside it: it reads the same.
func TestNetworkDisk_authBesideSource(t *testing.T) {
	d := libvirtxml.DomainDisk{
		Source: &libvirtxml.DomainDiskSource{Network: &libvirtxml.DomainDiskSourceNetwork{Protocol: "iscsi", Name: "iqn.2026-12.x:t/1",
			Hosts: []libvirtxml.DomainDiskSourceHost{{Name: "san", Port: "3260"}}}},
		Auth: &libvirtxml.DomainDiskAuth{Username: "chap", Secret: &libvirtxml.DomainDiskSecret{Type: "iscsi", UUID: "0B8E7F2C-1D3A-4B5C-9E6F-7A8B9C0D1E2F"}},
	}
	n := parseNetworkSource(&d)
	if n == nil || n.Auth == nil || n.Auth.Username != "chap" || n.Auth.SecretID != "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f" || n.Hosts[0].Port != 3260 {
		t.Fatalf("parsed %+v", n)
	}
}

func TestNetworkDisk_validate(t *testing.T) {
	host := []NetworkHost{{Name: "h"}}
	for want, n := range map[string]*NetworkSource{
		"is not one of":             {Protocol: "gluster", Name: "v/i", Hosts: host},
		"needs a host for nbd":      {Protocol: ProtocolNBD},
		"only rbd takes more":       {Protocol: ProtocolNBD, Hosts: []NetworkHost{{Name: "a"}, {Name: "b"}}},
		"needs the name of the rbd": {Protocol: ProtocolRBD, Hosts: host},
		"take no auth":              {Protocol: ProtocolHTTP, Name: "/x.iso", Hosts: host, Auth: &DiskAuth{Username: "u", SecretID: "s"}},
		"needs both username":       {Protocol: ProtocolRBD, Name: "p/i", Hosts: host, Auth: &DiskAuth{Username: "u"}},
	} {
		if err := netSpec(Disk{Network: n}).Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
	// rbd may leave its monitors to the host's ceph.conf, as libvirt allows (#25).
	if err := netSpec(Disk{Network: &NetworkSource{Protocol: ProtocolRBD, Name: "p/i"}}).Validate(); err != nil {
		t.Errorf("rbd without hosts: %v", err)
	}
	if err := netSpec(Disk{Network: &NetworkSource{Protocol: ProtocolNBD, Hosts: host}, Path: "/x"}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "both a path and a network_source") {
		t.Errorf("path and network_source: %v", err)
	}
}

// A virsh user names the rbd secret by its usage; libvirt keeps that (and the <auth>
// beside <source>, where it was written). It reads as SecretUsage, for the provider to
// resolve to the secret's UUID; a rebuild with the usage (secret_usage) writes it, one
// with the UUID alone the UUID.
func TestNetworkDisk_secretByUsage(t *testing.T) {
	d, p := readFixture(t, "testdata/every_family_defaulted_libvirt.xml")
	var rbd *NetworkSource
	for _, dk := range p.Spec.Disks {
		if dk.Network != nil && dk.Network.Protocol == ProtocolRBD {
			rbd = dk.Network
		}
	}
	want := DiskAuth{Username: "libvirt", SecretUsage: "client.libvirt secret"}
	if rbd == nil || rbd.Auth == nil || *rbd.Auth != want {
		t.Fatalf("rbd disk read as %+v", rbd)
	}
	if err := ValidateNetworkSource("rbd", rbd); err != nil {
		t.Fatal(err)
	}
	_, text := build(t, d, p.Spec)
	if !strings.Contains(text, `<secret type="ceph" usage="client.libvirt secret">`) {
		t.Fatalf("the usage is lost on a rebuild:\n%s", text)
	}
	resolved := *rbd
	resolved.Auth = &DiskAuth{Username: "libvirt", SecretID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f", SecretUsage: want.SecretUsage}
	_, text = build(t, d, netSpec(Disk{Network: &resolved, Device: DeviceDisk, Format: "raw"}))
	if !strings.Contains(text, `<secret type="ceph" usage="client.libvirt secret">`) || strings.Contains(text, "uuid=\"0b8e") {
		t.Fatalf("a secret with its usage (secret_usage) is written by usage alone:\n%s", text)
	}
	resolved.Auth = &DiskAuth{Username: "libvirt", SecretID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f"}
	_, text = build(t, d, netSpec(Disk{Network: &resolved, Device: DeviceDisk, Format: "raw"}))
	if !strings.Contains(text, `<secret type="ceph" uuid="0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f">`) || strings.Contains(text, "usage=") {
		t.Fatalf("a secret without its usage is written by UUID alone:\n%s", text)
	}
}
