package hostxml

import (
	"net"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// Storage pool types users choose from.
const (
	PoolDir         = "dir"
	PoolLogical     = "logical"
	PoolNetfs       = "netfs"
	PoolRBD         = "rbd"
	PoolISCSI       = "iscsi"
	PoolISCSIDirect = "iscsi-direct"
	PoolZFS         = "zfs"
	PoolDisk        = "disk"
	PoolSCSI        = "scsi"
	PoolMpath       = "mpath"
	PoolGluster     = "gluster"
)

// PoolTypes lists the pool types, in the order the docs give them.
var PoolTypes = []string{PoolDir, PoolLogical, PoolNetfs, PoolRBD, PoolISCSI, PoolISCSIDirect, PoolZFS, PoolDisk,
	PoolSCSI, PoolMpath, PoolGluster}

// NetfsFormats are the netfs source formats libvirt knows.
var NetfsFormats = []string{"auto", "nfs", "glusterfs", "cifs"}

// DiskFormats are the partition table formats of a disk pool libvirt knows.
var DiskFormats = []string{"unknown", "dos", "dvh", "gpt", "mac", "bsd", "pc98", "sun", "lvm2"}

// Pool is a storage pool as users write it.
type Pool struct {
	Name       string
	Type       string
	TargetPath string
	Source     *PoolSource // nil for dir and mpath
}

// PoolSource is where a pool's storage comes from.
type PoolSource struct {
	Devices   []string  // logical: the physical volumes; disk: the disk; zfs: the zpool's devices (to build it)
	Name      string    // logical: the volume group; rbd: the Ceph pool; zfs: the zpool; gluster: the volume
	Host      string    // netfs, iscsi, iscsi-direct, gluster: the server, "name" or "name:port"
	Hosts     []string  // rbd: the Ceph monitors, "name" or "name:port"
	Dir       string    // netfs: the exported directory; gluster: the directory in the volume
	Format    string    // netfs: auto, nfs, glusterfs, cifs; logical: lvm2; disk: the partition table
	Device    string    // iscsi, iscsi-direct: the target's IQN
	Initiator string    // iscsi, iscsi-direct: the initiator's IQN
	Adapter   string    // scsi: the SCSI host adapter's name, e.g. host0
	Auth      *PoolAuth // rbd: cephx; iscsi, iscsi-direct: CHAP
}

// PoolAuth is how libvirt logs in to a pool's server: a user name and the libvirt
// secret (by UUID) that holds the key or password.
type PoolAuth struct {
	Username string
	SecretID string
}

// authType is libvirt's name of the authentication a pool type uses.
func authType(poolType string) string {
	if poolType == PoolRBD {
		return "ceph"
	}
	return "chap"
}

// WithDefaults fills what libvirt would fill (or what it needs and has one obvious value
// for), so that plans show real values: a logical pool's volume group name (the pool's
// name), its target path (/dev/<vg>), its format (lvm2); a netfs pool's format (auto);
// the device directories of iscsi, scsi, mpath and disk pools; a zfs pool's target path
// (/dev/zvol/<zpool>), a disk pool's format (unknown: whatever label it has), a gluster
// pool's directory (/).
func (p Pool) WithDefaults() Pool {
	if p.Source != nil {
		s := *p.Source
		p.Source = &s
	}
	target := func(dir string) {
		if p.TargetPath == "" {
			p.TargetPath = dir
		}
	}
	switch p.Type {
	case PoolLogical:
		if p.Source == nil {
			p.Source = &PoolSource{}
		}
		if p.Source.Name == "" {
			p.Source.Name = p.Name
		}
		target("/dev/" + p.Source.Name)
		if p.Source.Format == "" {
			p.Source.Format = "lvm2"
		}
	case PoolNetfs:
		if p.Source != nil && p.Source.Format == "" {
			p.Source.Format = "auto"
		}
	case PoolISCSI, PoolSCSI:
		target("/dev/disk/by-path")
	case PoolMpath:
		target("/dev/mapper")
	case PoolDisk:
		target("/dev")
		if p.Source != nil && p.Source.Format == "" {
			p.Source.Format = "unknown"
		}
	case PoolZFS:
		if p.Source != nil && p.Source.Name != "" {
			target("/dev/zvol/" + p.Source.Name)
		}
	case PoolGluster:
		if p.Source != nil && p.Source.Dir == "" {
			p.Source.Dir = "/"
		}
	}
	return p
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
		if s.Device != "" {
			src.Device = append(src.Device, libvirtxml.StoragePoolSourceDevice{Path: s.Device})
		}
		for _, h := range append(nonEmpty(s.Host), s.Hosts...) {
			src.Host = append(src.Host, hostXML(h))
		}
		if s.Dir != "" {
			src.Dir = &libvirtxml.StoragePoolSourceDir{Path: s.Dir}
		}
		if s.Format != "" {
			src.Format = &libvirtxml.StoragePoolSourceFormat{Type: s.Format}
		}
		if s.Initiator != "" {
			src.Initiator = &libvirtxml.StoragePoolSourceInitiator{IQN: libvirtxml.StoragePoolSourceInitiatorIQN{Name: s.Initiator}}
		}
		if s.Adapter != "" {
			src.Adapter = &libvirtxml.StoragePoolSourceAdapter{Type: "scsi_host", Name: s.Adapter}
		}
		if a := s.Auth; a != nil {
			src.Auth = &libvirtxml.StoragePoolSourceAuth{Type: authType(p.Type), Username: a.Username,
				Secret: &libvirtxml.StoragePoolSourceAuthSecret{UUID: a.SecretID}}
		}
		x.Source = src
	}
	return x
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// hostXML splits "name:port" (IPv6 in brackets); anything else is a name.
func hostXML(h string) libvirtxml.StoragePoolSourceHost {
	if name, port, err := net.SplitHostPort(h); err == nil && name != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err == nil && n > 0 && strconv.FormatUint(n, 10) == port {
			return libvirtxml.StoragePoolSourceHost{Name: name, Port: port}
		}
	}
	return libvirtxml.StoragePoolSourceHost{Name: h}
}

