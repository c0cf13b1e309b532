package domainxml

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Disk tuning: the driver and device settings of a disk beyond its source (cache and I/O
// mode, discard, iothread, queues, serial, wwn, read-only, shareable, SCSI passthrough)
// and its I/O limits (iotune.go). Every one rewrites the definition; only the limits
// change live on a running domain.

// DeviceLUN is a SCSI passthrough disk: a host block device the guest sends SCSI commands to.
const DeviceLUN = "lun"

// DiskTuning is what a disk may tune. The zero value is libvirt's defaults (nothing
// written), so a disk without tuning builds exactly as before.
type DiskTuning struct {
	Cache        string // none, writethrough, writeback, directsync, unsafe
	IO           string // native, threads, io_uring
	Discard      string // unmap, ignore
	DetectZeroes string // off, on, unmap
	IOThread     uint   // 0: none
	Queues       uint   // 0: libvirt's default (virtio only)
	Serial       string
	WWN          string // 16 hex digits; compared without case
	// ReadOnly is always true for a cdrom (Build writes <readonly/> for every cdrom).
	ReadOnly  bool
	Shareable bool
	SGIO      string // filtered, unfiltered (lun only)
	IOTune    *IOTune
}

var (
	wwnPattern = regexp.MustCompile(`^(0x)?[0-9A-Fa-f]{16}$`)
	// DiskSerialPattern is libvirt's own rule for a disk serial (qemuSafeSerialParamValue): these characters,
	// any length. The guest may see fewer (virtio-blk shows 20).
	DiskSerialPattern = regexp.MustCompile(`^[A-Za-z0-9_ .+-]+$`)
)

// validateTuning checks one disk's tuning (defaults filled in).
func validateTuning(dk Disk) error { return dk.ValidateTuning("disk " + dk.Target) }

// ValidateTuning checks dk's tuning against its device, bus and path (empty bus: the
// device's default); name says which disk in the errors. The plan checks a configuration
// with it, Build every spec.
func (dk Disk) ValidateTuning(name string) error {
	if dk.Device == "" {
		dk.Device = DeviceDisk
	}
	if dk.Bus == "" {
		dk.Bus = DefaultBus(dk.Device)
	}
	t := dk.DiskTuning
	switch {
	case t.IO == "native" && t.Cache != "none" && t.Cache != "directsync":
		return fmt.Errorf("%s: io = \"native\" needs cache = \"none\" or \"directsync\" (QEMU refuses native AIO through the host page cache), not %q", name, t.Cache)
	case t.Queues > 0 && dk.Bus != "virtio":
		return fmt.Errorf("%s: queues applies to the virtio bus only, the disk is on %s", name, dk.Bus)
	case t.SGIO != "" && dk.Device != DeviceLUN:
		return fmt.Errorf("%s: sgio applies to device = \"lun\" only", name)
	case dk.Device == DeviceLUN && ((!strings.HasPrefix(dk.Path, "/dev/") && !isISCSI(dk.Network)) || dk.Bus != "scsi"):
		return fmt.Errorf("%s: device = \"lun\" needs a host block device path (/dev/...) or an iscsi network_source, and bus = \"scsi\"", name)
	case t.WWN != "" && !wwnPattern.MatchString(t.WWN):
		return fmt.Errorf("%s: wwn %q must be 16 hex digits, e.g. 5000c50015ea71ad", name, t.WWN)
	case t.Serial != "" && !DiskSerialPattern.MatchString(t.Serial):
		return fmt.Errorf("%s: serial %q may hold only letters, digits, spaces and _ . + - (libvirt refuses other characters)", name, t.Serial)
	}
	return t.IOTune.validate(name)
}

// buildTuning writes dk's tuning into x (x.Driver is set). Empty values remove what a
// former definition had: the provider manages these settings.
func buildTuning(x *libvirtxml.DomainDisk, dk Disk) {
	t := dk.DiskTuning
	x.Driver.Cache, x.Driver.IO, x.Driver.Discard, x.Driver.DetectZeros = t.Cache, t.IO, t.Discard, t.DetectZeroes
	x.Driver.IOThread, x.Driver.Queues = optUint(t.IOThread), optUint(t.Queues)
	x.Serial, x.WWN = t.Serial, t.WWN
	x.Shareable = nil
	if t.Shareable {
		x.Shareable = &libvirtxml.DomainDiskShareable{}
	}
	x.SGIO = ""
	if dk.Device == DeviceLUN {
		x.SGIO = t.SGIO
	}
	x.IOTune = t.IOTune.xml()
}

// parseTuning reads x's tuning, ignoring what libvirt or QEMU fill in (iotune lengths).
// A cdrom's read-only is not read: every cdrom is (readOnly).
func parseTuning(x *libvirtxml.DomainDisk) DiskTuning {
	t := DiskTuning{Serial: x.Serial, WWN: x.WWN, ReadOnly: x.ReadOnly != nil && x.Device != DeviceCDROM, Shareable: x.Shareable != nil, SGIO: x.SGIO,
		IOTune: parseIOTune(x.IOTune)}
	if d := x.Driver; d != nil {
		t.Cache, t.IO, t.Discard, t.DetectZeroes = d.Cache, d.IO, d.Discard, d.DetectZeros
		t.IOThread, t.Queues = derefUint(d.IOThread), derefUint(d.Queues)
	}
	return t
}

// sameTuning compares two disks' tuning but their limits (sameIOTune). A cdrom is
// read-only whatever the spec says.
func sameTuning(x, y Disk) bool {
	a, b := x.DiskTuning, y.DiskTuning
	return a.Cache == b.Cache && a.IO == b.IO && a.Discard == b.Discard && a.DetectZeroes == b.DetectZeroes &&
		a.IOThread == b.IOThread && a.Queues == b.Queues && a.Serial == b.Serial &&
		strings.EqualFold(strings.TrimPrefix(a.WWN, "0x"), strings.TrimPrefix(b.WWN, "0x")) &&
		readOnly(x) == readOnly(y) && a.Shareable == b.Shareable && a.SGIO == b.SGIO
}

func readOnly(d Disk) bool { return d.ReadOnly || d.Device == DeviceCDROM }

// ensureSCSIController adds a virtio-scsi controller when a disk is on the scsi bus and
// the definition has no scsi controller (libvirt would add an emulated lsi one). A
// controller already there stays as it is, with its index.
func ensureSCSIController(d *libvirtxml.Domain, disks []Disk) {
	need := false
	for _, dk := range disks {
		need = need || dk.Bus == "scsi"
	}
	if !need {
		return
	}
	for _, c := range d.Devices.Controllers {
		if c.Type == "scsi" {
			return
		}
	}
	zero := uint(0)
	d.Devices.Controllers = append(d.Devices.Controllers, libvirtxml.DomainController{Type: "scsi", Index: &zero, Model: "virtio-scsi"})
}

func optUint(v uint) *uint {
	if v == 0 {
		return nil
	}
	return &v
}

func derefUint(p *uint) uint {
	if p == nil {
		return 0
	}
	return *p
}

// The values the tuning attributes take.
var (
	DiskCaches       = []string{"none", "writethrough", "writeback", "directsync", "unsafe"}
	DiskIOModes      = []string{"native", "threads", "io_uring"}
	DiskDiscards     = []string{"unmap", "ignore"}
	DiskDetectZeroes = []string{"off", "on", "unmap"}
	DiskSGIOs        = []string{"filtered", "unfiltered"}
)

// untypedTuning: tuning values the attributes take, <iotune> limits the iotune block
// holds (libvirt writes the burst lengths itself).
func untypedTuning(x *libvirtxml.DomainDisk) string {
	d := x.Driver
	in := func(v string, values []string) bool { return v == "" || slices.Contains(values, v) }
	switch {
	case !in(d.Cache, DiskCaches) || !in(d.IO, DiskIOModes) || !in(d.Discard, DiskDiscards) || !in(d.DetectZeros, DiskDetectZeroes) ||
		!in(x.SGIO, DiskSGIOs) || x.SGIO != "" && x.Device != DeviceLUN:
		return "a tuning value"
	case d.IOThread != nil && *d.IOThread == 0, d.Queues != nil && *d.Queues == 0:
		return "iothread or queues 0"
	case x.IOTune != nil && parseIOTune(x.IOTune) == nil:
		return "iotune without limits"
	}
	return ""
}
