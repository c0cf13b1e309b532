package acctest

import (
	"context"
	"fmt"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Domains a test makes directly through libvirt, behind the provider's back: the tiny
// guest on a qcow2 disk, to snapshot, grow or export.

// guestXML is the tiny guest on disk (qcow2, vda): 128 MiB, one vCPU, a pty serial
// console and the guest-agent channel; the host's default domain type.
func guestXML(name, disk string) (string, error) {
	d := &libvirtxml.Domain{
		Type:   DefaultDomainType(),
		Name:   name,
		Memory: &libvirtxml.DomainMemory{Value: 128, Unit: "MiB"},
		VCPU:   &libvirtxml.DomainVCPU{Value: 1},
		OS: &libvirtxml.DomainOS{
			Type:        &libvirtxml.DomainOSType{Arch: "x86_64", Type: "hvm"},
			BootDevices: []libvirtxml.DomainBootDevice{{Dev: "hd"}},
		},
		Features: &libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}, APIC: &libvirtxml.DomainFeatureAPIC{}},
		Devices: &libvirtxml.DomainDeviceList{
			Disks: []libvirtxml.DomainDisk{{
				Device: "disk",
				Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2"},
				Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: disk}},
				Target: &libvirtxml.DomainDiskTarget{Dev: "vda", Bus: "virtio"},
			}},
			Serials:  []libvirtxml.DomainSerial{{Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}}},
			Consoles: []libvirtxml.DomainConsole{{Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}}},
			Channels: []libvirtxml.DomainChannel{{
				Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{}},
				Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: "org.qemu.guest_agent.0"}},
			}},
		},
	}
	return d.Marshal()
}

// DefineGuest defines the tiny guest named name on disk (a qcow2 volume's path), starts it
// when start is set and returns its running id (-1 when not started). It is removed,
// with its snapshots' metadata, when the test ends (and by RemoveDomain before).
func DefineGuest(t testing.TB, name, disk string, start bool) int32 {
	t.Helper()
	xml, err := guestXML(name, disk)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := int32(-1)
	err = Client(t).Write(ctx, "define domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainDefineXML(xml)
		if err != nil || !start {
			return err
		}
		if err := l.DomainCreate(d); err != nil {
			return err
		}
		d, err = l.DomainLookupByName(name)
		id = d.ID
		return err
	})
	t.Cleanup(func() { RemoveDomain(t, name) })
	if err != nil {
		t.Fatalf("define domain %s: %v", name, err)
	}
	return id
}

// RemoveDomain powers off and undefines a domain with everything libvirt keeps for it;
// one already gone is no error (it serves as a cleanup).
func RemoveDomain(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = Client(t).Write(ctx, "remove domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		_ = l.DomainDestroy(d)
		return l.DomainUndefineFlags(d, libvirt.DomainUndefineAll)
	})
}

// WaitForAgent waits until the guest agent of domain name answers (the tiny guest boots
// in 10 to 30 s under TCG).
func WaitForAgent(t testing.TB, name string) {
	t.Helper()
	c := Client(t)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		d, err := c.LookupDomain(ctx, name)
		if err == nil {
			err = c.GuestPing(ctx, d)
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("guest agent of %s did not answer within 3 minutes: %v", name, err)
		}
		time.Sleep(2 * time.Second)
	}
}

// GuestExec runs a program in the guest through its agent and returns its output; a
// non-zero exit is an error that carries the output.
func GuestExec(t testing.TB, name, path string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := Client(t)
	d, err := c.LookupDomain(ctx, name)
	if err != nil {
		return "", err
	}
	out, code, err := c.GuestExec(ctx, d, path, args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return out, fmt.Errorf("%s %q exited %d in %s: %s", path, args, code, name, out)
	}
	return out, nil
}

// GuestGrowFilesystem runs the provider's in-guest filesystem grow of disk target.
func GuestGrowFilesystem(t testing.TB, name, target string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := Client(t)
	d, err := c.LookupDomain(ctx, name)
	if err != nil {
		return "", err
	}
	return c.GuestGrowFilesystem(ctx, d, target)
}

// DiskSize is what the running domain name sees as the size of its disk target, and its
// running id (to tell it was not restarted).
func DiskSize(t testing.TB, name, target string) (id int32, capacity uint64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = Client(t).Read(ctx, "disk size of "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		state, _, err := l.DomainGetState(d, 0)
		if err != nil {
			return err
		}
		if golibvirt.DomainState(state) != golibvirt.DomainRunning {
			return fmt.Errorf("domain %s is not running (state %d)", name, state)
		}
		id = d.ID
		_, capacity, _, err = l.DomainGetBlockInfo(d, target, 0)
		return err
	})
	return id, capacity, err
}
