package libvirt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// A volume's format is what its creator named, never what its bytes look like: a guest
// owns every byte of a raw disk and may write a qcow2 header on it that names any file
// of the host as its backing file. libvirt's directory pools probe each file's format on
// a pool refresh (and libvirtd's start), so the <target><format> of a volume's XML, and
// the format libvirt itself uses when it copies the volume (virStorageVolCreateXMLFrom
// runs qemu-img convert -f <that format>), may be the guest's choice.
//
// Where the provider keeps the format (libvirt_volume's state), that is the format, and
// libvirt is told it. Where nothing names it (a volume looked up by id: an export, a
// clone_from or backing_volume source, a disk of a new domain), TrustedFormat applies
// qemu-img's and libvirt's own rule: a format that is not named is raw, and raw never
// follows a backing file. libvirt's probe is believed only where a guest cannot have
// written it (see trustVolume).

// FormatDoubt says why a volume that libvirt reads as qcow2 is taken for raw.
type FormatDoubt struct {
	Volume   string // <pool>/<name>
	Reported string // what libvirt says (qcow2)
	Reason   string
}

func (d *FormatDoubt) Error() string {
	return fmt.Sprintf("libvirt reads volume %s as %s, but %s: the provider treats it as raw (a guest may have written a %s header on a raw disk)",
		d.Volume, d.Reported, d.Reason, d.Reported)
}

// headerProbeBytes is how much of a volume TrustedFormat reads to check a qcow2 header.
const headerProbeBytes = 64 << 10

// TrustedFormat is the format to treat the volume ref as when no state names it: "raw"
// unless libvirt reports qcow2 and trustVolume believes it. A doubt (non-nil when libvirt
// reports qcow2 but the volume is taken for raw) is for the caller to log or warn about.
func (c *Client) TrustedFormat(ctx context.Context, ref VolumeRef) (string, *FormatDoubt, *VolumeInfo, error) {
	info, err := c.VolumeInfo(ctx, ref)
	if err != nil {
		return "", nil, nil, err
	}
	format, doubt, err := c.trustVolume(ctx, info)
	return format, doubt, info, err
}

// trustVolume is TrustedFormat for a volume already read. libvirt's "qcow2" is believed
// when the first bytes of the file, read here, are a qcow2 header that QEMU can open
// without any other file of the host (no external data file), and that names either no
// backing file or one that libvirt knows as a volume of a running pool, when no domain's
// definition reads the volume as a raw disk: an overlay the provider or an administrator
// made. Anything else — a header naming a host path that is no volume, a data file, a
// header that does not parse, a header on a volume some domain has as a raw disk — is a
// raw volume whose guest wrote those bytes. Every other format libvirt reports (raw, iso, none, vmdk, ...) is
// raw: the provider names only qcow2, raw and iso.
func (c *Client) trustVolume(ctx context.Context, info *VolumeInfo) (string, *FormatDoubt, error) {
	if info.Format != "qcow2" {
		return "raw", nil, nil
	}
	doubt := func(reason string) *FormatDoubt {
		return &FormatDoubt{Volume: info.Pool + "/" + info.Name, Reported: info.Format, Reason: reason}
	}
	head, err := c.readHead(ctx, info)
	if err != nil {
		return "", nil, err
	}
	hdr, err := qcow2.Probe(head)
	if err != nil {
		return "raw", doubt(fmt.Sprintf("its first bytes are no qcow2 header the provider accepts (%v)", err)), nil
	}
	if !hdr.HasBacking {
		return "qcow2", nil, nil
	}
	if info.Backing == "" {
		return "raw", doubt("its header names a backing file that libvirt does not show"), nil
	}
	err = c.Read(ctx, "look up backing file "+info.Backing, func(l *golibvirt.Libvirt) error {
		_, err := l.StorageVolLookupByPath(info.Backing)
		return err
	})
	switch {
	case err == nil:
		// A header naming another volume is an overlay, or a guest's forgery pointing at
		// another guest's disk. The guest wrote it through a disk; a domain definition that
		// reads the volume as raw is its creator's word that it is raw.
		var user string
		err = c.Read(ctx, "look for domains that read volume "+info.Pool+"/"+info.Name+" as raw", func(l *golibvirt.Libvirt) (err error) {
			user, err = rawDiskUser(l, info)
			return err
		})
		switch {
		case err != nil:
			return "", nil, err
		case user != "":
			return "raw", doubt(fmt.Sprintf("its header names backing file %s, and domain %s reads it as a raw disk", info.Backing, user)), nil
		}
		return "qcow2", nil, nil
	case errors.Is(err, ErrNotFound):
		return "raw", doubt(fmt.Sprintf("its header names backing file %s, which is no volume of a running storage pool", info.Backing)), nil
	}
	return "", nil, fmt.Errorf("look up the backing file %s of volume %s/%s: %w", info.Backing, info.Pool, info.Name, err)
}

