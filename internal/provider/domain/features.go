package domain

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainFeaturesModel: the features object (domainxml's features family).
type domainFeaturesModel struct {
	Features types.Object `tfsdk:"features"`
}

type featuresModel struct {
	ACPI      types.Bool   `tfsdk:"acpi"`
	APIC      types.Bool   `tfsdk:"apic"`
	PAE       types.Bool   `tfsdk:"pae"`
	SMM       types.Bool   `tfsdk:"smm"`
	HAP       types.Bool   `tfsdk:"hap"`
	KVMHidden types.Bool   `tfsdk:"kvm_hidden"`
	HyperV    types.Set    `tfsdk:"hyperv"`
	VMPort    types.String `tfsdk:"vmport"`
	IOAPIC    types.String `tfsdk:"ioapic"`
	GIC       types.String `tfsdk:"gic_version"`
}

var featuresAttrTypes = map[string]attr.Type{
	"acpi": types.BoolType, "apic": types.BoolType, "pae": types.BoolType, "smm": types.BoolType,
	"hap": types.BoolType, "kvm_hidden": types.BoolType, "hyperv": types.SetType{ElemType: types.StringType},
	"vmport": types.StringType, "ioapic": types.StringType, "gic_version": types.StringType,
}

// featureStrings are the members written as a value, by attribute name.
var featureStrings = []struct {
	name string
	at   func(f *domainxml.Features) *string
}{
	{"vmport", func(f *domainxml.Features) *string { return &f.VMPort }},
	{"ioapic", func(f *domainxml.Features) *string { return &f.IOAPIC }},
	{"gic_version", func(f *domainxml.Features) *string { return &f.GIC }},
}

func featureBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc + " Unset: what the domain has.", Optional: true}
}

var domainFeatures = family{
	attributes: map[string]schema.Attribute{
		"features": schema.SingleNestedAttribute{
			MarkdownDescription: "Hypervisor features (`<features>`). Null (the default): an x86 domain made here has `acpi` and " +
				"`apic` (the power button graceful shutdowns use; an ARM one neither, but `acpi` with UEFI: see `os.arch`), one " +
				"with `os.secure_boot` also `smm`, and what the domain has is kept. An attribute left unset keeps what the domain " +
				"has, and features this schema does not name are kept. What these attributes cannot say (e.g. `<pmu>`, " +
				"`<msrs>`, `<tcg>`, `<smm><tseg>`, an apic's `eoi`, the kvm hints, Hyper-V's " +
				"`vendor_id`, `mode='passthrough'`, `stimer` `direct` or an enlightenment turned off explicitly) is written as the " +
				"whole `<features>` element in `extra_xml` (what an import of such a domain writes, with `features` null); " +
				"attributes set here beside it override its members. A change restarts a running domain.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"acpi":       featureBool("ACPI (needed for the power button, hence for graceful shutdowns)."),
				"apic":       featureBool("The APIC."),
				"pae":        featureBool("Physical address extension (32-bit guests with more than 4 GiB)."),
				"smm":        featureBool("System management mode (UEFI Secure Boot needs it and turns it on; q35 machines only)."),
				"hap":        featureBool("Hardware-assisted paging (`<hap state=\"on\"/>`)."),
				"kvm_hidden": featureBool("Hide the KVM signature from the guest (`<kvm><hidden state=\"on\"/></kvm>`)."),
				"hyperv": schema.SetAttribute{
					MarkdownDescription: "Hyper-V enlightenments to turn on for Windows guests, by libvirt's name: `" +
						joinBackticked(domainxml.HyperVNames()) + "`. `spinlocks` is written with `retries = 8191`. Unset: what " +
						"the domain has; `[]` turns them all off.",
					ElementType: types.StringType, Optional: true,
					Validators: []validator.Set{setvalidator.ValueStringsAre(stringvalidator.OneOf(domainxml.HyperVNames()...))},
				},
				"vmport": tfkit.OptionalString("VMware's I/O port emulation (`<vmport state=...>`, x86): `on` or `off` (virt-install "+
					"writes `off`). Unset: what the domain has.", stringvalidator.OneOf("on", "off")),
				"ioapic": tfkit.OptionalString("Who emulates the I/O APIC (`<ioapic driver=...>`, x86): `kvm` or `qemu` (an intel "+
					"IOMMU with interrupt remapping wants `qemu`). Unset: what the domain has.", stringvalidator.OneOf("kvm", "qemu")),
				"gic_version": tfkit.OptionalString("The ARM interrupt controller's version (`<gic version=...>`): `2`, `3` or "+
					"`host`. Unset: what the domain has (libvirt chooses one for the host when the domain has none).",
					stringvalidator.OneOf("2", "3", "host")),
			},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.Features = nil
		if !tfkit.Known(m.Features) {
			return
		}
		var f featuresModel
		if m.Features.As(context.Background(), &f, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true}).HasError() {
			return
		}
		s.Features = &domainxml.Features{ACPI: knownBool(f.ACPI), APIC: knownBool(f.APIC), PAE: knownBool(f.PAE),
			SMM: knownBool(f.SMM), HAP: knownBool(f.HAP), KVMHidden: knownBool(f.KVMHidden)}
		for i, v := range []types.String{f.VMPort, f.IOAPIC, f.GIC} {
			if tfkit.Known(v) {
				*featureStrings[i].at(s.Features) = v.ValueString()
			}
		}
		if tfkit.Known(f.HyperV) {
			s.Features.HyperV = []string{}
			for _, v := range f.HyperV.Elements() {
				if sv, ok := v.(types.String); ok {
					s.Features.HyperV = append(s.Features.HyperV, sv.ValueString())
				}
			}
		}
	},
	fromSpec: featuresFromSpec,
	fillUnknowns: func(m *Model) {
		if m.Features.IsUnknown() {
			m.Features = types.ObjectNull(featuresAttrTypes)
		}
		if !tfkit.Known(m.Features) {
			return
		}
		attrs := m.Features.Attributes()
		for k, v := range attrs {
			if v.IsUnknown() {
				switch featuresAttrTypes[k] {
				case types.SetType{ElemType: types.StringType}:
					attrs[k] = types.SetNull(types.StringType)
				case types.StringType:
					attrs[k] = types.StringNull()
				default:
					attrs[k] = types.BoolNull()
				}
			}
		}
		m.Features = types.ObjectValueMust(featuresAttrTypes, attrs)
	},
}

