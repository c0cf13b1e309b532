package hostxml

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Validate checks a spec (defaults not yet applied) without asking libvirt.
func (p *Pool) Validate() []FieldError {
	var errs []FieldError
	add := func(attr, f string, a ...any) { errs = append(errs, FieldError{attr, fmt.Sprintf(f, a...)}) }
	absolute := func(attr, what, v string) {
		if v != "" && (!strings.HasPrefix(v, "/") || path.Clean(v) != v) {
			add(attr, "%s %q must be a clean absolute path, e.g. %q", what, v, path.Clean("/"+v))
		}
	}
	absolute("target_path", "target_path", p.TargetPath)
	s := p.Source
	switch p.Type {
	case PoolDir:
		if p.TargetPath == "" {
			add("target_path", "a dir pool needs target_path: the directory that holds its volumes, e.g. \"/var/lib/libvirt/images\"")
		}
		if s != nil && !s.empty() {
			add("source", "a dir pool has no source: remove the source block (its storage is target_path)")
		}
	case PoolLogical:
		if s == nil || len(s.Devices) == 0 {
			add("source", "a logical pool needs source.devices: the block devices to build its LVM volume group on, e.g. [\"/dev/sdb\"] (when the group exists on them already, it is used as is)")
		}
		if s != nil {
			if s.Host != "" || s.Dir != "" {
				add("source", "source.host and source.dir are for netfs pools; a logical pool takes devices and name")
			}
			if s.Format != "" && s.Format != "lvm2" {
				add("source", "source.format of a logical pool can only be \"lvm2\"")
			}
			for _, d := range s.Devices {
				absolute("source", "device", d)
			}
			if s.Name != "" && strings.ContainsAny(s.Name, "/ ") {
				add("source", "source.name %q is a volume group name: no '/' or spaces", s.Name)
			}
			errs = append(errs, p.unused(s, "devices", "name", "format", "host", "dir")...)
		}
		if p.TargetPath != "" {
			vg := p.Name
			if s != nil && s.Name != "" {
				vg = s.Name
			}
			if p.TargetPath != "/dev/"+vg {
				add("target_path", "a logical pool's target_path is always /dev/<volume group> (%q here); omit it or set it so", "/dev/"+vg)
			}
		}
	case PoolNetfs:
		if p.TargetPath == "" {
			add("target_path", "a netfs pool needs target_path: the local directory to mount the share on")
		}
		if s == nil || s.Host == "" || s.Dir == "" {
			add("source", "a netfs pool needs source.host (the server) and source.dir (the exported directory)")
		}
		if s != nil {
			if len(s.Devices) > 0 || s.Name != "" {
				add("source", "source.devices and source.name are for logical pools; a netfs pool takes host, dir and format")
			}
			if s.Format != "" && !slices.Contains(NetfsFormats, s.Format) {
				add("source", "source.format %q is not one of %s", s.Format, strings.Join(NetfsFormats, ", "))
			}
			absolute("source", "source.dir", s.Dir)
			errs = append(errs, p.unused(s, "host", "dir", "format", "devices", "name")...)
		}
	case PoolRBD, PoolISCSI, PoolISCSIDirect, PoolZFS, PoolDisk, PoolSCSI, PoolMpath, PoolGluster:
		errs = append(errs, p.validateMore()...)
	default:
		add("type", "%q is not one of %s", p.Type, strings.Join(PoolTypes, ", "))
	}
	return errs
}

// poolFields are, per type beyond dir, logical and netfs, the source fields it takes
// (the first `required` of them must be set), and whether target_path is the pool's.
var poolFields = map[string]struct {
	fields   []string
	required int
	target   bool // target_path may be set (else libvirt has none, or computes it)
	needs    string
}{
	PoolRBD:         {[]string{"hosts", "name", "auth"}, 2, false, "source.hosts (the Ceph monitors, e.g. [\"mon1.example:6789\"]) and source.name (the Ceph pool)"},
	PoolISCSI:       {[]string{"host", "device", "initiator", "auth"}, 2, true, "source.host (the target portal, e.g. \"192.0.2.10\" or \"192.0.2.10:3260\") and source.device (the target's IQN)"},
	PoolISCSIDirect: {[]string{"host", "device", "initiator", "auth"}, 3, false, "source.host (the target portal), source.device (the target's IQN) and source.initiator (this host's IQN, e.g. \"iqn.2024-01.org.example:host1\")"},
	PoolZFS:         {[]string{"name", "devices"}, 1, false, "source.name (the ZFS pool, e.g. \"tank\" or \"tank/vms\")"},
	PoolDisk:        {[]string{"devices", "format"}, 1, true, "source.devices (the one disk whose partitions are the volumes, e.g. [\"/dev/sdb\"])"},
	PoolSCSI:        {[]string{"adapter"}, 1, true, "source.adapter (the SCSI host adapter's name, e.g. \"host0\")"},
	PoolMpath:       {nil, 0, true, ""},
	PoolGluster:     {[]string{"host", "name", "dir"}, 2, false, "source.host (a Gluster server) and source.name (the Gluster volume)"},
}

