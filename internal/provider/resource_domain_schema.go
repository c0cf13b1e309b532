package provider

import (
	"context"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/validators"
)

func (r *domainResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A libvirt domain (virtual machine). Defaults are what users expect of a cloud VM: virtio disks and NICs, " +
			"a serial console, the QEMU guest-agent channel and VNC on 127.0.0.1. `vcpu` and `memory_mib` changes within the " +
			"`max_vcpu` / `max_memory_mib` headroom of a running domain apply live, without a restart; other changes rewrite " +
			"the definition and, when the domain runs, restart it gracefully. The plan says which in `update_method` (and a warning " +
			"names a restart). Values libvirt fills in or rewrites (MACs, machine type expansion, CPU model, device addresses, " +
			"vnet names, loader and nvram paths) never show as drift. A refresh never waits for addresses: it takes one quick " +
			"look at DHCP leases (and the guest agent, with a one-second deadline) and keeps the last known addresses otherwise.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The domain's UUID.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Domain name, unique on the host. Changing it replaces the domain.",
				Required:            true,
				Validators: []validator.String{stringvalidator.RegexMatches(domainNameRegexp,
					"must be a libvirt domain name: 1 to 200 characters, starting with a letter, digit or underscore, without '/' or whitespace")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"uuid": schema.StringAttribute{
				MarkdownDescription: "Domain UUID. Default: chosen by libvirt. Setting a different one replaces the domain.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{stringvalidator.RegexMatches(uuidRegexp, "must be a UUID such as 2f0e3b1c-5d6a-4b8e-9f00-1a2b3c4d5e6f")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown(), uuidReplace{}},
			},
			"type": schema.StringAttribute{
				MarkdownDescription: "Domain type: `kvm` (hardware virtualisation) or `qemu` (software emulation). Default: `kvm` when the " +
					"host's capabilities offer it, else `qemu` (see the `libvirt_host` data source).",
				Optional:      true,
				Computed:      true,
				Validators:    []validator.String{stringvalidator.OneOf("kvm", "qemu")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"vcpu": schema.Int64Attribute{
				MarkdownDescription: "Number of virtual CPUs. Growing it up to `max_vcpu` on a running domain is done live (CPU hot-add); " +
					"shrinking it restarts a running domain.",
				Required:   true,
				Validators: []validator.Int64{int64validator.Between(1, 4096)},
			},
			"max_vcpu": schema.Int64Attribute{
				MarkdownDescription: "Hot-add headroom: the maximum vCPU count (`<vcpu current=\"vcpu\">max_vcpu</vcpu>`). Default: `vcpu` " +
					"(no headroom). Changing it restarts a running domain.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(1, 4096)}, // >= vcpu: ValidateConfig
			},
			"memory_mib": schema.Int64Attribute{
				MarkdownDescription: "Memory in MiB (the current allocation, `<currentMemory>`). Changes up to `max_memory_mib` on a " +
					"running domain are applied live through the balloon.",
				Required:   true,
				Validators: []validator.Int64{int64validator.AtLeast(16)},
			},
			"max_memory_mib": schema.Int64Attribute{
				MarkdownDescription: "Memory headroom in MiB: the domain's maximum (`<memory>`). Default: `memory_mib` (no headroom). " +
					"Changing it restarts a running domain.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.AtLeast(16)}, // >= memory_mib: ValidateConfig
			},
			"machine": schema.StringAttribute{
				MarkdownDescription: "Machine type, e.g. `q35` or `pc`. Default: libvirt's default for the architecture. libvirt expands " +
					"aliases (`q35` becomes `pc-q35-7.2`); that is not drift.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cpu_mode": schema.StringAttribute{
				MarkdownDescription: "CPU mode: `host-passthrough`, `host-model` or `custom` (with `cpu_model`). Default: libvirt's " +
					"(for `qemu` domains that is `custom` with `qemu64`, shown here once created).",
				Optional:      true,
				Computed:      true,
				Validators:    []validator.String{stringvalidator.OneOf("host-passthrough", "host-model", "custom")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cpu_model": schema.StringAttribute{
				MarkdownDescription: "CPU model for `cpu_mode = \"custom\"`, e.g. `Haswell-noTSX`.",
				Optional:            true,
				Computed:            true,
				// Kept from state by ModifyPlan while cpu_mode stays the same.
			},
			"firmware": schema.StringAttribute{
				MarkdownDescription: "`bios` (default) or `uefi`. UEFI uses libvirt's firmware auto-selection (`<os firmware=\"efi\">`); " +
					"the domain gets its own nvram varstore, removed when the domain is destroyed.",
				Optional:   true,
				Computed:   true,
				Default:    stringdefault.StaticString(domainxml.FirmwareBIOS),
				Validators: []validator.String{stringvalidator.OneOf(domainxml.FirmwareBIOS, domainxml.FirmwareUEFI)},
			},
			"autostart": schema.BoolAttribute{
				MarkdownDescription: "Start the domain when libvirtd starts. Default `false`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"running": schema.BoolAttribute{
				MarkdownDescription: "Whether the domain should be running. Default `true`. A domain stopped outside Terraform shows " +
					"as a change back to `true`.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
			"cloudinit_id": schema.StringAttribute{
				MarkdownDescription: "ID of a `libvirt_cloudinit_iso` (a volume key or `<pool>/<name>`), attached as a read-only SATA cdrom " +
					"after the disks.",
				Optional: true,
			},
			"ignition_id": schema.StringAttribute{
				MarkdownDescription: "ID of a `libvirt_ignition` (a volume key or `<pool>/<name>`): the file is handed to the guest " +
					"through QEMU's fw_cfg as `opt/com.coreos/config` (`<sysinfo type='fwcfg'>`, libvirt 6.5 or newer), where " +
					"Fedora CoreOS and Flatcar read their Ignition config. Changing it rewrites the definition (a running " +
					"domain is restarted); Ignition itself only runs on a guest's first boot.",
				Optional: true,
			},
			"qemu_agent": schema.BoolAttribute{
				MarkdownDescription: "Add the QEMU guest-agent channel (virtio-serial `org.qemu.guest_agent.0`). Default `true`. Needed " +
					"for `wait_for_ip` with `source = \"agent\"` and used for graceful shutdown.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
			"graphics": schema.SingleNestedAttribute{
				MarkdownDescription: "Graphical console. Default `{ type = \"vnc\", listen = \"127.0.0.1\" }`; the port is chosen by libvirt " +
					"(see `console_url`).",
				Optional: true,
				Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(graphicsAttrTypes, map[string]attr.Value{
					"type": types.StringValue(domainxml.GraphicsVNC), "listen": types.StringValue(domainxml.DefaultListen)})),
				Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						MarkdownDescription: "`vnc` (default), `spice` or `none`.",
						Optional:            true,
						Computed:            true,
						Default:             stringdefault.StaticString(domainxml.GraphicsVNC),
						Validators:          []validator.String{stringvalidator.OneOf(domainxml.GraphicsVNC, domainxml.GraphicsSpice, domainxml.GraphicsNone)},
					},
					"listen": schema.StringAttribute{
						MarkdownDescription: "Address the console listens on. Default `127.0.0.1`.",
						Optional:            true,
						Computed:            true,
						Default:             stringdefault.StaticString(domainxml.DefaultListen),
						Validators:          []validator.String{validators.IP()},
					},
				},
			},
			"shutdown": schema.SingleNestedAttribute{
				MarkdownDescription: "How the domain is stopped (on destroy, `running = false` and restarts): a graceful shutdown request " +
					"(guest agent or ACPI power button), then a forced power-off after `timeout`. Default `{ timeout = \"1m\" }`.",
				Optional: true,
				Computed: true,
				Default: objectdefault.StaticValue(types.ObjectValueMust(shutdownAttrTypes, map[string]attr.Value{
					"timeout": types.StringValue(defaultShutdownTimeout)})),
				Attributes: map[string]schema.Attribute{
					"timeout": schema.StringAttribute{
						MarkdownDescription: "Go duration to wait for the guest to stop before forcing it off, e.g. `30s`. `0s` forces at once. Default `1m`.",
						Optional:            true,
						Computed:            true,
						Default:             stringdefault.StaticString(defaultShutdownTimeout),
						Validators:          []validator.String{validators.Duration()},
					},
				},
			},
			"state": schema.StringAttribute{
				MarkdownDescription: "The domain's state as libvirt reports it: `running`, `paused`, `shutoff`, `crashed`, ...",
				Computed:            true,
			},
			"ip_address": schema.StringAttribute{
				MarkdownDescription: "The first IPv4 address of the domain's interfaces that is not loopback or link-local (empty when none is known).",
				Computed:            true,
			},
			"console_url": schema.StringAttribute{
				MarkdownDescription: "URL of the graphical console of the running domain, e.g. `vnc://127.0.0.1:5900` (empty when not running or no graphics).",
				Computed:            true,
			},
			"update_method": schema.StringAttribute{
				MarkdownDescription: "How the last update was applied, and in a plan how the pending one will be: `none` (nothing in the " +
					"domain changes), `live` (vcpu/memory within headroom, applied live and persistently, no restart), `restart` " +
					"(definition rewritten, running domain restarted gracefully) or `definition` (definition rewritten, domain not running).",
				Computed: true,
			},
		},
		Blocks: map[string]schema.Block{
			"disk": schema.ListNestedBlock{
				MarkdownDescription: "Disks and cdroms, in order. Each names its source with exactly one of `volume_id` and `path`.",
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"volume_id": schema.StringAttribute{
							MarkdownDescription: "A volume: its key (e.g. `libvirt_volume.x.id`, the path for dir pools) or `<pool>/<name>`.",
							Optional:            true,
							Validators: []validator.String{stringvalidator.ExactlyOneOf(path.MatchRelative().AtParent().AtName("path")),
								stringvalidator.LengthAtLeast(1)},
						},
						"path": schema.StringAttribute{
							MarkdownDescription: "A file or block device on the host.",
							Optional:            true,
							Validators:          []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^/`), "must be an absolute path on the host")},
						},
						"device": schema.StringAttribute{
							MarkdownDescription: "`disk` (default) or `cdrom` (read-only).",
							Optional:            true,
							Computed:            true,
							Default:             stringdefault.StaticString(domainxml.DeviceDisk),
							Validators:          []validator.String{stringvalidator.OneOf(domainxml.DeviceDisk, domainxml.DeviceCDROM)},
						},
						"bus": schema.StringAttribute{
							MarkdownDescription: "`virtio` (default for disks), `sata` (default for cdroms), `scsi`, `ide` or `usb`.",
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
							MarkdownDescription: "Image format for the driver (`qcow2`, `raw`, ...). Default: the volume's own format, else from the file name.",
							Optional:            true,
							Computed:            true,
							Validators:          []validator.String{stringvalidator.OneOf("qcow2", "raw", "vmdk", "qed", "vdi", "vpc")},
						},
						"boot_order": schema.Int64Attribute{
							MarkdownDescription: "Boot priority (1 first). Default: none, the first disk boots.",
							Optional:            true,
							Validators:          []validator.Int64{int64validator.AtLeast(1)},
						},
					},
				},
			},
			"network_interface": schema.ListNestedBlock{
				MarkdownDescription: "Network interfaces, in order. Each is on exactly one of a libvirt `network` or a host `bridge`.",
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"network": schema.StringAttribute{
							MarkdownDescription: "Name of a libvirt network.",
							Optional:            true,
							Validators:          []validator.String{stringvalidator.ExactlyOneOf(path.MatchRelative().AtParent().AtName("bridge"))},
						},
						"bridge": schema.StringAttribute{
							MarkdownDescription: "Name of a bridge on the host.",
							Optional:            true,
						},
						"mac": schema.StringAttribute{
							MarkdownDescription: "MAC address, e.g. `52:54:00:12:34:56`. Default: chosen by libvirt and kept.",
							Optional:            true,
							Computed:            true,
							Validators:          []validator.String{stringvalidator.RegexMatches(macRegexp, "must be a MAC address such as 52:54:00:12:34:56")},
						},
						"model": schema.StringAttribute{
							MarkdownDescription: "NIC model: `virtio` (default), `e1000`, `e1000e`, `rtl8139`, ...",
							Optional:            true,
							Computed:            true,
							Default:             stringdefault.StaticString(domainxml.DefaultNIC),
						},
						"addresses": schema.ListAttribute{
							MarkdownDescription: "IP addresses of this interface (IPv4 first; loopback and link-local left out), from DHCP leases and the guest agent.",
							Computed:            true,
							ElementType:         types.StringType,
						},
					},
					Blocks: map[string]schema.Block{
						"wait_for_ip": schema.SingleNestedBlock{
							MarkdownDescription: "Make create and update wait until this interface has an address (never a refresh).",
							Attributes: map[string]schema.Attribute{
								"timeout": schema.StringAttribute{
									MarkdownDescription: "Go duration to wait, e.g. `2m`. Default `5m`. On timeout the apply fails naming the domain, " +
										"the MAC and the source; the domain stays in state.",
									Optional:   true,
									Validators: []validator.String{validators.Duration()},
								},
								"source": schema.StringAttribute{
									MarkdownDescription: "Where to look: `lease` (the libvirt network's DHCP leases), `agent` (the QEMU guest agent) or `any` (default).",
									Optional:            true,
									Validators:          []validator.String{stringvalidator.OneOf("lease", "agent", "any")},
								},
							},
						},
					},
				},
			},
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}
