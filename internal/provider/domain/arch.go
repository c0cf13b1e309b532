package domain

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainArchModel: arch and emulator (domainxml's arch family).
type domainArchModel struct {
	Arch     types.String `tfsdk:"arch"`
	Emulator types.String `tfsdk:"emulator"`
}

var domainArch = family{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"arch": schema.StringAttribute{
			MarkdownDescription: "Guest architecture, e.g. `x86_64` or `aarch64` (see `virsh capabilities`). Default: the host's. " +
				"Checked at plan time against the host's capabilities. Changing it replaces the domain (a guest of another " +
				"architecture is another machine: its machine type, CPU, firmware and devices all differ); removing it keeps " +
				"the domain's. A domain of an ARM arch made here gets what it needs to start under emulation: machine `virt`, " +
				"CPU `cortex-a57` (`host-passthrough` under `kvm`), no `apic`, and `acpi` only with `firmware = \"uefi\"` " +
				"(libvirt allows ACPI on aarch64 only with UEFI); `firmware = \"bios\"` there means no firmware at all " +
				"(direct `os.kernel` boot), and the guest has no input devices (nor a USB controller) unless `devices.input` adds them (`bus = \"virtio\"`).",
			Optional: true,
			Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^[a-z0-9_]+$`),
				"must be an architecture name as libvirt spells it, e.g. x86_64, aarch64, armv7l")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(archReplace, "a new arch replaces the domain", "A new arch replaces the domain.")},
		},
		"emulator": schema.StringAttribute{
			MarkdownDescription: "The QEMU binary on the host, e.g. `/usr/bin/qemu-system-aarch64`. Default: the one the host's " +
				"domain capabilities name for `arch` and `type`. Checked at plan time: libvirt must accept it for that arch " +
				"(it exists, is QEMU, emulates the arch). A change rewrites the definition and restarts a running domain; " +
				"removing it keeps the domain's.",
			Optional: true,
			Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^/`),
				"must be an absolute path to the QEMU binary on the host, e.g. /usr/bin/qemu-system-x86_64")},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.Arch, s.Emulator = tfkit.StringOf(m.OS.Arch), tfkit.StringOf(m.OS.Emulator)
	},
	// Written: what libvirt has (another value is drift). Not written: null, whatever the
	// domain has. An import writes what importOSDefaults left (what differs from the host's).
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.OS.Arch, m.OS.Emulator = types.StringNull(), types.StringNull()
		if isImport(prior) || !prior.OS.Arch.IsNull() {
			m.OS.Arch = tfkit.StringOrNull(s.Arch)
		}
		if isImport(prior) || !prior.OS.Emulator.IsNull() {
			m.OS.Emulator = tfkit.StringOrNull(s.Emulator)
		}
	},
	validate: func(m *Model, diags *diag.Diagnostics) {
		if !tfkit.Known(m.OS.Arch) || m.OS.Arch.ValueString() != domainxml.ArchAArch64 || !tfkit.Known(m.Features) {
			return
		}
		acpi, ok := m.Features.Attributes()["acpi"].(types.Bool)
		if ok && tfkit.Known(acpi) && acpi.ValueBool() && (!tfkit.Known(m.Firmware) || m.Firmware.ValueString() != domainxml.FirmwareUEFI) {
			diags.AddAttributeError(path.Root("features").AtName("acpi"), "ACPI on aarch64 needs UEFI",
				fmt.Sprintf("libvirt_domain %s: features.acpi = true with os.arch = \"aarch64\" needs firmware = \"uefi\" (libvirt: "+
					"ACPI requires UEFI on this architecture). Set firmware = \"uefi\" or remove acpi.", m.Name.ValueString()))
		}
	},
	fillUnknowns: func(m *Model) { tfkit.NullIfUnknown(&m.OS.Arch, &m.OS.Emulator) },
}

// archReplace: an arch that differs from the one in state replaces the domain; removing
// it (null) keeps the domain's, and a state without one (the host's, or kept) is
// compared with the domain by ModifyPlan (planArch), which knows the domain's.
func archReplace(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = tfkit.Known(req.StateValue) && req.StateValue.ValueString() != "" && !req.PlanValue.IsNull() && !req.PlanValue.Equal(req.StateValue)
}