// validateMore checks the pool types beyond dir, logical and netfs: every message names
// the pool, so that a configuration of many pools says which one to fix.
func (p *Pool) validateMore() []FieldError {
	var errs []FieldError
	f := poolFields[p.Type]
	add := func(attr, format string, a ...any) {
		errs = append(errs, FieldError{attr, fmt.Sprintf("storage pool %s (%s): ", p.Name, p.Type) + fmt.Sprintf(format, a...)})
	}
	s := p.Source
	if s == nil {
		s = &PoolSource{}
	}
	for _, name := range f.fields[:f.required] {
		if !s.has(name) {
			add("source", "this type needs %s; source.%s is missing", f.needs, name)
			break
		}
	}
	errs = append(errs, p.unused(s, f.fields...)...)
	if p.TargetPath != "" && !f.target {
		if d := p.WithDefaults(); p.Type == PoolZFS && d.TargetPath != "" {
			if p.TargetPath != "/dev/zvol/"+s.Name {
				add("target_path", "a zfs pool's target_path is always /dev/zvol/<source.name> (%q here); omit it or set it so", "/dev/zvol/"+s.Name)
			}
		} else if p.Type != PoolZFS {
			add("target_path", "this type has no target_path (its volumes are not files on this host): remove it")
		}
	}
	iqn := func(attr, v string) {
		if v != "" && !strings.HasPrefix(v, "iqn.") && !strings.HasPrefix(v, "eui.") && !strings.HasPrefix(v, "naa.") {
			add("source", "source.%s %q is not an iSCSI name: it starts with iqn., eui. or naa., e.g. \"iqn.2024-01.org.example:storage\"", attr, v)
		}
	}
	iqn("device", s.Device)
	iqn("initiator", s.Initiator)
	for _, d := range s.Devices {
		if !strings.HasPrefix(d, "/") || path.Clean(d) != d {
			add("source", "device %q must be a clean absolute path, e.g. %q", d, path.Clean("/"+d))
		}
	}
	if p.Type == PoolDisk && len(s.Devices) > 1 {
		add("source", "a disk pool is one disk: source.devices holds %d; make one pool per disk", len(s.Devices))
	}
	if p.Type == PoolDisk && s.Format != "" && !slices.Contains(DiskFormats, s.Format) {
		add("source", "source.format %q is not one of %s", s.Format, strings.Join(DiskFormats, ", "))
	}
	if a := s.Auth; a != nil {
		if a.Username == "" {
			add("source", "source.auth needs username: the %s user to log in as", map[bool]string{true: "Ceph", false: "CHAP"}[p.Type == PoolRBD])
		}
		if _, err := uuid.Parse(a.SecretID); err != nil {
			add("source", "source.auth.secret_id %q is not a secret's UUID: use the id of a libvirt_secret (usage_type %q)", a.SecretID,
				map[bool]string{true: "ceph", false: "iscsi"}[p.Type == PoolRBD])
		}
	}
	return errs
}

// sourceFields are all the source block's fields, in the order errors name them.
var sourceFields = []string{"devices", "name", "host", "hosts", "dir", "format", "device", "initiator", "adapter", "auth"}

// has says whether a source field is set.
func (s *PoolSource) has(field string) bool {
	switch field {
	case "devices":
		return len(s.Devices) > 0
	case "name":
		return s.Name != ""
	case "host":
		return s.Host != ""
	case "hosts":
		return len(s.Hosts) > 0
	case "dir":
		return s.Dir != ""
	case "format":
		return s.Format != ""
	case "device":
		return s.Device != ""
	case "initiator":
		return s.Initiator != ""
	case "adapter":
		return s.Adapter != ""
	case "auth":
		return s.Auth != nil
	}
	panic("unknown pool source field " + field)
}

func (s *PoolSource) empty() bool {
	return !slices.ContainsFunc(sourceFields, s.has)
}

// unused names the source fields set that a pool of this type does not take.
func (p *Pool) unused(s *PoolSource, takes ...string) []FieldError {
	var extra []string
	for _, f := range sourceFields {
		if s.has(f) && !slices.Contains(takes, f) {
			extra = append(extra, "source."+f)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	return []FieldError{{"source", fmt.Sprintf("storage pool %s (%s): %s not used by type %s (it takes %s): remove %s",
		p.Name, p.Type, strings.Join(extra, ", "), p.Type, takesList(takes), map[bool]string{true: "it", false: "them"}[len(extra) == 1])}}
}

func takesList(fields []string) string {
	if len(fields) == 0 {
		return "no source"
	}
	return strings.Join(fields, ", ")
}
