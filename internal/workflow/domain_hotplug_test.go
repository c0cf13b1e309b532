package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

const (
	mac1 = "52:54:00:aa:00:01"
	mac2 = "52:54:00:aa:00:02"
)

// hotSpec is withDisk(nil) with an ISO in a SATA cdrom and one NIC.
func hotSpec() domainxml.Spec {
	s := withDisk(nil)
	s.Disks = append(s.Disks, domainxml.Disk{Path: "/iso/a.iso", Device: domainxml.DeviceCDROM, Bus: "sata", Target: "sda", Format: "raw"})
	s.Interfaces = []domainxml.Interface{{Network: "default", MAC: mac1}}
	return s
}

var dataDisk = domainxml.Disk{Path: "/pool/data.raw", Device: domainxml.DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw"}

// liveXML is the running domain's XML with the given devices inside <devices>.
func liveXML(devices string) string {
	return `<domain type="qemu"><name>web</name><devices>` + devices + `</devices></domain>`
}

const liveVDB = `<disk type="file" device="disk"><source file="/pool/data.raw"/><target dev="vdb" bus="virtio"/><alias name="virtio-disk1"/></disk>`

func applyLive(t *testing.T, f *fake, old, next domainxml.Spec, detach time.Duration) (Result, error) {
	t.Helper()
	return Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: old, New: next, Running: true, DetachTimeout: detach})
}

// TestApplyLiveDeviceChanges: each in-place change and each hot-plug is its one call,
// with no definition and no restart.
func TestApplyLiveDeviceChanges(t *testing.T) {
	mod := func(f func(*domainxml.Spec)) domainxml.Spec { s := hotSpec(); f(&s); return s }
	cases := []struct {
		name  string
		next  domainxml.Spec
		calls []string // the calls after GetDomainStatus, each a prefix
		xml   string   // what the device XML holds
	}{
		{"link down", mod(func(s *domainxml.Spec) { s.Interfaces[0].LinkState = domainxml.LinkStateDown }),
			[]string{"UpdateDevice u false <interface"}, `<link state="down">`},
		{"bandwidth", mod(func(s *domainxml.Spec) {
			s.Interfaces[0].Bandwidth = &domainxml.Bandwidth{Inbound: &domainxml.BandwidthLimit{Average: 1000, Peak: 2000, Burst: 512}}
		}), []string{"SetInterfaceBandwidth u " + mac1 + " inbound.average=1000,inbound.peak=2000,inbound.burst=512," +
			"outbound.average=0,outbound.peak=0,outbound.burst=0"}, ""},
		{"cdrom medium", mod(func(s *domainxml.Spec) { s.Disks[1].Path = "/iso/b.iso" }),
			[]string{"UpdateDevice u true <disk"}, `<source file="/iso/b.iso">`},
		{"disk attached", mod(func(s *domainxml.Spec) { s.Disks = append(s.Disks, dataDisk) }),
			[]string{"AttachDevice u <disk"}, `<target dev="vdb" bus="virtio">`},
		{"nic attached", mod(func(s *domainxml.Spec) { s.Interfaces = append(s.Interfaces, domainxml.Interface{Network: "default"}) }),
			[]string{"AttachDevice u <interface"}, `<source network="default">`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			f.status = running(true)
			res, err := applyLive(t, f, hotSpec(), c.next, 0)
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != domainxml.ChangeLive || res.Started || res.Forced {
				t.Errorf("result %+v", res)
			}
			got := f.calls[1:]
			if f.calls[0] != "GetDomainStatus u" || len(got) != len(c.calls) {
				t.Fatalf("calls %q", f.calls)
			}
			for i, w := range c.calls {
				if !strings.HasPrefix(got[i], w) || !strings.Contains(got[i], c.xml) {
					t.Errorf("call %q, want %q with %s", got[i], w, c.xml)
				}
			}
		})
	}
}

// TestApplyLiveBandwidthCleared: removing the limits sends zeros for every parameter
// (the only proof of the bandwidth path here: the test host has no sfq qdisc to set
// limits on a running NIC).
func TestApplyLiveBandwidthCleared(t *testing.T) {
	old := hotSpec()
	old.Interfaces[0].Bandwidth = &domainxml.Bandwidth{Outbound: &domainxml.BandwidthLimit{Average: 100}}
	f := newFake()
	f.status = running(true)
	if _, err := applyLive(t, f, old, hotSpec(), 0); err != nil {
		t.Fatal(err)
	}
	want := "SetInterfaceBandwidth u " + mac1 + " inbound.average=0,inbound.peak=0,inbound.burst=0,outbound.average=0,outbound.peak=0,outbound.burst=0"
	if len(f.calls) != 2 || f.calls[1] != want {
		t.Errorf("calls %q", f.calls)
	}
}