// rawDiskUser returns the name of a domain whose definition (the persistent one; a
// transient domain's live one) has the volume as a disk with <driver type='raw'>, or "".
func rawDiskUser(l *golibvirt.Libvirt, info *VolumeInfo) (string, error) {
	doms, _, err := l.ConnectListAllDomains(1, 0)
	if err != nil {
		return "", err
	}
	for _, d := range doms {
		doc, err := l.DomainGetXMLDesc(d, golibvirt.DomainXMLInactive)
		if err != nil {
			if HasCode(classify("", "", err), golibvirt.ErrNoDomain) {
				continue // undefined meanwhile
			}
			return "", err
		}
		var x libvirtxml.Domain
		if err := x.Unmarshal(doc); err != nil {
			return "", fmt.Errorf("parse the definition of domain %s: %w", d.Name, err)
		}
		if x.Devices == nil {
			continue
		}
		for _, disk := range x.Devices.Disks {
			if disk.Source == nil || disk.Driver == nil || disk.Driver.Type != "raw" {
				continue
			}
			s := disk.Source
			if s.File != nil && s.File.File == info.Path || s.Block != nil && s.Block.Dev == info.Path ||
				s.Volume != nil && s.Volume.Pool == info.Pool && s.Volume.Volume == info.Name {
				return d.Name, nil
			}
		}
	}
	return "", nil
}

// readHead reads the first headerProbeBytes of the volume (all of a smaller one),
// resuming where a stream that ended early stopped (see DownloadVolume).
func (c *Client) readHead(ctx context.Context, info *VolumeInfo) ([]byte, error) {
	want := uint64(headerProbeBytes)
	if size := RawCapacity(info); size != 0 && size < want {
		want = size
	}
	var head bytes.Buffer
	for attempt := 1; uint64(head.Len()) < want; attempt++ {
		_, err := c.downloadOnce(ctx, VolumeRef{Key: info.Key, Pool: info.Pool}, &head, uint64(head.Len()), want-uint64(head.Len()))
		switch {
		case uint64(head.Len()) >= want:
		case err != nil && !errors.Is(err, errShortStream):
			return nil, fmt.Errorf("read the header of volume %s/%s: %w", info.Pool, info.Name, err)
		case attempt >= downloadAttempts:
			return nil, fmt.Errorf("read the header of volume %s/%s: the stream ended early %d times (%d of %d bytes)",
				info.Pool, info.Name, attempt, head.Len(), want)
		}
	}
	return head.Bytes(), nil
}

// FormatDisagrees reports whether libvirt's reported format contradicts a volume's stored
// one. Between raw and iso (a raw file holding a CD image, which a directory pool calls
// "iso" and back) there is no disagreement, nor when libvirt names no format.
func FormatDisagrees(stored, reported string) bool {
	return reported != "" && stored != "" && exportFormat(stored) != exportFormat(reported)
}

// RawCapacity is the size of a volume read as raw: its file's length. (libvirt's capacity
// of a file it reads as qcow2 is the header's virtual size, which a guest wrote.)
func RawCapacity(info *VolumeInfo) uint64 {
	if info.Physical != 0 {
		return info.Physical
	}
	return info.Capacity
}

// copyRaw makes spec (raw) as a byte-for-byte copy of src, streamed through the provider
// (download into upload): no program on the host reads src as an image, so nothing in
// its bytes is followed. On failure nothing is left.
func (c *Client) copyRaw(ctx context.Context, spec VolumeSpec, src *VolumeInfo) (*VolumeInfo, error) {
	if err := refuseEncrypted(spec, "a byte-for-byte copy of a raw volume (clone_from)"); err != nil {
		return nil, err
	}
	size := RawCapacity(src)
	vol, err := c.create(ctx, spec, size, nil)
	if err != nil {
		return nil, err
	}
	err = c.streamCopy(ctx, c, src, vol, size, fmt.Sprintf("copy volume %s/%s into %s byte for byte", src.Pool, src.Name, spec))
	if err != nil {
		return nil, c.discard(ctx, spec, vol, err)
	}
	return c.finish(ctx, spec, vol, size)
}

// streamCopy writes size bytes of src, as read through from (c itself, or another host's
// client), into vol on c: libvirt's download piped into its upload, through the provider.
// Neither daemon reads the bytes as an image. what names the work in errors.
func (c *Client) streamCopy(ctx context.Context, from *Client, src *VolumeInfo, vol golibvirt.StorageVol, size uint64, what string) error {
	pr, pw := io.Pipe()
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		pw.CloseWithError(from.DownloadVolume(dctx, VolumeRef{Key: src.Key, Pool: src.Pool}, pw))
	}()
	err := c.Write(ctx, what, func(l *golibvirt.Libvirt) error {
		return l.StorageVolUpload(vol, pr, 0, size, 0)
	})
	cancel()
	_ = pr.CloseWithError(errors.New("copy ended"))
	return err
}
