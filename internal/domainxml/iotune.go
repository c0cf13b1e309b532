package domainxml

import (
	"errors"
	"fmt"

	"libvirt.org/go/libvirtxml"
)

// IOTune is a disk's I/O limits (<iotune>): bytes and operations per second, in total
// or per direction, each with an optional burst ceiling (_max), and the throttle group
// disks share. Zero is no limit. It is the one disk setting that changes live. Its fields
// are libvirt.BlockIOTune's, in the same order, so one converts to the other.
type IOTune struct {
	TotalBytesSec, ReadBytesSec, WriteBytesSec          uint64
	TotalIopsSec, ReadIopsSec, WriteIopsSec             uint64
	TotalBytesSecMax, ReadBytesSecMax, WriteBytesSecMax uint64
	TotalIopsSecMax, ReadIopsSecMax, WriteIopsSecMax    uint64
	// SizeIopsSec counts an operation larger than this many bytes as several for the
	// iops limits (0: every operation counts once).
	SizeIopsSec uint64
	GroupName   string
}

// IOTuneLimit is one limit with its libvirt parameter name (that of the XML element and
// of virDomainSetBlockIoTune, e.g. total_bytes_sec).
type IOTuneLimit struct {
	Name  string
	Value uint64
}

// Limits lists every limit of t (nil: all zero) in a fixed order, zeros included: what
// a live change sends, so that a removed limit is cleared.
func (t *IOTune) Limits() []IOTuneLimit {
	var v IOTune
	if t != nil {
		v = *t
	}
	return []IOTuneLimit{
		{"total_bytes_sec", v.TotalBytesSec}, {"read_bytes_sec", v.ReadBytesSec}, {"write_bytes_sec", v.WriteBytesSec},
		{"total_iops_sec", v.TotalIopsSec}, {"read_iops_sec", v.ReadIopsSec}, {"write_iops_sec", v.WriteIopsSec},
		{"total_bytes_sec_max", v.TotalBytesSecMax}, {"read_bytes_sec_max", v.ReadBytesSecMax}, {"write_bytes_sec_max", v.WriteBytesSecMax},
		{"total_iops_sec_max", v.TotalIopsSecMax}, {"read_iops_sec_max", v.ReadIopsSecMax}, {"write_iops_sec_max", v.WriteIopsSecMax},
	}
}

// hasLimit says t sets at least one limit.
func (t *IOTune) hasLimit() bool {
	for _, l := range t.Limits() {
		if l.Value > 0 {
			return true
		}
	}
	return false
}

// validate checks the rules libvirt enforces, at plan time: total and per-direction
// limits of one kind exclude each other, a burst ceiling needs its base and is not below
// it, a group needs a limit.
func (t *IOTune) validate(disk string) error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, kind := range []struct {
		name               string
		total, read, write uint64
	}{{"bytes_sec", t.TotalBytesSec, t.ReadBytesSec, t.WriteBytesSec}, {"iops_sec", t.TotalIopsSec, t.ReadIopsSec, t.WriteIopsSec},
		{"bytes_sec_max", t.TotalBytesSecMax, t.ReadBytesSecMax, t.WriteBytesSecMax}, {"iops_sec_max", t.TotalIopsSecMax, t.ReadIopsSecMax, t.WriteIopsSecMax}} {
		if kind.total > 0 && (kind.read > 0 || kind.write > 0) {
			errs = append(errs, fmt.Errorf("%s: iotune total_%s cannot be set with read_%s or write_%s; set the total or the per-direction limits", disk, kind.name, kind.name, kind.name))
		}
	}
	l := t.Limits()
	for i := 0; i < 6; i++ {
		base, ceiling := l[i], l[i+6]
		if ceiling.Value > 0 && ceiling.Value < base.Value || ceiling.Value > 0 && base.Value == 0 {
			errs = append(errs, fmt.Errorf("%s: iotune %s = %d needs %s set and at most %d (it is the burst ceiling above %s)",
				disk, ceiling.Name, ceiling.Value, base.Name, ceiling.Value, base.Name))
		}
	}
	if t.GroupName != "" && !t.hasLimit() {
		errs = append(errs, fmt.Errorf("%s: iotune group_name %q needs at least one limit", disk, t.GroupName))
	}
	return errors.Join(errs...)
}

func (t *IOTune) xml() *libvirtxml.DomainDiskIOTune {
	if t == nil || !t.hasLimit() {
		return nil
	}
	return &libvirtxml.DomainDiskIOTune{
		TotalBytesSec: t.TotalBytesSec, ReadBytesSec: t.ReadBytesSec, WriteBytesSec: t.WriteBytesSec,
		TotalIopsSec: t.TotalIopsSec, ReadIopsSec: t.ReadIopsSec, WriteIopsSec: t.WriteIopsSec,
		TotalBytesSecMax: t.TotalBytesSecMax, ReadBytesSecMax: t.ReadBytesSecMax, WriteBytesSecMax: t.WriteBytesSecMax,
		TotalIopsSecMax: t.TotalIopsSecMax, ReadIopsSecMax: t.ReadIopsSecMax, WriteIopsSecMax: t.WriteIopsSecMax,
		SizeIopsSec: t.SizeIopsSec, GroupName: t.GroupName,
	}
}

// parseIOTune reads <iotune> without the _max_length burst lengths, which libvirt writes
// into the definition itself when a live change sets a burst ceiling; one without
// limits (a group name echoed alone) is none.
func parseIOTune(x *libvirtxml.DomainDiskIOTune) *IOTune {
	if x == nil {
		return nil
	}
	t := &IOTune{
		TotalBytesSec: x.TotalBytesSec, ReadBytesSec: x.ReadBytesSec, WriteBytesSec: x.WriteBytesSec,
		TotalIopsSec: x.TotalIopsSec, ReadIopsSec: x.ReadIopsSec, WriteIopsSec: x.WriteIopsSec,
		TotalBytesSecMax: x.TotalBytesSecMax, ReadBytesSecMax: x.ReadBytesSecMax, WriteBytesSecMax: x.WriteBytesSecMax,
		TotalIopsSecMax: x.TotalIopsSecMax, ReadIopsSecMax: x.ReadIopsSecMax, WriteIopsSecMax: x.WriteIopsSecMax,
		SizeIopsSec: x.SizeIopsSec, GroupName: x.GroupName,
	}
	if !t.hasLimit() {
		return nil
	}
	return t
}

// sameIOTune: no limits and an all-zero block are the same.
func sameIOTune(a, b *IOTune) bool {
	if a == nil || !a.hasLimit() {
		return b == nil || !b.hasLimit()
	}
	return b != nil && *a == *b
}
