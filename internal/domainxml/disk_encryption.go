package domainxml

import "libvirt.org/go/libvirtxml"

// DiskEncryption is the encryption of a disk's image (LUKS, in a raw or qcow2 volume) and
// the UUID of the libvirt secret that holds its passphrase. It is never the user's to set:
// resolve copies it from the encrypted volume the disk uses. libvirt 9.0 does not take it
// from the pool itself (the provider writes a volume's path as the disk's source, and
// even a <disk type='volume'> gets only the path), so without it QEMU would read the
// LUKS header as data.
type DiskEncryption struct {
	Format string // luks
	Secret string // secret UUID
}

// sameEncryption: an encryption left out (a plan before resolve, a disk on no volume)
// matches any; two known ones must agree.
func sameEncryption(a, b *DiskEncryption) bool {
	return a == nil || b == nil || *a == *b
}

// parseEncryption reads a disk's encryption where libvirt writes it: in <source> since
// libvirt 8.x, beside it in older definitions. engine='qemu' is libvirt's default.
func parseEncryption(x *libvirtxml.DomainDisk) *DiskEncryption {
	e := x.Encryption
	if x.Source != nil && x.Source.Encryption != nil {
		e = x.Source.Encryption
	}
	if e == nil {
		return nil
	}
	d := &DiskEncryption{Format: e.Format}
	for _, s := range e.Secrets {
		if s.UUID != "" {
			d.Secret = s.UUID
		}
	}
	return d
}

// buildEncryption writes dk's encryption into x's new <source> (rebuilt by buildDisk;
// prev is the one it replaced). A disk whose spec carries none keeps what its definition
// had for the same file (a definition made by virsh, a volume whose secret libvirt no
// longer reports): a rebuild must not make an encrypted disk unreadable. Network disks
// are left as they were.
func buildEncryption(x *libvirtxml.DomainDisk, dk Disk, prev *libvirtxml.DomainDiskSource) {
	if dk.Network != nil || x.Source == nil {
		return
	}
	enc := x.Encryption // the older place, beside <source>
	if prev != nil && prev.Encryption != nil {
		enc = prev.Encryption
	}
	x.Encryption = nil
	switch {
	case dk.Encryption != nil:
		enc = &libvirtxml.DomainDiskEncryption{Format: dk.Encryption.Format,
			Secrets: []libvirtxml.DomainDiskSecret{{Type: "passphrase", UUID: dk.Encryption.Secret}}}
	case prev == nil || diskSourcePath(&libvirtxml.DomainDisk{Source: prev}) != dk.Path:
		enc = nil // another file: the old one's key is not this one's
	}
	x.Source.Encryption = enc
}

// untypedEncryption: the encryption buildEncryption writes (in <source>, or beside it
// where an older definition has it) of a file or block disk: a format, one passphrase
// secret by UUID, libvirt's default engine (qemu, which libvirt writes in).
func untypedEncryption(x *libvirtxml.DomainDisk) string {
	e := x.Source.Encryption
	if e == nil {
		e = x.Encryption
	}
	switch {
	case e == nil:
		return ""
	case x.Source.Network != nil || x.Source.Encryption != nil && x.Encryption != nil:
		return "encryption of a network disk, or two"
	case e.Engine != "" && e.Engine != "qemu" || e.Format == "" || len(e.Secrets) != 1 || e.Secrets[0].Type != "passphrase" ||
		e.Secrets[0].UUID == "" || e.Secrets[0].Usage != "":
		return "encryption"
	}
	return ""
}
