package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// The Ignition config goes into a fw_cfg sysinfo entry and comes back as the user's
// reference; other sysinfo (SMBIOS, other fw_cfg entries) survives; removing it leaves
// no empty fw_cfg element.
func TestIgnitionFWCfg(t *testing.T) {
	s := sample()
	s.Ignition = &Ignition{ID: "default/node.ign", Path: "/pool/node.ign"}
	_, text := build(t, nil, s)
	for _, want := range []string{
		`<sysinfo type="fwcfg">`,
		`<entry name="opt/com.coreos/config" file="/pool/node.ign"></entry>`,
		`<ignition id="default/node.ign" path="/pool/node.ign"></ignition>`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("XML lacks %s:\n%s", want, text)
		}
	}
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Spec.Ignition; g == nil || *g != *s.Ignition {
		t.Fatalf("parsed ignition %+v, want %+v", g, s.Ignition)
	}
	_, plain := build(t, nil, sample())
	p0, err := Parse(plain)
	if err != nil {
		t.Fatal(err)
	}
	p0.Spec.Ignition = &Ignition{ID: "default/node.ign"} // as planned: path not yet resolved
	if c := Classify(p0.Spec, p.Spec, true, true); c != ChangeNone {
		t.Errorf("round trip classifies as %s", c)
	}

	// Merged onto a definition with other sysinfo: those stay, ours is replaced.
	var base libvirtxml.Domain
	if err := base.Unmarshal(text); err != nil {
		t.Fatal(err)
	}
	base.SysInfo = append([]libvirtxml.DomainSysInfo{
		{SMBIOS: &libvirtxml.DomainSysInfoSMBIOS{System: &libvirtxml.DomainSysInfoSystem{Entry: []libvirtxml.DomainSysInfoEntry{{Name: "serial", Value: "x1"}}}}},
	}, base.SysInfo...)
	base.SysInfo[1].FWCfg.Entry = append(base.SysInfo[1].FWCfg.Entry, libvirtxml.DomainSysInfoEntry{Name: "opt/org.example/x", Value: "y"})
	s.Ignition = &Ignition{ID: "default/other.ign", Path: "/pool/other.ign"}
	d, text := build(t, &base, s)
	if strings.Contains(text, "node.ign") || strings.Count(text, IgnitionFWCfgName) != 1 || !strings.Contains(text, `file="/pool/other.ign"`) {
		t.Errorf("ignition entry not replaced:\n%s", text)
	}
	if !strings.Contains(text, "x1") || !strings.Contains(text, "opt/org.example/x") {
		t.Errorf("other sysinfo lost:\n%s", text)
	}

	s.Ignition = nil
	d, text = build(t, d, s)
	if strings.Contains(text, IgnitionFWCfgName) || strings.Contains(text, "kvmforge:ignition") {
		t.Errorf("ignition not removed:\n%s", text)
	}
	if len(d.SysInfo) != 2 {
		t.Errorf("sysinfo %d elements, want SMBIOS and the other fw_cfg entry", len(d.SysInfo))
	}
	b := sample()
	b.Ignition = &Ignition{ID: "a", Path: "/a"}
	if c := Classify(sample(), b, true, true); c != ChangeRestart {
		t.Errorf("adding ignition classifies as %s, want restart", c)
	}

	// A domain made elsewhere: the file path is the reference.
	p, err = Parse(`<domain type="qemu"><name>x</name><sysinfo type="fwcfg"><entry name="opt/com.coreos/config" file="/var/lib/x.ign"/></sysinfo></domain>`)
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Spec.Ignition; g == nil || g.ID != "/var/lib/x.ign" {
		t.Errorf("foreign ignition parsed as %+v", g)
	}
}