// featuresFromSpec: features holds what the configuration wrote, member by member, as the
// domain has it (a member it left out stays null whatever the domain has); null when the
// configuration leaves it out. An import (or a plan whose features were unknown) writes
// the members where the domain differs from what a new definition gets (FreshFeatures:
// acpi and apic on x86, smm with Secure Boot), and no features when it does not differ
// or when the domain's <features> says more than the members can (vmport, ioapic, gic,
// a Hyper-V vendor_id, ...): extra_xml then holds the whole element.
func featuresFromSpec(s domainxml.Spec, prior, m *Model) {
	m.Features = types.ObjectNull(featuresAttrTypes)
	have := s.Features
	if have == nil {
		have = domainxml.DefaultFeatures() // what parse leaves out
	}
	on := func(p *bool) bool { return p != nil && *p }
	hv := make([]attr.Value, 0, len(have.HyperV))
	for _, n := range have.HyperV {
		hv = append(hv, types.StringValue(n))
	}
	bools := []struct {
		name string
		have bool
	}{{"acpi", on(have.ACPI)}, {"apic", on(have.APIC)}, {"pae", on(have.PAE)}, {"smm", on(have.SMM)}, {"hap", on(have.HAP)}, {"kvm_hidden", on(have.KVMHidden)}}
	vals := map[string]attr.Value{"hyperv": types.SetNull(types.StringType)}
	for _, fs := range featureStrings {
		vals[fs.name] = types.StringNull()
	}
	if isImport(prior) || prior.Features.IsUnknown() {
		if domainxml.FeaturesFragment(s.ExtraXML) {
			return // beyond what the members say: extra_xml holds the whole <features>
		}
		fresh := domainxml.FreshFeatures(s)
		freshOf := map[string]bool{"acpi": on(fresh.ACPI), "apic": on(fresh.APIC), "pae": on(fresh.PAE), "smm": on(fresh.SMM),
			"hap": on(fresh.HAP), "kvm_hidden": on(fresh.KVMHidden)}
		differs := len(hv) > 0
		for _, b := range bools {
			vals[b.name] = types.BoolNull()
			if b.have != freshOf[b.name] {
				vals[b.name], differs = types.BoolValue(b.have), true
			}
		}
		if len(hv) > 0 {
			vals["hyperv"] = types.SetValueMust(types.StringType, hv)
		}
		for _, fs := range featureStrings { // a fresh definition has none but an ARM one's gic
			if v := *fs.at(have); v != "" && !(fs.name == "gic_version" && v == "2" && (s.Arch == "aarch64" || s.Arch == "armv7l")) {
				vals[fs.name], differs = types.StringValue(v), true
			}
		}
		if differs {
			m.Features = types.ObjectValueMust(featuresAttrTypes, vals)
		}
		return
	}
	if prior.Features.IsNull() {
		return
	}
	written := prior.Features.Attributes()
	for _, b := range bools {
		vals[b.name] = types.BoolNull()
		if v, ok := written[b.name]; ok && !v.IsNull() {
			vals[b.name] = types.BoolValue(b.have)
		}
	}
	if v, ok := written["hyperv"]; ok && !v.IsNull() {
		vals["hyperv"] = types.SetValueMust(types.StringType, hv)
	}
	for _, fs := range featureStrings {
		if v, ok := written[fs.name]; ok && !v.IsNull() {
			vals[fs.name] = tfkit.StringOrNull(*fs.at(have))
		}
	}
	m.Features = types.ObjectValueMust(featuresAttrTypes, vals)
}

// knownBool is a pointer to v's value when known, else nil (keep what the domain has).
func knownBool(v types.Bool) *bool {
	if !tfkit.Known(v) {
		return nil
	}
	b := v.ValueBool()
	return &b
}
