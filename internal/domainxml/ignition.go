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
		d.SysInfo = buildSysInfo(d.SysInfo, s.Ignition, s.FWCfg) // the one writer of fw_cfg entries (smbios.go: fw_cfg)
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
	// A clone gets no Ignition config: Ignition runs on a machine's first boot, which
	// the clone's disks have behind them, and the entry names the source's config file.
	// Other fw_cfg entries stay.
	derive: func(d *libvirtxml.Domain, _ *CloneSpec) error {
		d.SysInfo = buildSysInfo(d.SysInfo, nil, nil)
		return nil
	},
}

// buildSysInfo sets or removes the Ignition fw_cfg entry, keeping every other sysinfo
// (SMBIOS, other fw_cfg entries). user, when not nil, replaces the other fw_cfg entries
// (libvirt_domain's fw_cfg, in name order).
func buildSysInfo(existing []libvirtxml.DomainSysInfo, ign *Ignition, user map[string]string) []libvirtxml.DomainSysInfo {
	var out []libvirtxml.DomainSysInfo
	placed := false
	for _, si := range existing {
		if si.FWCfg == nil {
			out = append(out, si)
			continue
		}
		var entries []libvirtxml.DomainSysInfoEntry
		for _, e := range si.FWCfg.Entry {
			if e.Name != IgnitionFWCfgName && (user == nil || e.File != "") {
				entries = append(entries, e)
			}
		}
		if !placed {
			entries = append(entries, userFWCfg(user)...)
		}
		if ign != nil && !placed {
			entries = append(entries, libvirtxml.DomainSysInfoEntry{Name: IgnitionFWCfgName, File: ign.Path})
		}
		placed = placed || ign != nil || len(user) > 0
		if len(entries) > 0 {
			out = append(out, libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{Entry: entries}})
		}
	}
	if !placed && (ign != nil || len(user) > 0) {
		entries := userFWCfg(user)
		if ign != nil {
			entries = append(entries, libvirtxml.DomainSysInfoEntry{Name: IgnitionFWCfgName, File: ign.Path})
		}
		out = append(out, libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{Entry: entries}})
	}
	return out
}
