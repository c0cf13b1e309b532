package domain

import (
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// The tuning attributes of a `disk` block (cache and I/O mode, discard, iothread, queues,
// serial, wwn, read_only, shareable, sgio) and its `iotune` limits (model: iotune.go). disk.go
// embeds the model and merges the attributes; domainxml/disk_tuning.go and iotune.go
// own the XML and the rules.

type diskTuningModel struct {
	Cache        types.String `tfsdk:"cache"`
	IO           types.String `tfsdk:"io"`
	Discard      types.String `tfsdk:"discard"`
	DetectZeroes types.String `tfsdk:"detect_zeroes"`
	IOThread     types.Int64  `tfsdk:"iothread"`
	Queues       types.Int64  `tfsdk:"queues"`
	Serial       types.String `tfsdk:"serial"`
	WWN          types.String `tfsdk:"wwn"`
	ReadOnly     types.Bool   `tfsdk:"read_only"`
	Shareable    types.Bool   `tfsdk:"shareable"`
	SGIO         types.String `tfsdk:"sgio"`
	IOTune       *iotuneModel `tfsdk:"iotune"`
}

// restartNote is how a tuning change reaches a domain.
const restartNote = " A change rewrites the definition and restarts a running domain."

func tuningEnum(desc string, values ...string) schema.StringAttribute {
	return tfkit.OptionalString(desc+restartNote, stringvalidator.OneOf(values...))
}

func positiveInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)}}
}

// withDiskTuning is attrs (the disk block's) with the tuning attributes.
func withDiskTuning(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	maps.Copy(attrs, diskTuningAttributes())
	return attrs
}

func diskTuningAttributes() map[string]schema.Attribute {
	limit := func(what string) schema.Attribute { return positiveInt(what + " Default: no limit.") }
	ceiling := func(what string) schema.Attribute {
		return positiveInt("Burst ceiling of " + what + ": allowed for a short time; needs the base limit and is not below it.")
	}
	return map[string]schema.Attribute{
		"cache":         tuningEnum("Host cache mode: `none`, `writethrough`, `writeback`, `directsync` or `unsafe`. Default: libvirt's (writeback).", "none", "writethrough", "writeback", "directsync", "unsafe"),
		"io":            tuningEnum("Host I/O mode: `threads`, `native` (needs `cache` `none` or `directsync`) or `io_uring`. Default: QEMU's.", "native", "threads", "io_uring"),
		"discard":       tuningEnum("Guest discard/TRIM requests: `unmap` (passed to the image) or `ignore`. Default: ignore.", "unmap", "ignore"),
		"detect_zeroes": tuningEnum("Write zeroes as holes: `off`, `on` or `unmap` (with `discard = \"unmap\"` the zeroed range is also unmapped; with another `discard` libvirt treats it as `on`).", "off", "on", "unmap"),
		"iothread":      positiveInt("The domain's I/O thread (1 to the domain's `cpu.iothreads`) that serves the disk." + restartNote),
		"queues":        positiveInt("Number of virtio queues (virtio bus only). Default: QEMU's (one per vCPU)." + restartNote),
		"serial": tfkit.OptionalString("Serial number the guest sees: letters, digits, spaces and `_ . + -`, as libvirt allows (a virtio-blk guest sees the first 20)."+restartNote,
			stringvalidator.RegexMatches(domainxml.DiskSerialPattern, "may hold only letters, digits, spaces and _ . + - (libvirt refuses other characters)")),
		"wwn": tfkit.OptionalString("World Wide Name the guest sees (scsi and ide buses): 16 hex digits, compared without case; "+
			"read back in lower case (a domain made elsewhere imports that way)."+restartNote,
			stringvalidator.RegexMatches(regexp.MustCompile(`^(0x)?[0-9A-Fa-f]{16}$`), "must be 16 hex digits, e.g. 5000c50015ea71ad")),
		"read_only": schema.BoolAttribute{
			MarkdownDescription: "The guest cannot write the disk. Always true for a cdrom." + restartNote,
			Optional:            true, Computed: true,
		},
		"shareable": schema.BoolAttribute{MarkdownDescription: "Several domains may use the disk at once (no host locking; use `cache = \"none\"`)." + restartNote,
			Optional: true},
		"sgio": tuningEnum("For `device = \"lun\"`: `filtered` (default, only safe SCSI commands pass) or `unfiltered` "+
			"(libvirt 9.0 and later refuse it for QEMU).", "filtered", "unfiltered"),
		"iotune": schema.SingleNestedAttribute{
			MarkdownDescription: "I/O limits (bytes or operations per second; total or per direction, not both). " +
				"A change of only these applies **live** on a running domain (no restart); a stopped domain's definition is rewritten.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"total_bytes_sec": limit("Bytes per second, reads and writes together."), "read_bytes_sec": limit("Bytes read per second."),
				"write_bytes_sec": limit("Bytes written per second."), "total_iops_sec": limit("Operations per second, reads and writes together."),
				"read_iops_sec": limit("Read operations per second."), "write_iops_sec": limit("Write operations per second."),
				"total_bytes_sec_max": ceiling("`total_bytes_sec`"), "read_bytes_sec_max": ceiling("`read_bytes_sec`"),
				"write_bytes_sec_max": ceiling("`write_bytes_sec`"), "total_iops_sec_max": ceiling("`total_iops_sec`"),
				"read_iops_sec_max": ceiling("`read_iops_sec`"), "write_iops_sec_max": ceiling("`write_iops_sec`"),
				"group_name": tfkit.OptionalString("Throttle group: disks with the same group share its limits (needs a limit).",
					stringvalidator.LengthAtLeast(1)),
				"size_iops_sec": limit("For the iops limits, an operation larger than this many bytes counts as several (default: every operation counts once)."),
			},
		},
	}
}

