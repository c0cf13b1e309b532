package provider

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
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// domainArchModel: arch and emulator (domainxml's arch family).
type domainArchModel struct {
	Arch     types.String `tfsdk:"arch"`
	Emulator types.String `tfsdk:"emulator"`
}

var domainArch = domainFamily{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"arch": schema.StringAttribute{
			MarkdownDescription: "Guest architecture, e.g. `x86_64` or `aarch64` (see `virsh capabilities`). Default: the host's. " +
				"Checked at plan time against the host's capabilities. Changing it replaces the domain (a guest of another " +
				"architecture is another machine: its machine type, CPU, firmware and devices all differ); removing it keeps " +
				"the domain's. A domain of an ARM arch made here gets what it needs to start under emulation: machine `virt`, " +
				"CPU `cortex-a57` (`host-passthrough` under `kvm`), no `apic`, and `acpi` only with `firmware = \"uefi\"` " +
				"(libvirt allows ACPI on aarch64 only with UEFI); `firmware = \"bios\"` there means no firmware at all " +
				"(direct `kernel` boot), and the guest has no input devices (nor a USB controller) unless `input` blocks add them (`bus = \"virtio\"`).",
			Optional: true, Computed: true,
			Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^[a-z0-9_]+$`),
				"must be an architecture name as libvirt spells it, e.g. x86_64, aarch64, armv7l")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(),
				stringplanmodifier.RequiresReplaceIf(archReplace, "a new arch replaces the domain", "A new arch replaces the domain.")},
		},
		"emulator": schema.StringAttribute{
			MarkdownDescription: "The QEMU binary on the host, e.g. `/usr/bin/qemu-system-aarch64`. Default: the one the host's " +
				"domain capabilities name for `arch` and `type`. Checked at plan time: libvirt must accept it for that arch " +
				"(it exists, is QEMU, emulates the arch). A change rewrites the definition and restarts a running domain; " +
				"removing it keeps the domain's.",
			Optional: true, Computed: true,
			Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^/`),
				"must be an absolute path to the QEMU binary on the host, e.g. /usr/bin/qemu-system-x86_64")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		s.Arch, s.Emulator = knownString(m.OS.Arch), knownString(m.OS.Emulator)
	},
	fromSpec: func(s domainxml.Spec, _, m *domainModel) {
		m.OS.Arch, m.OS.Emulator = optString(s.Arch), optString(s.Emulator)
	},
	validate: func(m *domainModel, diags *diag.Diagnostics) {
		if !known(m.OS.Arch) || m.OS.Arch.ValueString() != domainxml.ArchAArch64 || !known(m.Features) {
			return
		}
		acpi, ok := m.Features.Attributes()["acpi"].(types.Bool)
		if ok && known(acpi) && acpi.ValueBool() && (!known(m.Firmware) || m.Firmware.ValueString() != domainxml.FirmwareUEFI) {
			diags.AddAttributeError(path.Root("features").AtName("acpi"), "ACPI on aarch64 needs UEFI",
				fmt.Sprintf("libvirt_domain %s: features.acpi = true with arch = \"aarch64\" needs firmware = \"uefi\" (libvirt: "+
					"ACPI requires UEFI on this architecture). Set firmware = \"uefi\" or remove acpi.", m.Name.ValueString()))
		}
	},
	fillUnknowns: func(m *domainModel) { nullIfUnknown(&m.OS.Arch, &m.OS.Emulator) },
}

// archReplace: a known arch that differs from a known one in state replaces the domain
// (a state from before arch, null, is refreshed first and never replaces).
func archReplace(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = known(req.StateValue) && req.StateValue.ValueString() != "" && !req.PlanValue.Equal(req.StateValue)
}

// planArch fills in the arch (the host's) and emulator (the domain capabilities' for arch
// and type) of a new domain, checks an arch or emulator the configuration sets against the
// host, and returns what the host offers for the domain's arch (info itself for the host's
// own arch), for hostOffers and the domain type's default. A host that cannot be asked
// leaves it to apply.
func (r *domainResource) planArch(ctx context.Context, cfg tfsdk.Config, info *libvirt.HostInfo, plan, state *domainModel, diags *diag.Diagnostics) *libvirt.HostInfo {
	caps, err := r.client.Capabilities(ctx)
	if err != nil {
		return info
	}
	unset := func(attr string) bool {
		var v types.String
		return !cfg.GetAttribute(ctx, path.Root(attr), &v).HasError() && v.IsNull()
	}
	if state == nil && plan.OS.Arch.IsUnknown() && unset("arch") && caps.HostArch != "" {
		plan.OS.Arch = types.StringValue(caps.HostArch)
	}
	if !known(plan.OS.Arch) {
		return info
	}
	name, arch := plan.Name.ValueString(), plan.OS.Arch.ValueString()
	guest, ok := caps.Guest(arch)
	if !ok {
		if state == nil || !plan.OS.Arch.Equal(state.OS.Arch) {
			diags.AddAttributeError(path.Root("arch"), "Architecture not offered by the host",
				fmt.Sprintf("libvirt_domain %s: arch = %q, but host %s offers hvm guests of %s only (each needs its QEMU binary, "+
					"e.g. qemu-system-%s). Use one of those, or remove arch for the host's (%s).",
					name, arch, info.Hostname, strings.Join(caps.Arches(), ", "), arch, caps.HostArch))
		}
		return info
	}
	offers := *info
	if arch != info.Arch {
		offers.Arch, offers.DomainTypes, offers.Machines = arch, guest.DomainTypes, guest.Machines
		offers.DefaultDomainType = libvirt.DefaultDomainType(guest.DomainTypes)
		offers.FirmwareTypes, offers.FirmwarePaths = nil, nil
	}
	typ := knownString(plan.Type)
	if typ == "" && state == nil {
		typ = offers.DefaultDomainType
	}
	machine := knownString(plan.OS.Machine)
	if machine == "" {
		machine = domainxml.DefaultMachine(arch)
	}
	if arch != info.Arch && typ != "" {
		if dc, err := r.client.DomainCapabilities(ctx, "", arch, machine, typ); err == nil {
			offers.FirmwareTypes, offers.FirmwarePaths = dc.FirmwareTypes, dc.FirmwarePaths
		}
	}
	if state != nil && !plan.OS.Arch.Equal(state.OS.Arch) {
		// A replacement: Terraform plans it again as a create, which fills in and checks the emulator.
		if plan.OS.Emulator.Equal(state.OS.Emulator) {
			plan.OS.Emulator = types.StringUnknown()
		}
		return &offers
	}
	switch {
	case typ == "":
	case plan.OS.Emulator.IsUnknown() && state == nil && unset("emulator"):
		if dc, err := r.client.DomainCapabilities(ctx, "", arch, machine, typ); err == nil && dc.Emulator != "" {
			plan.OS.Emulator = types.StringValue(dc.Emulator)
		}
	case known(plan.OS.Emulator) && (state == nil || !plan.OS.Emulator.Equal(state.OS.Emulator)):
		emu := plan.OS.Emulator.ValueString()
		if _, err := r.client.DomainCapabilities(ctx, emu, arch, "", typ); err != nil && !libvirt.IsTransport(err) {
			diags.AddAttributeError(path.Root("emulator"), "Emulator not offered by the host",
				fmt.Sprintf("libvirt_domain %s: emulator = %q is not an emulator host %s offers for %s %s domains (libvirt: %v). "+
					"The host's emulator for %s is %s: remove emulator to use it.", name, emu, info.Hostname, arch, typ, err, arch, guest.Emulator))
		}
	}
	return &offers
}
