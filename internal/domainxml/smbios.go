package domainxml

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// SMBIOS and fw_cfg: strings the guest reads from its firmware tables
// (/sys/class/dmi/id/product_name) and named QEMU fw_cfg entries
// (/sys/firmware/qemu_fw_cfg/by_name/opt/...). SMBIOS is <sysinfo type="smbios"> with
// <os><smbios mode>; fw_cfg entries go into the one <sysinfo type="fwcfg"> beside the
// Ignition entry, written by buildSysInfo (ignition.go). A change restarts a running domain.

// SMBIOS is the SMBIOS sysinfo; nil keeps the domain's.
type SMBIOS struct {
	// Mode is <os><smbios mode>: sysinfo (the tables below), host or emulate; empty: none.
	Mode                  string
	BIOS, System, Chassis map[string]string
	// BaseBoards are the <baseBoard> tables, in order (libvirt allows several).
	BaseBoards []map[string]string
	// OEMStrings are the type 11 strings (<oemStrings><entry>), in order.
	OEMStrings []string
}

// Tables reports whether m has a table (what mode sysinfo shows).
func (m *SMBIOS) Tables() bool {
	return len(m.BIOS)+len(m.System)+len(m.Chassis)+len(m.BaseBoards)+len(m.OEMStrings) > 0
}

// SMBIOSModes are the values of smbios.mode.
var SMBIOSModes = []string{"sysinfo", "host", "emulate"}

var smbiosFamily = family{
	name: "smbios",
	validate: func(s *Spec) error {
		for _, k := range slices.Sorted(maps.Keys(s.FWCfgFiles)) {
			if _, ok := s.FWCfg[k]; ok {
				return fmt.Errorf("fw_cfg entry %q is in os.fw_cfg and os.fw_cfg_files: give it a value or a file, not both", k)
			}
			if !strings.HasPrefix(k, "opt/") || len(k) > 55 {
				return fmt.Errorf("fw_cfg entry %q: names must start with opt/ and be at most 55 characters (QEMU's rule)", k)
			}
			if k == IgnitionFWCfgName && s.Ignition != nil {
				return fmt.Errorf("fw_cfg entry %q is the Ignition config's: set it with ignition_id or leave it out of fw_cfg_files", k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.FWCfg)) {
			if !strings.HasPrefix(k, "opt/") || len(k) > 55 {
				return fmt.Errorf("fw_cfg entry %q: names must start with opt/ and be at most 55 characters (QEMU's rule)", k)
			}
			if k == IgnitionFWCfgName && s.Ignition != nil {
				return fmt.Errorf("fw_cfg entry %q is the Ignition config's: set it with ignition_id or leave it out of fw_cfg", k)
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		if s.FWCfgFiles != nil {
			d.SysInfo = buildFWCfgFiles(d.SysInfo, s.FWCfgFiles)
		}
		m := s.SMBIOS
		if m == nil {
			return nil
		}
		var out []libvirtxml.DomainSysInfo
		var kept libvirtxml.DomainSysInfoSMBIOS // the tables no attribute names (processor, memory_device) survive
		for _, si := range d.SysInfo {
			if si.SMBIOS == nil {
				out = append(out, si)
			} else {
				kept.Processor, kept.Memory = append(kept.Processor, si.SMBIOS.Processor...), append(kept.Memory, si.SMBIOS.Memory...)
			}
		}
		if m.Tables() || len(kept.Processor)+len(kept.Memory) > 0 {
			t := &kept
			if len(m.BIOS) > 0 {
				t.BIOS = &libvirtxml.DomainSysInfoBIOS{Entry: sysEntries(m.BIOS)}
			}
			if len(m.System) > 0 {
				t.System = &libvirtxml.DomainSysInfoSystem{Entry: sysEntries(m.System)}
			}
			for _, b := range m.BaseBoards {
				t.BaseBoard = append(t.BaseBoard, libvirtxml.DomainSysInfoBaseBoard{Entry: sysEntries(b)})
			}
			if len(m.Chassis) > 0 {
				t.Chassis = &libvirtxml.DomainSysInfoChassis{Entry: sysEntries(m.Chassis)}
			}
			if len(m.OEMStrings) > 0 {
				t.OEMStrings = &libvirtxml.DomainSysInfoOEMStrings{Entry: slices.Clone(m.OEMStrings)}
			}
			out = append([]libvirtxml.DomainSysInfo{{SMBIOS: t}}, out...)
		}
		d.SysInfo = out
		d.OS.SMBios = nil
		if m.Mode != "" {
			d.OS.SMBios = &libvirtxml.DomainSMBios{Mode: m.Mode}
		}
		return nil
	},
	// Nothing there reads as nil (specs that never set it round-trip).
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		m := SMBIOS{}
		if d.OS != nil && d.OS.SMBios != nil {
			m.Mode = d.OS.SMBios.Mode
		}
		for _, si := range d.SysInfo {
			if t := si.SMBIOS; t != nil {
				if t.BIOS != nil {
					m.BIOS = entryMap(t.BIOS.Entry)
				}
				if t.System != nil {
					m.System = entryMap(t.System.Entry)
				}
				for _, b := range t.BaseBoard {
					m.BaseBoards = append(m.BaseBoards, entryMap(b.Entry))
				}
				if t.Chassis != nil {
					m.Chassis = entryMap(t.Chassis.Entry)
				}
				if t.OEMStrings != nil && len(t.OEMStrings.Entry) > 0 {
					m.OEMStrings = t.OEMStrings.Entry
				}
			}
			if f := si.FWCfg; f != nil {
				for _, e := range f.Entry {
					switch {
					case e.Name == IgnitionFWCfgName: // ignition_id's
					case e.File == "":
						if p.Spec.FWCfg == nil {
							p.Spec.FWCfg = map[string]string{}
						}
						p.Spec.FWCfg[e.Name] = e.Value
					default:
						if p.Spec.FWCfgFiles == nil {
							p.Spec.FWCfgFiles = map[string]string{}
						}
						p.Spec.FWCfgFiles[e.Name] = e.File
					}
				}
			}
		}
		if m.Mode != "" || m.Tables() {
			p.Spec.SMBIOS = &m
		}
	},
	same: func(a, b Spec) bool {
		fw := (b.FWCfg == nil || maps.Equal(a.FWCfg, b.FWCfg)) && (b.FWCfgFiles == nil || maps.Equal(a.FWCfgFiles, b.FWCfgFiles))
		if b.SMBIOS == nil {
			return fw
		}
		x := SMBIOS{}
		if a.SMBIOS != nil {
			x = *a.SMBIOS
		}
		y := *b.SMBIOS
		return fw && x.Mode == y.Mode && maps.Equal(x.BIOS, y.BIOS) && maps.Equal(x.System, y.System) && maps.Equal(x.Chassis, y.Chassis) &&
			slices.EqualFunc(x.BaseBoards, y.BaseBoards, func(a, b map[string]string) bool { return maps.Equal(a, b) }) &&
			slices.Equal(x.OEMStrings, y.OEMStrings)
	},
	derive: func(d *libvirtxml.Domain, _ *CloneSpec) error {
		d.SysInfo = stripSMBIOSUUID(d.SysInfo)
		return nil
	},
}

// stripSMBIOSUUID drops a fixed SMBIOS system uuid (a clone's): libvirt refuses one that
// differs from the domain's UUID, and without it the guest sees the domain's.
func stripSMBIOSUUID(in []libvirtxml.DomainSysInfo) []libvirtxml.DomainSysInfo {
	for i := range in {
		sm := in[i].SMBIOS
		if sm == nil || sm.System == nil {
			continue
		}
		var keep []libvirtxml.DomainSysInfoEntry
		for _, e := range sm.System.Entry {
			if e.Name != "uuid" {
				keep = append(keep, e)
			}
		}
		sm.System.Entry = keep
	}
	return in
}

func sysEntries(m map[string]string) []libvirtxml.DomainSysInfoEntry {
	var out []libvirtxml.DomainSysInfoEntry
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, libvirtxml.DomainSysInfoEntry{Name: k, Value: m[k]})
	}
	return out
}