// tuningToSpec is the disk's tuning as domainxml takes it (unknown values read as empty).
func (m diskTuningModel) toSpec() domainxml.DiskTuning {
	u := func(v types.Int64) uint { return uint(v.ValueInt64()) }
	t := domainxml.DiskTuning{Cache: m.Cache.ValueString(), IO: m.IO.ValueString(), Discard: m.Discard.ValueString(),
		DetectZeroes: m.DetectZeroes.ValueString(), IOThread: u(m.IOThread), Queues: u(m.Queues), Serial: m.Serial.ValueString(),
		WWN: m.WWN.ValueString(), ReadOnly: m.ReadOnly.ValueBool(), Shareable: m.Shareable.ValueBool(), SGIO: m.SGIO.ValueString()}
	if i := m.IOTune; i != nil {
		v := func(x types.Int64) uint64 { return uint64(x.ValueInt64()) }
		t.IOTune = &domainxml.IOTune{TotalBytesSec: v(i.TotalBytesSec), ReadBytesSec: v(i.ReadBytesSec), WriteBytesSec: v(i.WriteBytesSec),
			TotalIopsSec: v(i.TotalIopsSec), ReadIopsSec: v(i.ReadIopsSec), WriteIopsSec: v(i.WriteIopsSec),
			TotalBytesSecMax: v(i.TotalBytesSecMax), ReadBytesSecMax: v(i.ReadBytesSecMax), WriteBytesSecMax: v(i.WriteBytesSecMax),
			TotalIopsSecMax: v(i.TotalIopsSecMax), ReadIopsSecMax: v(i.ReadIopsSecMax), WriteIopsSecMax: v(i.WriteIopsSecMax),
			SizeIopsSec: v(i.SizeIopsSec), GroupName: i.GroupName.ValueString()}
	}
	return t
}

// diskTuningFromSpec is the model of what libvirt has (d), reconciled with prior: a wwn
// keeps the user's case (else lower case), a false the user wrote stays false (else null).
func diskTuningFromSpec(d domainxml.Disk, prior *diskTuningModel) diskTuningModel {
	if prior == nil {
		prior = &diskTuningModel{}
	}
	t := d.DiskTuning
	m := diskTuningModel{Cache: tfkit.StringOrNull(t.Cache), IO: tfkit.StringOrNull(t.IO), Discard: tfkit.StringOrNull(t.Discard), DetectZeroes: tfkit.StringOrNull(t.DetectZeroes),
		IOThread: tfkit.Int64OrNull(uint64(t.IOThread)), Queues: tfkit.Int64OrNull(uint64(t.Queues)), Serial: tfkit.StringOrNull(t.Serial), WWN: tfkit.StringOrNull(t.WWN),
		ReadOnly: optBool(t.ReadOnly || d.Device == domainxml.DeviceCDROM, prior.ReadOnly), Shareable: optBool(t.Shareable, prior.Shareable),
		SGIO: tfkit.StringOrNull(t.SGIO)}
	m.WWN = tfkit.StringOrNull(strings.ToLower(t.WWN))
	if tfkit.Known(prior.WWN) && sameWWN(prior.WWN.ValueString(), t.WWN) {
		m.WWN = prior.WWN
	}
	if i := t.IOTune; i != nil {
		m.IOTune = &iotuneModel{TotalBytesSec: tfkit.Int64OrNull(i.TotalBytesSec), ReadBytesSec: tfkit.Int64OrNull(i.ReadBytesSec), WriteBytesSec: tfkit.Int64OrNull(i.WriteBytesSec),
			TotalIopsSec: tfkit.Int64OrNull(i.TotalIopsSec), ReadIopsSec: tfkit.Int64OrNull(i.ReadIopsSec), WriteIopsSec: tfkit.Int64OrNull(i.WriteIopsSec),
			TotalBytesSecMax: tfkit.Int64OrNull(i.TotalBytesSecMax), ReadBytesSecMax: tfkit.Int64OrNull(i.ReadBytesSecMax), WriteBytesSecMax: tfkit.Int64OrNull(i.WriteBytesSecMax),
			TotalIopsSecMax: tfkit.Int64OrNull(i.TotalIopsSecMax), ReadIopsSecMax: tfkit.Int64OrNull(i.ReadIopsSecMax), WriteIopsSecMax: tfkit.Int64OrNull(i.WriteIopsSecMax),
			SizeIopsSec: tfkit.Int64OrNull(i.SizeIopsSec), GroupName: tfkit.StringOrNull(i.GroupName)}
	}
	return m
}

