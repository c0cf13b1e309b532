package domainxml

import (
	"maps"
	"strings"
	"testing"
)

// TestSMBIOSAndFWCfg: tables and mode are written and read back; user fw_cfg entries
// share the one fwcfg sysinfo with the Ignition entry and leave it alone; nil keeps,
// an empty map removes; bad names are refused.
func TestSMBIOSAndFWCfg(t *testing.T) {
	s := Spec{Name: "m", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Ignition: &Ignition{ID: "p/ign", Path: "/v/ign.json"},
		SMBIOS: &SMBIOS{Mode: "sysinfo", System: map[string]string{"product": "Appliance", "manufacturer": "kvmforge"},
			BIOS: map[string]string{"vendor": "kf"}, BaseBoards: []map[string]string{{"serial": "42"}, {"serial": "43", "product": "riser"}},
			Chassis: map[string]string{"asset": "A-1"}, OEMStrings: []string{"role:db", "rack:7"}},
		FWCfg: map[string]string{"opt/com.example/role": "db", "opt/a": "1"}}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := d.Marshal()
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{`<smbios mode="sysinfo">`, `<entry name="product">Appliance</entry>`, `<baseBoard> <entry name="serial">42</entry>`,
		`<baseBoard> <entry name="product">riser</entry> <entry name="serial">43</entry> </baseBoard>`, `<chassis> <entry name="asset">A-1</entry>`,
		`<oemStrings> <entry>role:db</entry> <entry>rack:7</entry> </oemStrings>`,
		`<sysinfo type="fwcfg"> <entry name="opt/a">1</entry> <entry name="opt/com.example/role">db</entry> <entry name="opt/com.coreos/config" file="/v/ign.json"></entry> </sysinfo>`} {
		if !strings.Contains(flat, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	if strings.Count(text, `type="fwcfg"`) != 1 {
		t.Errorf("more than one fwcfg sysinfo:\n%s", text)
	}
	p, _ := FromDomain(d)
	if !smbiosFamily.same(p.Spec, s) || !maps.Equal(p.Spec.FWCfg, s.FWCfg) || p.Spec.Ignition == nil {
		t.Errorf("round trip %+v %v", p.Spec.SMBIOS, p.Spec.FWCfg)
	}
	other := s
	other.SMBIOS = &SMBIOS{Mode: "sysinfo", BaseBoards: []map[string]string{{"serial": "43", "product": "riser"}, {"serial": "42"}}}
	if smbiosFamily.same(p.Spec, other) {
		t.Error("base boards in another order are the same")
	}
	keep := s
	keep.SMBIOS, keep.FWCfg = nil, nil
	if d2, _ := Build(d, keep); len(d2.SysInfo) != 2 || d2.OS.SMBios == nil {
		t.Errorf("nil did not keep: %+v", d2.SysInfo)
	}
	none := s
	none.SMBIOS, none.FWCfg = &SMBIOS{}, map[string]string{}
	if pl := PlanChange(s, none, true, true, nil); pl.Change != ChangeRestart {
		t.Errorf("change: %s", pl.Change)
	}
	d, _ = Build(d, none)
	p, _ = FromDomain(d)
	if p.Spec.SMBIOS != nil || p.Spec.FWCfg != nil || p.Spec.Ignition == nil || d.OS.SMBios != nil {
		t.Errorf("removed: %+v %v %+v", p.Spec.SMBIOS, p.Spec.FWCfg, d.SysInfo)
	}
	for _, bad := range []map[string]string{{"etc/x": "1"}, {IgnitionFWCfgName: "x"}} {
		if err := smbiosFamily.validate(&Spec{FWCfg: bad, Ignition: s.Ignition}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