// planArch checks an os.arch or os.emulator the configuration sets against the host
// (nothing is filled into os: a null arch is the host's, a null emulator libvirt's for
// the arch), says whether a new arch replaces a domain whose state has none, and returns
// what the host offers for the domain's arch (info itself for the host's own arch), for
// hostOffers and the domain type's default. A host that cannot be asked leaves it to apply.
func (r *Resource) planArch(ctx context.Context, info *libvirt.HostInfo, plan, state *Model, diags *diag.Diagnostics) (offers *libvirt.HostInfo, replace bool) {
	caps, err := r.Client.Capabilities(ctx)
	if err != nil || plan.OS.Arch.IsUnknown() {
		return info, false
	}
	name, arch := plan.Name.ValueString(), plan.OS.Arch.ValueString()
	current := "" // the existing domain's arch
	if state != nil {
		current = tfkit.StringOf(state.OS.Arch)
		if current == "" {
			current = r.domainArch(ctx, state, caps.HostArch)
		}
	}
	if arch == "" {
		arch = current // removing arch keeps the domain's
	}
	if arch == "" {
		arch = caps.HostArch
	}
	replace = state != nil && tfkit.Known(plan.OS.Arch) && state.OS.Arch.IsNull() && arch != current
	guest, ok := caps.Guest(arch)
	if !ok {
		if state == nil || arch != current {
			diags.AddAttributeError(path.Root("os").AtName("arch"), "Architecture not offered by the host",
				fmt.Sprintf("libvirt_domain %s: os.arch = %q, but host %s offers hvm guests of %s only (each needs its QEMU binary, "+
					"e.g. qemu-system-%s). Use one of those, or remove os.arch for the host's (%s).",
					name, arch, info.Hostname, strings.Join(caps.Arches(), ", "), arch, caps.HostArch))
		}
		return info, replace
	}
	o := *info
	if arch != info.Arch {
		o.Arch, o.DomainTypes, o.Machines = arch, guest.DomainTypes, guest.Machines
		o.DefaultDomainType = libvirt.DefaultDomainType(guest.DomainTypes)
		o.FirmwareTypes, o.FirmwarePaths = nil, nil
	}
	typ := tfkit.StringOf(plan.Type)
	if typ == "" && state == nil {
		typ = o.DefaultDomainType
	}
	machine := tfkit.StringOf(plan.OS.Machine)
	if machine == "" {
		machine = domainxml.DefaultMachine(arch)
	}
	if arch != info.Arch && typ != "" {
		if dc, err := r.Client.DomainCapabilities(ctx, "", arch, machine, typ); err == nil {
			o.FirmwareTypes, o.FirmwarePaths = dc.FirmwareTypes, dc.FirmwarePaths
		}
	}
	if replace || state != nil && tfkit.Known(state.OS.Arch) && !plan.OS.Arch.Equal(state.OS.Arch) && !plan.OS.Arch.IsNull() {
		return &o, replace // a replacement: Terraform plans it again as a create, which checks the emulator
	}
	if emu := tfkit.StringOf(plan.OS.Emulator); typ != "" && emu != "" && (state == nil || !plan.OS.Emulator.Equal(state.OS.Emulator)) {
		if _, err := r.Client.DomainCapabilities(ctx, emu, arch, "", typ); err != nil && !libvirt.IsTransport(err) {
			diags.AddAttributeError(path.Root("os").AtName("emulator"), "Emulator not offered by the host",
				fmt.Sprintf("libvirt_domain %s: os.emulator = %q is not an emulator host %s offers for %s %s domains (libvirt: %v). "+
					"The host's emulator for %s is %s: remove os.emulator to use it.", name, emu, info.Hostname, arch, typ, err, arch, guest.Emulator))
		}
	}
	return &o, replace
}

// domainArch is the arch of the existing domain of state, whose state does not say
// (os.arch was never written, or removed: the domain kept its own); hostArch when the
// domain cannot be read (a domain made without arch has the host's).
func (r *Resource) domainArch(ctx context.Context, state *Model, hostArch string) string {
	if !tfkit.Known(state.ID) {
		return hostArch
	}
	st, err := r.Client.GetDomainStatus(ctx, state.ID.ValueString())
	if err != nil {
		return hostArch
	}
	p, err := domainxml.Parse(st.XML)
	if err != nil || p.Spec.Arch == "" {
		return hostArch
	}
	return p.Spec.Arch
}

// importOSDefaults clears from s, the definition an import reads, the os values a domain
// made here without them would have: the host's arch, the emulator and machine type the
// host gives that arch (virt on ARM), so that the import writes os only where the domain
// differs. What the host cannot tell is kept (an import keeps what the domain has).
func (r *Resource) importOSDefaults(ctx context.Context, s *domainxml.Spec) {
	if r.Client == nil {
		return
	}
	caps, err := r.Client.Capabilities(ctx)
	if err != nil {
		return
	}
	arch := s.Arch
	if arch == "" {
		arch = caps.HostArch
	}
	if s.Arch == caps.HostArch {
		s.Arch = ""
	}
	if m := domainxml.DefaultMachine(arch); m != "" && domainxml.SameMachine(m, s.Machine) {
		s.Machine = ""
	}
	dc, err := r.Client.DomainCapabilities(ctx, "", arch, domainxml.DefaultMachine(arch), s.Type)
	if err != nil {
		return
	}
	if s.Emulator == dc.Emulator {
		s.Emulator = ""
	}
	if domainxml.DefaultMachine(arch) == "" && s.Machine == dc.Machine {
		s.Machine = ""
	}
}