// TestApplyDetach: the device goes by its live alias; the definition loses it only after
// the live XML did.
func TestApplyDetach(t *testing.T) {
	old := hotSpec()
	old.Disks = append(old.Disks, dataDisk)
	f := newFake()
	f.status = running(true)
	f.status.LiveXML = liveXML(liveVDB)
	f.releasedLive = liveXML("")
	res, err := applyLive(t, f, old, hotSpec(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); res.Method != domainxml.ChangeLive ||
		got != "GetDomainStatus DetachDeviceLive GetDomainStatus DetachDeviceConfig" {
		t.Errorf("%s, calls %s", res.Method, got)
	}
	if f.calls[1] != "DetachDeviceLive u virtio-disk1" || !strings.Contains(f.calls[3], `<target dev="vdb" bus="virtio">`) {
		t.Errorf("calls %q", f.calls)
	}
}

// TestApplyDetachNIC: NICs go the same way, found by MAC; a removal and an addition are
// detach first, then attach.
func TestApplyDetachNIC(t *testing.T) {
	old := hotSpec()
	old.Interfaces = append(old.Interfaces, domainxml.Interface{Network: "default", MAC: mac2})
	next := hotSpec()
	next.Interfaces = []domainxml.Interface{old.Interfaces[1], {Network: "default"}}
	f := newFake()
	f.status = running(true)
	f.status.LiveXML = liveXML(`<interface type="network"><mac address="` + mac1 + `"/><source network="default"/><alias name="net0"/></interface>`)
	f.releasedLive = liveXML("")
	if _, err := applyLive(t, f, old, next, 0); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); got != "GetDomainStatus DetachDeviceLive GetDomainStatus DetachDeviceConfig AttachDevice" {
		t.Errorf("calls %s", got)
	}
	if f.calls[1] != "DetachDeviceLive u net0" {
		t.Errorf("calls %q", f.calls)
	}
}

// TestApplyDetachTimeout: a guest that keeps the device gets an error naming it and the
// domain, and the definition keeps it (live and persistent agree; the next apply retries).
func TestApplyDetachTimeout(t *testing.T) {
	old := hotSpec()
	old.Disks = append(old.Disks, dataDisk)
	f := newFake()
	f.status = running(true)
	f.status.LiveXML = liveXML(liveVDB)
	_, err := applyLive(t, f, old, hotSpec(), time.Second)
	if err == nil || err.Error() != "detach disk vdb from domain web: the guest did not release it within 1s" {
		t.Fatalf("err %v", err)
	}
	for _, c := range f.called() {
		if c == "DetachDeviceConfig" || c == "DefineDomain" || c == "ShutdownDomain" {
			t.Errorf("calls %q", f.called())
		}
	}
}

// TestApplyDetachGone: a device libvirt no longer has live (a retry after the guest let
// go late) counts as gone; one not in the live XML at all is removed from the definition.
func TestApplyDetachGone(t *testing.T) {
	old := hotSpec()
	old.Disks = append(old.Disks, dataDisk)
	f := newFake()
	f.status = running(true)
	f.status.LiveXML = liveXML(liveVDB)
	f.releasedLive = liveXML("")
	f.fail["DetachDeviceLive"] = &libvirt.Error{Op: "detach", Code: 99, Message: "device not found"}
	if _, err := applyLive(t, f, old, hotSpec(), 0); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); got != "GetDomainStatus DetachDeviceLive DetachDeviceConfig" {
		t.Errorf("calls %s", got)
	}

	f = newFake()
	f.status = running(true)
	f.status.LiveXML = liveXML("")
	if _, err := applyLive(t, f, old, hotSpec(), 0); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); got != "GetDomainStatus DetachDeviceConfig" {
		t.Errorf("calls %s", got)
	}
}

// TestApplyAttachFailure: a failed attach names the device and the domain and stops.
func TestApplyAttachFailure(t *testing.T) {
	next := hotSpec()
	next.Disks = append(next.Disks, dataDisk)
	f := newFake()
	f.status = running(true)
	f.fail["AttachDevice"] = errInjected
	_, err := applyLive(t, f, hotSpec(), next, 0)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "attach disk vdb to running domain web") {
		t.Fatalf("err %v", err)
	}
}

// TestApplyAttachThenRewrite: devices attached live, then the definition rewritten for
// the disk references (Rewrite), read again: a NIC attached without a MAC keeps the one
// libvirt chose, and nothing restarts.
func TestApplyAttachThenRewrite(t *testing.T) {
	next := hotSpec()
	next.Disks = append(next.Disks, dataDisk)
	next.Interfaces = append(next.Interfaces, domainxml.Interface{Network: "default"})
	f := newFake()
	f.status = running(true)
	// What libvirt's definition holds after the attaches (the fake does not apply them).
	f.status.XML = strings.Replace(baseXML, "</os>", `</os><devices>`+
		`<interface type="network"><mac address="`+mac1+`"/><source network="default"/><model type="virtio"/></interface>`+
		`<interface type="network"><mac address="52:54:00:aa:00:77"/><source network="default"/><model type="virtio"/></interface>`+
		`</devices>`, 1)
	res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: hotSpec(), New: next, Running: true, Rewrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); res.Method != domainxml.ChangeLive || got != "GetDomainStatus AttachDevice AttachDevice GetDomainStatus DefineDomain" {
		t.Errorf("%s, calls %s", res.Method, got)
	}
	if !strings.Contains(f.status.XML, `<mac address="52:54:00:aa:00:77">`) {
		t.Errorf("the rewritten definition lost the MAC libvirt chose:\n%s", f.status.XML)
	}
}