// hostString is hostXML's inverse.
func hostString(h libvirtxml.StoragePoolSourceHost) string {
	if h.Port == "" {
		return h.Name
	}
	return net.JoinHostPort(h.Name, h.Port)
}

// PoolFromXML reads back what the spec models.
func PoolFromXML(x *libvirtxml.StoragePool) *Pool {
	p := &Pool{Name: x.Name, Type: x.Type}
	if x.Target != nil {
		p.TargetPath = x.Target.Path
	}
	if x.Source == nil || x.Type == PoolDir || x.Type == PoolMpath {
		return p
	}
	s := &PoolSource{Name: x.Source.Name}
	for _, d := range x.Source.Device {
		s.Devices = append(s.Devices, d.Path)
	}
	if x.Type == PoolISCSI || x.Type == PoolISCSIDirect {
		// An iSCSI pool's one device is the target's IQN.
		if len(s.Devices) > 0 {
			s.Device = s.Devices[0]
		}
		s.Devices = nil
	}
	for _, h := range x.Source.Host {
		if x.Type == PoolRBD {
			s.Hosts = append(s.Hosts, hostString(h))
		} else if s.Host == "" {
			s.Host = hostString(h)
		}
	}
	if x.Source.Dir != nil {
		s.Dir = x.Source.Dir.Path
	}
	if x.Source.Format != nil {
		s.Format = x.Source.Format.Type
	}
	if i := x.Source.Initiator; i != nil {
		s.Initiator = i.IQN.Name
	}
	if a := x.Source.Adapter; a != nil {
		s.Adapter = a.Name
	}
	if a := x.Source.Auth; a != nil {
		s.Auth = &PoolAuth{Username: a.Username}
		if a.Secret != nil {
			s.Auth.SecretID = a.Secret.UUID
		}
	}
	if x.Type == PoolNetfs {
		s.Name = "" // libvirt has no name for netfs sources; keep the spec's shape
	}
	p.Source = s
	return p
}
