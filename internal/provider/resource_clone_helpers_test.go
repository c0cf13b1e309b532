package provider_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// cloneAccSource defines and starts a source guest directly through libvirt (so the
// clone tests depend on no other resource): the tiny guest on a qcow2 overlay of the
// guest image, its own seed, the agent channel, and a NIC on network when given; with
// uefi, <os firmware='efi'>. It is removed (with its nvram) when the test ends. It
// returns the source's UUID and disk path.
func cloneAccSource(t *testing.T, name, network string, uefi bool) (string, string) {
	t.Helper()
	disk := acctest.Overlay(t, name+".qcow2")
	seed := acctest.Seed(t, name+"-seed.iso", name)
	osXML, nic := "<os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>", ""
	if uefi {
		osXML = "<os firmware='efi'><type arch='x86_64'>hvm</type><boot dev='hd'/></os>"
	}
	if network != "" {
		nic = fmt.Sprintf("<interface type='network'><source network='%s'/><model type='virtio'/></interface>", network)
	}
	xml := fmt.Sprintf(`<domain type='%s'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  %s
  <features><acpi/><apic/></features>
  <devices>
    <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='%s'/><target dev='vda' bus='virtio'/></disk>
    <disk type='file' device='cdrom'><driver name='qemu' type='raw'/><source file='%s'/><target dev='sda' bus='sata'/><readonly/></disk>
    %s
    <serial type='pty'/>
    <console type='pty'/>
    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
  </devices>
</domain>`, acctest.DefaultDomainType(), name, osXML, disk, seed, nic)
	id := acctest.DefineDomain(t, xml)
	acctest.RemoveDomainAtEnd(t, name)
	acctest.StartDomain(t, name)
	return id, disk
}

// cloneAccMACs are the MACs of a domain's interfaces, from its definition.
func cloneAccMACs(t *testing.T, name string) []string {
	t.Helper()
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range live.Inactive.Devices.Interfaces {
		out = append(out, strings.ToLower(n.MAC.Address))
	}
	return out
}

// cloneAccWaitLeases waits until every domain named has a DHCP lease on network and
// returns the address of each; MACs and addresses must all differ.
func cloneAccWaitLeases(t *testing.T, network string, names ...string) (map[string]string, error) {
	macs := map[string]string{}
	for _, n := range names {
		m := cloneAccMACs(t, n)
		if len(m) != 1 {
			return nil, fmt.Errorf("domain %s has %d interfaces, want 1", n, len(m))
		}
		for other, om := range macs {
			if om == m[0] {
				return nil, fmt.Errorf("domains %s and %s share the MAC %s", n, other, om)
			}
		}
		macs[n] = m[0]
	}
	deadline := time.Now().Add(6 * time.Minute)
	for {
		leases, err := acctest.Leases(t, network)
		if err != nil {
			return nil, err
		}
		ips := map[string]string{}
		for n, mac := range macs {
			for _, l := range leases[mac] {
				ips[n] = l.IP
			}
		}
		if len(ips) == len(names) {
			seen := map[string]string{}
			for n, ip := range ips {
				if other, ok := seen[ip]; ok {
					return nil, fmt.Errorf("domains %s and %s both have the address %s", n, other, ip)
				}
				seen[ip] = n
			}
			return ips, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("after 6 minutes only %v of %v have a lease on %s", ips, macs, network)
		}
		time.Sleep(3 * time.Second)
	}
}

// cloneAccDiskPrint is what must not change on a source's disk: the volume as libvirt
// describes it and the sha256 of its bytes, read through libvirt.
func cloneAccDiskPrint(t *testing.T, key string) (string, error) {
	c := acctest.Client(t)
	ctx := acctest.Ctx(t)
	info, err := c.VolumeInfo(ctx, libvirt.VolumeRef{Key: key})
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if err := c.DownloadVolume(ctx, libvirt.VolumeRef{Key: key}, h); err != nil {
		return "", err
	}
	return fmt.Sprintf("path=%s backing=%s format=%s capacity=%d sha256=%s", info.Path, info.Backing, info.Format, info.Capacity, hex.EncodeToString(h.Sum(nil))), nil
}

// cloneAccSourceIntact checks the source still runs on its own disk, unchanged.
func cloneAccSourceIntact(t *testing.T, name, disk, fingerprint string) error {
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		return fmt.Errorf("source %s: %w", name, err)
	}
	if !live.Active {
		return fmt.Errorf("source %s is not running", name)
	}
	var got []string
	for _, d := range live.Live.Devices.Disks {
		if d.Device == "disk" && d.Source != nil && d.Source.File != nil {
			got = append(got, d.Source.File.File)
		}
	}
	if len(got) != 1 || got[0] != disk {
		return fmt.Errorf("source %s runs on %v, want [%s]", name, got, disk)
	}
	now, err := cloneAccDiskPrint(t, disk)
	if err != nil {
		return err
	}
	if now != fingerprint {
		return fmt.Errorf("the source's disk changed:\n  before %s\n  now    %s", fingerprint, now)
	}
	return nil
}

// cloneAccFixedVSock redefines the shut-off domain name with a vsock on a fixed CID (this
// host has no /dev/vhost-vsock, so such a domain is only defined, never started).
func cloneAccFixedVSock(t *testing.T, name string, cid string) {
	t.Helper()
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		t.Fatal(err)
	}
	d := live.Inactive
	d.Devices.VSock = &libvirtxml.DomainVSock{Model: "virtio", CID: &libvirtxml.DomainVSockCID{Auto: "no", Address: cid}}
	text, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	acctest.DefineDomain(t, text)
}

// cloneAccVSockCID is the vsock CID of a domain's definition: "auto" or the fixed one.
func cloneAccVSockCID(t *testing.T, name string) (string, error) {
	live, err := acctest.InspectDomain(t, name)
	if err != nil {
		return "", err
	}
	v := live.Inactive.Devices.VSock
	switch {
	case v == nil || v.CID == nil:
		return "", fmt.Errorf("domain %s has no vsock CID: %+v", name, v)
	case v.CID.Auto == "yes" && v.CID.Address == "":
		return "auto", nil
	}
	return v.CID.Address, nil
}
