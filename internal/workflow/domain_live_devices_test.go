package workflow

import (
	"strings"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

var (
	gpu   = domainxml.Hostdev{PCI: "0000:03:00.0", Managed: true}
	share = domainxml.Filesystem{Source: "/srv/data", Target: "data"}
)

// Live XML of a running domain with the GPU passed through and the share, as libvirt
// gives them aliases.
const (
	liveGPU = `<hostdev mode="subsystem" type="pci" managed="yes"><driver name="vfio"/><source>` +
		`<address domain="0x0000" bus="0x03" slot="0x00" function="0x0"/></source><alias name="hostdev0"/>` +
		`<address type="pci" domain="0x0000" bus="0x00" slot="0x07" function="0x0"/></hostdev>`
	liveShare = `<filesystem type="mount" accessmode="passthrough"><driver type="virtiofs" queue="1024"/>` +
		`<binary path="/usr/lib/qemu/virtiofsd"/><source dir="/srv/data"/><target dir="data"/><alias name="fs0"/></filesystem>`
)

func withHostdev() domainxml.Spec {
	s := hotSpec()
	s.Hostdevs = []domainxml.Hostdev{gpu}
	return s
}

func withShare() domainxml.Spec {
	s := hotSpec()
	s.Filesystems = []domainxml.Filesystem{share}
	return s
}

// TestApplyHostdevAttach: a hostdev appended to a running domain is one attach of its
// XML (source, managed), no definition and no restart.
func TestApplyHostdevAttach(t *testing.T) {
	f := newFake()
	f.status = running(true)
	res, err := applyLive(t, f, hotSpec(), withHostdev(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); res.Method != domainxml.ChangeLive || res.Started || got != "GetDomainStatus AttachDevice" {
		t.Fatalf("%+v, calls %s", res, got)
	}
	if c := f.calls[1]; !strings.Contains(c, `<hostdev mode="subsystem" type="pci" managed="yes">`) ||
		!strings.Contains(c, `<address domain="0x0000" bus="0x03" slot="0x00" function="0x0">`) {
		t.Errorf("attach %s", c)
	}
}

// TestApplyDeviceDetach: a hostdev goes by the alias of its source in the live XML, a
// share by the alias of its mount tag; each leaves the definition once the live XML no
// longer has it.
func TestApplyDeviceDetach(t *testing.T) {
	for _, c := range []struct {
		name      string
		old       domainxml.Spec
		live      string
		alias     string
		configXML string
	}{
		{"hostdev", withHostdev(), liveGPU, "hostdev0", `<address domain="0x0000" bus="0x03" slot="0x00" function="0x0">`},
		{"filesystem", withShare(), liveShare, "fs0", `<target dir="data">`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			f.status = running(true)
			f.status.LiveXML = liveXML(c.live)
			f.releasedLive = liveXML("")
			res, err := applyLive(t, f, c.old, hotSpec(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.called(), " "); res.Method != domainxml.ChangeLive ||
				got != "GetDomainStatus DetachDeviceLive GetDomainStatus DetachDeviceConfig" {
				t.Fatalf("%s, calls %s", res.Method, got)
			}
			if f.calls[1] != "DetachDeviceLive u "+c.alias || !strings.Contains(f.calls[3], c.configXML) {
				t.Errorf("calls %q", f.calls)
			}
		})
	}
}

// TestApplyDeviceDetachTimeout: a guest that keeps the hostdev or the share gets an error
// naming it and the domain; the definition keeps it (live and persistent agree, the state
// keeps it, the next apply tries again), and nothing restarts.
func TestApplyDeviceDetachTimeout(t *testing.T) {
	for _, c := range []struct {
		old  domainxml.Spec
		live string
		want string
	}{
		{withHostdev(), liveGPU, "detach hostdev pci 0000:03:00.0 from domain web: the guest did not release it within 1s"},
		{withShare(), liveShare, "detach filesystem data from domain web: the guest did not release it within 1s"},
	} {
		f := newFake()
		f.status = running(true)
		f.status.LiveXML = liveXML(c.live)
		_, err := applyLive(t, f, c.old, hotSpec(), time.Second)
		if err == nil || err.Error() != c.want {
			t.Fatalf("err %v, want %s", err, c.want)
		}
		for _, call := range f.called() {
			if call == "DetachDeviceConfig" || call == "DefineDomain" || call == "ShutdownDomain" {
				t.Errorf("calls %q", f.called())
			}
		}
	}
}

// TestApplyShareAddedRestarts: a share added to a running domain is not attached (libvirt
// 9.0 would crash on a host without cgroups): the definition is rewritten and the domain
// restarted.
func TestApplyShareAddedRestarts(t *testing.T) {
	f := newFake()
	f.status = running(true)
	res, err := applyLive(t, f, hotSpec(), withShare(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); res.Method != domainxml.ChangeRestart ||
		got != "GetDomainStatus DefineDomain ShutdownDomain StartDomain" {
		t.Fatalf("%s, calls %s", res.Method, got)
	}
	if !strings.Contains(f.status.XML, `<target dir="data">`) || !strings.Contains(f.status.XML, `<access mode="shared">`) {
		t.Errorf("definition without the share and its shared memory:\n%s", f.status.XML)
	}
}

// TestApplyLastShareRemoved: with the last virtiofs share detached, the shared memory the
// provider gave the domain for it leaves the definition (rewritten after the detach), and
// nothing restarts.
func TestApplyLastShareRemoved(t *testing.T) {
	cur, err := domainxml.Build(nil, withShare())
	if err != nil {
		t.Fatal(err)
	}
	text, err := cur.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.status = running(true)
	f.status.XML = text
	f.status.LiveXML = liveXML(liveShare)
	f.releasedLive = liveXML("")
	res, err := applyLive(t, f, withShare(), hotSpec(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); res.Method != domainxml.ChangeLive ||
		got != "GetDomainStatus DetachDeviceLive GetDomainStatus DetachDeviceConfig GetDomainStatus DefineDomain" {
		t.Fatalf("%s, calls %s", res.Method, got)
	}
	if strings.Contains(f.status.XML, "memoryBacking") || strings.Contains(f.status.XML, "<filesystem") {
		t.Errorf("the definition keeps the share or its shared memory:\n%s", f.status.XML)
	}
}
