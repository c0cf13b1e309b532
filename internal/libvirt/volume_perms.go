package libvirt

import "libvirt.org/go/libvirtxml"

// VolumePermissions are a volume's <target><permissions>: what libvirt gives the file (or
// device) when it makes the volume. An empty field is libvirt's default (the daemon's
// uid and gid, mode 0600 for files). libvirt has no call that changes them later.
type VolumePermissions struct {
	Owner string // numeric uid
	Group string // numeric gid
	Mode  string // octal, e.g. 0640
	Label string // SELinux label; ignored (and not reported) by a host without SELinux
}

// permissionsXML is p as libvirt's XML, nil when p sets nothing.
func permissionsXML(p *VolumePermissions) *libvirtxml.StorageVolumeTargetPermissions {
	if p == nil || *p == (VolumePermissions{}) {
		return nil
	}
	return &libvirtxml.StorageVolumeTargetPermissions{Owner: p.Owner, Group: p.Group, Mode: p.Mode, Label: p.Label}
}

// permissionsInfo is what libvirt reports, nil when it reports none.
func permissionsInfo(t *libvirtxml.StorageVolumeTarget) *VolumePermissions {
	if t == nil || t.Permissions == nil {
		return nil
	}
	x := t.Permissions
	return &VolumePermissions{Owner: x.Owner, Group: x.Group, Mode: x.Mode, Label: x.Label}
}