// planDiskTuning fills what libvirt_domain computes: an unset read_only is true for a
// cdrom and null (not read-only) else.
func planDiskTuning(plan *Model) {
	for i := range plan.Disks {
		d := &plan.Disks[i]
		if d.ReadOnly.IsUnknown() && !d.Device.IsUnknown() {
			d.ReadOnly = types.BoolNull()
			if d.Device.ValueString() == domainxml.DeviceCDROM {
				d.ReadOnly = types.BoolValue(true)
			}
		}
	}
}

func sameWWN(a, b string) bool {
	return strings.EqualFold(strings.TrimPrefix(a, "0x"), strings.TrimPrefix(b, "0x"))
}

// validateDiskTuning checks every disk whose values are all known against domainxml's
// rules, at plan time, with the error on the disk.
func validateDiskTuning(m *Model, diags *diag.Diagnostics) {
	for i, d := range m.Disks {
		if anyUnknown(d.Path, d.Device, d.Bus, d.Cache, d.IO, d.Discard, d.DetectZeroes, d.IOThread, d.Queues, d.SGIO, d.Serial, d.WWN) ||
			d.IOTune != nil && anyUnknown(d.IOTune.values()...) {
			continue
		}
		if d.Device.ValueString() == domainxml.DeviceCDROM && tfkit.Known(d.ReadOnly) && !d.ReadOnly.ValueBool() {
			diags.AddAttributeError(path.Root("disk").AtListIndex(i).AtName("read_only"), "A cdrom is read-only",
				fmt.Sprintf("disk %d is a cdrom, which is always read-only: remove read_only = false.", i))
		}
		if d.IOTune != nil && !d.IOTune.hasLimit() {
			diags.AddAttributeError(path.Root("disk").AtListIndex(i).AtName("iotune"), "iotune without a limit",
				fmt.Sprintf("disk %d: iotune sets no limit. Set at least one, e.g. total_iops_sec, or remove iotune.", i))
			continue
		}
		dk := domainxml.Disk{Path: d.Path.ValueString(), Device: d.Device.ValueString(), Bus: d.Bus.ValueString(), DiskTuning: d.toSpec()}
		if dk.Path == "" && tfkit.Known(d.VolumeID) {
			dk.Path = "(volume " + d.VolumeID.ValueString() + ")"
		}
		if n := d.Network; n != nil { // a lun may be an iSCSI LUN
			if !tfkit.Known(n.Protocol) {
				continue
			}
			dk.Network = &domainxml.NetworkSource{Protocol: n.Protocol.ValueString()}
		}
		if err := dk.ValidateTuning(fmt.Sprintf("disk %d", i)); err != nil {
			diags.AddAttributeError(path.Root("disk").AtListIndex(i), "Invalid disk tuning", err.Error())
		}
	}
}

func anyUnknown(vs ...attr.Value) bool {
	for _, v := range vs {
		if v.IsUnknown() {
			return true
		}
	}
	return false
}

// optBool is true when v, else false when prior says false (the user wrote it), else null.
func optBool(v bool, prior types.Bool) types.Bool {
	if v {
		return types.BoolValue(true)
	}
	if tfkit.Known(prior) {
		return types.BoolValue(false)
	}
	return types.BoolNull()
}
