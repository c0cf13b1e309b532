package domain

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainDisksModel: the `disk` blocks and the cloud-init seed (cloudinit_id), which is
// a cdrom after the disks.
type domainDisksModel struct {
	Disks       []diskModel  `tfsdk:"disk"`
	CloudinitID types.String `tfsdk:"cloudinit_id"`
}

type diskModel struct {
	VolumeID  types.String      `tfsdk:"volume_id"`
	Path      types.String      `tfsdk:"path"`
	Device    types.String      `tfsdk:"device"`
	Bus       types.String      `tfsdk:"bus"`
	Target    types.String      `tfsdk:"target"`
	Format    types.String      `tfsdk:"format"`
	BootOrder types.Int64       `tfsdk:"boot_order"`
	Network   *diskNetworkModel `tfsdk:"network_source"`
	diskTuningModel
}

var domainDisks = family{
	attributes: map[string]schema.Attribute{
		"cloudinit_id": tfkit.OptionalString("ID of a `libvirt_cloudinit_iso` (a volume key or `<pool>/<name>`), attached as a read-only SATA cdrom " +
			"after the disks. Another ISO is inserted live on a running domain; adding or removing it restarts the domain."),
	},
	blocks: map[string]schema.Block{
		"disk": schema.ListNestedBlock{
			MarkdownDescription: "Disks and cdroms, in order. Each names its source with exactly one of `volume_id`, `path` and `network_source`. " +
				"On a running domain, disks on the `virtio`, `scsi` or `usb` bus added at the end or removed are hot-plugged (live, no restart; " +
				"a removal waits up to 30 s for the guest to let the disk go), and a cdrom's new source is inserted live; " +
				"`sata` and `ide` disks, reordering, and other changes of a disk restart the domain. " +
				"A disk these blocks cannot say exactly (a floppy, an nvme or vhost-user disk, a gluster image, ...) goes whole into `device_xml`; " +
				"its target is then taken for the disks here.",
			NestedObject: schema.NestedBlockObject{
				Attributes: withDiskTuning(map[string]schema.Attribute{
					"volume_id": tfkit.OptionalString("A volume: its key (e.g. `libvirt_volume.x.id`, the path for dir pools) or `<pool>/<name>`. "+
						"An encrypted volume's LUKS encryption and secret go with it into the disk.",
						stringvalidator.LengthAtLeast(1)),
					"network_source": networkSourceAttribute,
					"path":           tfkit.OptionalString("A file or block device on the host.", stringvalidator.RegexMatches(regexp.MustCompile(`^/`), "must be an absolute path on the host")),
					"device": schema.StringAttribute{
						MarkdownDescription: "`disk` (default), `cdrom` (read-only) or `lun` (SCSI passthrough of a host block device `path`, bus `scsi`).",
						Optional:            true,
						Computed:            true,
						Default:             stringdefault.StaticString(domainxml.DeviceDisk),
						Validators:          []validator.String{stringvalidator.OneOf(domainxml.DeviceDisk, domainxml.DeviceCDROM, domainxml.DeviceLUN)},
					},
					"bus": schema.StringAttribute{
						MarkdownDescription: "`virtio` (default for disks), `sata` (default for cdroms), `scsi` (default for luns; adds a virtio-scsi controller when the domain has no SCSI controller), `ide` or `usb`.",
						Optional:            true,
						Computed:            true,
						Validators:          []validator.String{stringvalidator.OneOf("virtio", "sata", "scsi", "ide", "usb")},
					},
					"target": schema.StringAttribute{
						MarkdownDescription: "Device name in the guest's bus order: default the next free `vda`, `vdb`, ... (virtio) or `sda`, ... (sata, scsi, usb).",
						Optional:            true,
						Computed:            true,
						Validators:          []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^(vd|sd|hd|xvd)[a-z]+$`), "must be a device name such as vda or sdb")},
					},
					"format": schema.StringAttribute{
						MarkdownDescription: "Image format for the driver (`qcow2`, `raw`, ...), always written into the disk's `<driver type>` so that " +
							"libvirt and QEMU never guess it from the bytes. Default for `volume_id`: `qcow2` only when libvirt reads the " +
							"volume as a qcow2 image whose header the provider accepts (no external data file, a backing file only if it " +
							"is a volume of a storage pool), else `raw` (a raw disk never follows a backing file, whatever a guest wrote " +
							"into it); for `path` outside any pool, from the file name (`.qcow2`, `.vmdk`, else raw). Set it to the " +
							"`format` of the `libvirt_volume` to take the provider's stored format.",
						Optional:   true,
						Computed:   true,
						Validators: []validator.String{stringvalidator.OneOf("qcow2", "raw", "vmdk", "qed", "vdi", "vpc")},
					},
					"boot_order": schema.Int64Attribute{
						MarkdownDescription: "Boot priority (1 first). Default: none, the first disk boots.",
						Optional:            true,
						Validators:          []validator.Int64{int64validator.AtLeast(1)},
					},
				}),
			},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		for _, d := range m.Disks {
			s.Disks = append(s.Disks, domainxml.Disk{
				VolumeID: d.VolumeID.ValueString(), Path: d.Path.ValueString(), Device: d.Device.ValueString(),
				Bus: d.Bus.ValueString(), Target: d.Target.ValueString(), Format: d.Format.ValueString(),
				BootOrder: uint(d.BootOrder.ValueInt64()), DiskTuning: d.toSpec(), Network: d.Network.toSpec(),
			})
		}
		if !m.CloudinitID.IsNull() {
			s.CloudInit = &domainxml.CloudInit{ID: m.CloudinitID.ValueString()}
		}
	},
	// Every disk source becomes a path and a format (a network disk is raw unless said);
	// the seed's reference, its path.
	resolve: func(ctx context.Context, c *libvirt.Client, s *domainxml.Spec) error {
		if err := checkSecretUsages(ctx, c, s); err != nil {
			return err
		}
		for i := range s.Disks {
			d := &s.Disks[i]
			if d.Network != nil {
				continue
			}
			src, err := c.DiskSourceOf(ctx, d.VolumeID, d.Path)
			if err != nil {
				return fmt.Errorf("disk %d: %w", i, err)
			}
			d.Path, d.Encryption = src.Path, diskEncryption(src.Encryption) // an encrypted volume's key goes with it
			if d.Format == "" {
				d.Format = src.Format
			}
		}
		if s.CloudInit != nil {
			p, _, err := c.DiskSource(ctx, s.CloudInit.ID, "")
			if err != nil {
				return fmt.Errorf("cloudinit_id: %w", err)
			}
			s.CloudInit.Path = p
		}
		return nil
	},
	// A disk named by volume_id keeps that reference (the record in the definition's
	// metadata says which), never the path it resolved to.
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.CloudinitID = types.StringNull()
		if s.CloudInit != nil {
			m.CloudinitID = types.StringValue(s.CloudInit.ID)
		}
		m.Disks = nil
		for i, d := range inPriorOrder(s.Disks, prior) {
			var priorTuning *diskTuningModel
			var priorNet *diskNetworkModel
			if prior != nil && i < len(prior.Disks) {
				priorTuning, priorNet = &prior.Disks[i].diskTuningModel, prior.Disks[i].Network
			}
			dm := diskModel{
				VolumeID: tfkit.StringOrNull(d.VolumeID), Path: types.StringNull(), Device: types.StringValue(d.Device),
				Bus: types.StringValue(d.Bus), Target: types.StringValue(d.Target), Format: tfkit.StringOrNull(d.Format),
				BootOrder: types.Int64Null(), diskTuningModel: diskTuningFromSpec(d, priorTuning),
				Network: diskNetworkFromSpec(d.Network, priorNet),
			}
			if d.VolumeID == "" && d.Network == nil {
				dm.Path = types.StringValue(d.Path)
			}
			if d.BootOrder > 0 {
				dm.BootOrder = types.Int64Value(int64(d.BootOrder))
			}
			m.Disks = append(m.Disks, dm)
		}
	},
	validate: func(m *Model, diags *diag.Diagnostics) {
		validateDiskTuning(m, diags)
		validateDiskNetworks(m, diags)
	},
	fillUnknowns: func(m *Model) {
		for i := range m.Disks {
			tfkit.NullIfUnknown(&m.Disks[i].Bus, &m.Disks[i].Target, &m.Disks[i].Format)
			if m.Disks[i].ReadOnly.IsUnknown() {
				m.Disks[i].ReadOnly = types.BoolNull()
			}
		}
	},
}

// inPriorOrder is disks in the order prior has their targets: libvirt keeps the disks of
// one bus sorted by target as it parses a definition (vdb before vdc whatever the order
// written), so a configuration that lists them otherwise (or one generated from a
// definition libvirt sorted differently, as when a disk's bus was left out) would read
// back reordered after every write. A prior disk whose target is not known yet (left to
// the provider) takes the next disk prior does not name, in libvirt's order; disks
// beyond prior's follow.
func inPriorOrder(disks []domainxml.Disk, prior *Model) []domainxml.Disk {
	if prior == nil {
		return disks
	}
	slot := make([]int, len(prior.Disks))
	used := make([]bool, len(disks))
	for i, p := range prior.Disks {
		slot[i] = -1
		for j, d := range disks {
			if tfkit.Known(p.Target) && !used[j] && d.Target == p.Target.ValueString() {
				slot[i], used[j] = j, true
				break
			}
		}
	}
	var rest []int
	for j := range disks {
		if !used[j] {
			rest = append(rest, j)
		}
	}
	out := make([]domainxml.Disk, 0, len(disks))
	for _, j := range slot {
		if j < 0 && len(rest) > 0 {
			j, rest = rest[0], rest[1:]
		}
		if j >= 0 {
			out = append(out, disks[j])
		}
	}
	for _, j := range rest {
		out = append(out, disks[j])
	}
	return out
}

// diskEncryption is a volume's encryption as a domain disk writes it; nil when the
// volume is plain or its secret is unknown (then the definition keeps what it has).
func diskEncryption(e *libvirt.VolumeEncryption) *domainxml.DiskEncryption {
	if e == nil || e.Secret == "" {
		return nil
	}
	return &domainxml.DiskEncryption{Format: e.Format, Secret: e.Secret}
}
