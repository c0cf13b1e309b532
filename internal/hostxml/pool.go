package hostxml

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Storage pool types users choose from.
const (
	PoolDir     = "dir"
	PoolLogical = "logical"
	PoolNetfs   = "netfs"
)

// PoolTypes lists the pool types, in the order the docs give them.
var PoolTypes = []string{PoolDir, PoolLogical, PoolNetfs}

// NetfsFormats are the netfs source formats libvirt knows.
var NetfsFormats = []string{"auto", "nfs", "glusterfs", "cifs"}

// Pool is a storage pool as users write it.
type Pool struct {
	Name       string
	Type       string
	TargetPath string
	Source     *PoolSource // nil for dir
}

// PoolSource is where a pool's storage comes from.
type PoolSource struct {
	Devices []string // logical: the physical volumes
	Name    string   // logical: the volume group (default: the pool's name)
	Host    string   // netfs: the server
	Dir     string   // netfs: the exported directory
	Format  string   // netfs: auto, nfs, glusterfs, cifs; logical: lvm2
}

// WithDefaults fills what libvirt would fill, so that plans show real values: a logical
// pool's volume group name (the pool's name), its target path (/dev/<vg>), its format
// (lvm2); a netfs pool's format (auto).
func (p Pool) WithDefaults() Pool {
	if p.Source != nil {
		s := *p.Source
		p.Source = &s
	}
	switch p.Type {
	case PoolLogical:
		if p.Source == nil {
			p.Source = &PoolSource{}
		}
		if p.Source.Name == "" {
			p.Source.Name = p.Name
		}
		if p.TargetPath == "" {
			p.TargetPath = "/dev/" + p.Source.Name
		}
		if p.Source.Format == "" {
			p.Source.Format = "lvm2"
		}
	case PoolNetfs:
		if p.Source != nil && p.Source.Format == "" {
			p.Source.Format = "auto"
		}
	}
	return p
}

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
		if s != nil && (len(s.Devices) > 0 || s.Name != "" || s.Host != "" || s.Dir != "" || s.Format != "") {
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
		}
	default:
		add("type", "%q is not one of %s", p.Type, strings.Join(PoolTypes, ", "))
	}
	return errs
}

// ToXML is the pool's definition.
func (p *Pool) ToXML() *libvirtxml.StoragePool {
	x := &libvirtxml.StoragePool{Type: p.Type, Name: p.Name}
	if p.TargetPath != "" {
		x.Target = &libvirtxml.StoragePoolTarget{Path: p.TargetPath}
	}
	if s := p.Source; s != nil && p.Type != PoolDir {
		src := &libvirtxml.StoragePoolSource{Name: s.Name}
		for _, d := range s.Devices {
			src.Device = append(src.Device, libvirtxml.StoragePoolSourceDevice{Path: d})
		}
		if s.Host != "" {
			src.Host = []libvirtxml.StoragePoolSourceHost{{Name: s.Host}}
		}
		if s.Dir != "" {
			src.Dir = &libvirtxml.StoragePoolSourceDir{Path: s.Dir}
		}
		if s.Format != "" {
			src.Format = &libvirtxml.StoragePoolSourceFormat{Type: s.Format}
		}
		x.Source = src
	}
	return x
}

// PoolFromXML reads back what the spec models.
func PoolFromXML(x *libvirtxml.StoragePool) *Pool {
	p := &Pool{Name: x.Name, Type: x.Type}
	if x.Target != nil {
		p.TargetPath = x.Target.Path
	}
	if x.Source != nil && x.Type != PoolDir {
		s := &PoolSource{Name: x.Source.Name}
		for _, d := range x.Source.Device {
			s.Devices = append(s.Devices, d.Path)
		}
		if len(x.Source.Host) > 0 {
			s.Host = x.Source.Host[0].Name
		}
		if x.Source.Dir != nil {
			s.Dir = x.Source.Dir.Path
		}
		if x.Source.Format != nil {
			s.Format = x.Source.Format.Type
		}
		if x.Type == PoolNetfs {
			s.Name = "" // libvirt has no name for netfs sources; keep the spec's shape
		}
		p.Source = s
	}
	return p
}
