package domainxml

import "libvirt.org/go/libvirtxml"

// Ignition: a config handed to Fedora CoreOS / Flatcar guests through QEMU's fw_cfg
// (ignition_id).

// IgnitionFWCfgName is the fw_cfg entry Fedora CoreOS and Flatcar read their Ignition
// config from.
const IgnitionFWCfgName = "opt/com.coreos/config"

// Ignition is the Ignition config file: the user's reference (a volume key or
// <pool>/<name>) and its path on the host (what goes into the XML).
type Ignition struct {
	ID   string
	Path string
}

var ignitionFamily = family{
	name:     "ignition",
	validate: func(*Spec) error { return nil },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.SysInfo = buildSysInfo(d.SysInfo, s.Ignition)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		for _, si := range d.SysInfo {
			if si.FWCfg == nil {
				continue
			}
			for _, e := range si.FWCfg.Entry {
				if e.Name != IgnitionFWCfgName || e.File == "" {
					continue
				}
				p.Spec.Ignition = &Ignition{ID: e.File, Path: e.File}
				if g := rec.Ignition; g != nil && g.Path == e.File {
					p.Spec.Ignition.ID = g.ID
				}
			}
		}
	},
	same: func(a, b Spec) bool {
		return (a.Ignition == nil) == (b.Ignition == nil) && (a.Ignition == nil || a.Ignition.ID == b.Ignition.ID)
	},
}

// buildSysInfo sets or removes the Ignition fw_cfg entry, keeping every other sysinfo
// (SMBIOS, other fw_cfg entries).
func buildSysInfo(existing []libvirtxml.DomainSysInfo, ign *Ignition) []libvirtxml.DomainSysInfo {
	var out []libvirtxml.DomainSysInfo
	placed := false
	for _, si := range existing {
		if si.FWCfg == nil {
			out = append(out, si)
			continue
		}
		var entries []libvirtxml.DomainSysInfoEntry
		for _, e := range si.FWCfg.Entry {
			if e.Name != IgnitionFWCfgName {
				entries = append(entries, e)
			}
		}
		if ign != nil && !placed {
			entries = append(entries, libvirtxml.DomainSysInfoEntry{Name: IgnitionFWCfgName, File: ign.Path})
			placed = true
		}
		if len(entries) > 0 {
			out = append(out, libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{Entry: entries}})
		}
	}
	if ign != nil && !placed {
		out = append(out, libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{
			Entry: []libvirtxml.DomainSysInfoEntry{{Name: IgnitionFWCfgName, File: ign.Path}},
		}})
	}
	return out
}
