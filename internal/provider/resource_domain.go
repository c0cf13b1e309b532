package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

var (
	_ resource.ResourceWithConfigure        = (*domainResource)(nil)
	_ resource.ResourceWithImportState      = (*domainResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*domainResource)(nil)
	_ resource.ResourceWithConfigValidators = (*domainResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*domainResource)(nil)
)

// NewDomainResource is the libvirt_domain resource.
func NewDomainResource() resource.Resource { return &domainResource{} }

type domainResource struct {
	client *libvirt.Client
}

// Defaults.
const (
	defaultShutdownTimeout = "1m"
	defaultWaitTimeout     = 5 * time.Minute
	defaultWaitSource      = "any"
)

type domainModel struct {
	ID           types.String   `tfsdk:"id"`
	Name         types.String   `tfsdk:"name"`
	UUID         types.String   `tfsdk:"uuid"`
	Type         types.String   `tfsdk:"type"`
	VCPU         types.Int64    `tfsdk:"vcpu"`
	MaxVCPU      types.Int64    `tfsdk:"max_vcpu"`
	MemoryMiB    types.Int64    `tfsdk:"memory_mib"`
	MaxMemoryMiB types.Int64    `tfsdk:"max_memory_mib"`
	Machine      types.String   `tfsdk:"machine"`
	CPUMode      types.String   `tfsdk:"cpu_mode"`
	CPUModel     types.String   `tfsdk:"cpu_model"`
	Firmware     types.String   `tfsdk:"firmware"`
	Autostart    types.Bool     `tfsdk:"autostart"`
	Running      types.Bool     `tfsdk:"running"`
	Disks        []diskModel    `tfsdk:"disk"`
	CloudinitID  types.String   `tfsdk:"cloudinit_id"`
	IgnitionID   types.String   `tfsdk:"ignition_id"`
	Interfaces   []nicModel     `tfsdk:"network_interface"`
	Graphics     *graphicsModel `tfsdk:"graphics"`
	QemuAgent    types.Bool     `tfsdk:"qemu_agent"`
	Shutdown     *shutdownModel `tfsdk:"shutdown"`
	State        types.String   `tfsdk:"state"`
	IPAddress    types.String   `tfsdk:"ip_address"`
	ConsoleURL   types.String   `tfsdk:"console_url"`
	UpdateMethod types.String   `tfsdk:"update_method"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

func (m *domainModel) readTimeouts() timeouts.Value { return m.Timeouts }

type diskModel struct {
	VolumeID  types.String `tfsdk:"volume_id"`
	Path      types.String `tfsdk:"path"`
	Device    types.String `tfsdk:"device"`
	Bus       types.String `tfsdk:"bus"`
	Target    types.String `tfsdk:"target"`
	Format    types.String `tfsdk:"format"`
	BootOrder types.Int64  `tfsdk:"boot_order"`
}

type nicModel struct {
	Network   types.String `tfsdk:"network"`
	Bridge    types.String `tfsdk:"bridge"`
	MAC       types.String `tfsdk:"mac"`
	Model     types.String `tfsdk:"model"`
	WaitForIP *waitModel   `tfsdk:"wait_for_ip"`
	Addresses types.List   `tfsdk:"addresses"`
}

type waitModel struct {
	Timeout types.String `tfsdk:"timeout"`
	Source  types.String `tfsdk:"source"`
}

type graphicsModel struct {
	Type   types.String `tfsdk:"type"`
	Listen types.String `tfsdk:"listen"`
}

type shutdownModel struct {
	Timeout types.String `tfsdk:"timeout"`
}

var (
	graphicsAttrTypes = map[string]attr.Type{"type": types.StringType, "listen": types.StringType}
	shutdownAttrTypes = map[string]attr.Type{"timeout": types.StringType}
	macRegexp         = regexp.MustCompile(`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`)
	// A libvirt domain name: no slash (libvirt refuses it), no whitespace or control
	// characters, not starting with '-' or '.'.
	domainNameRegexp = regexp.MustCompile(`^[A-Za-z0-9_][^/\s\x00-\x1f]{0,199}$`)
	uuidRegexp       = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

func (r *domainResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_domain"
}

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
						Validators:          []validator.String{ipValidator{}},
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
						Validators:          []validator.String{durationValidator{}},
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
									Validators: []validator.String{durationValidator{}},
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

func (r *domainResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics, "Resource")
}

func (r *domainResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan domainModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 20*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := plan.Name.ValueString()
	summary := "Unable to create libvirt domain " + name

	if plan.Type.IsUnknown() || plan.Type.IsNull() {
		info, err := r.client.HostInfo(ctx)
		if err != nil {
			resp.Diagnostics.AddError(summary, fmt.Sprintf("choose the domain type: %v", err))
			return
		}
		if info.DefaultDomainType == "" {
			resp.Diagnostics.AddError(summary, "The host offers neither kvm nor qemu domains for its architecture.")
			return
		}
		plan.Type = types.StringValue(info.DefaultDomainType)
	}
	if !known(plan.UUID) {
		// Chosen here rather than by libvirt, so that the define is idempotent: when the
		// connection breaks between the define and its answer, it is sent again and the
		// domain is made once, and a domain whose define may have landed is still tracked
		// by this id (see below and libvirt.Client.DefineDomain).
		plan.UUID = types.StringValue(uuid.NewString())
	}
	spec, err := r.resolve(ctx, &plan)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	dom, err := domainxml.Build(nil, spec)
	if err != nil {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("build domain XML: %v", err))
		return
	}
	text, err := dom.Marshal()
	if err != nil {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("build domain XML: %v", err))
		return
	}
	tflog.Debug(ctx, "defining domain", map[string]any{"name": name, "xml": text})
	d, err := r.client.DefineDomain(ctx, name, text)
	if err != nil && libvirt.IsTransport(err) {
		// The daemon stayed unreachable for longer than the define's retries: the domain
		// may or may not be defined. It goes into state anyway (tainted, with the error),
		// so that no apply leaves a domain on the host that the state does not track: the
		// next refresh drops it from state if it is not there, and a domain that is there
		// is replaced by the next apply.
		tflog.Warn(ctx, "the define's outcome is unknown; tracking the domain by its UUID", map[string]any{"name": name, "uuid": plan.UUID.ValueString()})
		plan.ID = plan.UUID
		plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
		r.finish(ctx, plan.UUID.ValueString(), &plan, &resp.State, &resp.Diagnostics, summary, err)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	id := libvirt.UUIDString(d)
	plan.ID = types.StringValue(id)
	plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))

	// From here on the domain exists: whatever fails, it goes into state with the error.
	var errs []error
	if plan.Autostart.ValueBool() {
		errs = append(errs, r.client.SetDomainAutostart(ctx, id, true))
	}
	if plan.Running.ValueBool() && errors.Join(errs...) == nil {
		errs = append(errs, r.client.StartDomain(ctx, id))
		if errors.Join(errs...) == nil {
			errs = append(errs, r.waitForIPs(ctx, id, &plan))
		}
	}
	r.finish(ctx, id, &plan, &resp.State, &resp.Diagnostics, summary, errors.Join(errs...))
}

// finish reads the domain back into state (after create or update) and reports err.
func (r *domainResource) finish(ctx context.Context, id string, plan *domainModel, state stateSetter, d *diag.Diagnostics, summary string, err error) {
	got, rerr := readBack(ctx, func(ctx context.Context) (*domainModel, error) { return r.read(ctx, id, plan) })
	if rerr != nil {
		if err == nil {
			err = rerr
		}
		// Keep what we know so that the domain stays tracked.
		got = plan
		fillUnknowns(got)
	}
	d.Append(state.Set(ctx, got)...)
	if err != nil {
		d.AddError(summary, err.Error())
	}
}

type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

func (r *domainResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, req, resp, time.Minute,
		func(m *domainModel) string { return "libvirt domain " + nameOr(m.Name, m.ID.ValueString()) },
		func(ctx context.Context, m *domainModel) (*domainModel, error) {
			return r.read(ctx, m.ID.ValueString(), m)
		})
}

func nameOr(n types.String, id string) string {
	if n.IsNull() || n.IsUnknown() || n.ValueString() == "" {
		return id
	}
	return n.ValueString()
}

func (r *domainResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state domainModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, 20*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := state.ID.ValueString()
	name := plan.Name.ValueString()
	summary := "Unable to update libvirt domain " + name
	plan.ID = state.ID
	if plan.Type.IsUnknown() {
		plan.Type = state.Type
	}

	spec, err := r.resolve(ctx, &plan)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	oldSpec := specFromModel(&state)
	autostart := plan.Autostart.ValueBool()
	res, err := workflow.Apply(ctx, r.client, workflow.Change{
		ID: id, Name: name, Old: oldSpec, New: spec, Running: plan.Running.ValueBool(), Autostart: &autostart,
		ShutdownTimeout: shutdownTimeout(&plan),
		// Same disks, written another way (volume_id for a path): the references are
		// recorded in the definition's metadata; nothing in the running domain changes.
		Rewrite: !domainxml.SameDiskRefs(oldSpec, specFromModel(&plan)),
	})
	if plan.UpdateMethod.IsUnknown() {
		plan.UpdateMethod = types.StringValue(string(res.Method))
	} // else: what the plan said (the domain may have stopped since; res.Method is what was done)
	tflog.Info(ctx, "updated domain", map[string]any{"name": name, "method": string(res.Method)})
	if res.Forced {
		tflog.Warn(ctx, "domain did not shut down in time and was forced off for the restart", map[string]any{"name": name})
	}
	if err == nil && plan.Running.ValueBool() {
		err = r.waitForIPs(ctx, id, &plan)
	}
	r.finish(ctx, id, &plan, &resp.State, &resp.Diagnostics, summary, err)
}

func (r *domainResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state domainModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := state.ID.ValueString()
	summary := "Unable to delete libvirt domain " + nameOr(state.Name, id)
	_, err := r.client.ShutdownDomain(ctx, id, shutdownTimeout(&state))
	if err == nil {
		err = r.client.UndefineDomain(ctx, id)
	}
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError(summary, err.Error())
	}
}

func (r *domainResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID == "" {
		resp.Diagnostics.AddError("Invalid import id", "expected a domain name or UUID, got an empty string")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

func shutdownTimeout(m *domainModel) time.Duration {
	s := defaultShutdownTimeout
	if m.Shutdown != nil && !m.Shutdown.Timeout.IsNull() && !m.Shutdown.Timeout.IsUnknown() {
		s = m.Shutdown.Timeout.ValueString()
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Minute
	}
	return d
}