func entryMap(es []libvirtxml.DomainSysInfoEntry) map[string]string {
	if len(es) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, e := range es {
		out[e.Name] = e.Value
	}
	return out
}

// userFWCfg are libvirt_domain's fw_cfg entries, in name order (buildSysInfo).
func userFWCfg(m map[string]string) []libvirtxml.DomainSysInfoEntry { return sysEntries(m) }

// buildFWCfgFiles puts the file entries of files (name → host path) into the fw_cfg
// sysinfo in place of the file entries there (the Ignition entry aside), after the entries
// with a value and before the Ignition entry.
func buildFWCfgFiles(in []libvirtxml.DomainSysInfo, files map[string]string) []libvirtxml.DomainSysInfo {
	var add []libvirtxml.DomainSysInfoEntry
	for _, k := range slices.Sorted(maps.Keys(files)) {
		add = append(add, libvirtxml.DomainSysInfoEntry{Name: k, File: files[k]})
	}
	out := slices.Clone(in)
	placed := false
	for i, si := range out {
		if si.FWCfg == nil {
			continue
		}
		var values, ign []libvirtxml.DomainSysInfoEntry
		for _, e := range si.FWCfg.Entry {
			switch {
			case e.Name == IgnitionFWCfgName:
				ign = append(ign, e)
			case e.File == "":
				values = append(values, e)
			}
		}
		if !placed {
			values = append(values, add...)
			placed = true
		}
		out[i] = libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{Entry: append(values, ign...)}}
	}
	if !placed && len(add) > 0 {
		out = append(out, libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{Entry: add}})
	}
	return slices.DeleteFunc(out, func(si libvirtxml.DomainSysInfo) bool { return si.FWCfg != nil && len(si.FWCfg.Entry) == 0 })
}
