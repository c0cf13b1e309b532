package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainFeaturesModel: the features object (domainxml's features family).
type domainFeaturesModel struct {
	Features types.Object `tfsdk:"features"`
}

type featuresModel struct {
	ACPI      types.Bool `tfsdk:"acpi"`
	APIC      types.Bool `tfsdk:"apic"`
	PAE       types.Bool `tfsdk:"pae"`
	SMM       types.Bool `tfsdk:"smm"`
	HAP       types.Bool `tfsdk:"hap"`
	KVMHidden types.Bool `tfsdk:"kvm_hidden"`
	HyperV    types.Set  `tfsdk:"hyperv"`
}

var featuresAttrTypes = map[string]attr.Type{
	"acpi": types.BoolType, "apic": types.BoolType, "pae": types.BoolType, "smm": types.BoolType,
	"hap": types.BoolType, "kvm_hidden": types.BoolType, "hyperv": types.SetType{ElemType: types.StringType},
}

func featureBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc + " Default: what the domain has.", Optional: true, Computed: true,
		PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}}
}

var domainFeatures = domainFamily{
	attributes: map[string]schema.Attribute{
		"features": schema.SingleNestedAttribute{
			MarkdownDescription: "Hypervisor features (`<features>`). An x86 domain made here has `acpi` and `apic` (the power button " +
				"graceful shutdowns use; an ARM one neither, but `acpi` with UEFI: see `arch`); an attribute left unset keeps what the domain has, and features this schema does not " +
				"name are kept. A change restarts a running domain.",
			Optional: true, Computed: true,
			PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
			Attributes: map[string]schema.Attribute{
				"acpi":       featureBool("ACPI (needed for the power button, hence for graceful shutdowns)."),
				"apic":       featureBool("The APIC."),
				"pae":        featureBool("Physical address extension (32-bit guests with more than 4 GiB)."),
				"smm":        featureBool("System management mode (UEFI Secure Boot needs it; q35 machines only)."),
				"hap":        featureBool("Hardware-assisted paging (`<hap state=\"on\"/>`)."),
				"kvm_hidden": featureBool("Hide the KVM signature from the guest (`<kvm><hidden state=\"on\"/></kvm>`)."),
				"hyperv": schema.SetAttribute{
					MarkdownDescription: "Hyper-V enlightenments to turn on for Windows guests, by libvirt's name: `" +
						joinBackticked(domainxml.HyperVNames()) + "`. `spinlocks` is written with `retries = 8191`. Default: what " +
						"the domain has; `[]` turns them all off.",
					ElementType: types.StringType, Optional: true, Computed: true,
					Validators:    []validator.Set{setvalidator.ValueStringsAre(stringvalidator.OneOf(domainxml.HyperVNames()...))},
					PlanModifiers: []planmodifier.Set{setplanmodifier.UseStateForUnknown()},
				},
			},
		},
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		s.Features = nil
		if !known(m.Features) {
			return
		}
		var f featuresModel
		if m.Features.As(context.Background(), &f, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true}).HasError() {
			return
		}
		s.Features = &domainxml.Features{ACPI: knownBool(f.ACPI), APIC: knownBool(f.APIC), PAE: knownBool(f.PAE),
			SMM: knownBool(f.SMM), HAP: knownBool(f.HAP), KVMHidden: knownBool(f.KVMHidden)}
		if known(f.HyperV) {
			s.Features.HyperV = []string{}
			for _, v := range f.HyperV.Elements() {
				if sv, ok := v.(types.String); ok {
					s.Features.HyperV = append(s.Features.HyperV, sv.ValueString())
				}
			}
		}
	},
	fromSpec: func(s domainxml.Spec, _, m *domainModel) {
		f := s.Features
		if f == nil {
			f = domainxml.DefaultFeatures()
		}
		hv := make([]attr.Value, 0, len(f.HyperV))
		for _, n := range f.HyperV {
			hv = append(hv, types.StringValue(n))
		}
		b := func(p *bool) attr.Value { return types.BoolValue(p != nil && *p) }
		m.Features = types.ObjectValueMust(featuresAttrTypes, map[string]attr.Value{
			"acpi": b(f.ACPI), "apic": b(f.APIC), "pae": b(f.PAE), "smm": b(f.SMM), "hap": b(f.HAP), "kvm_hidden": b(f.KVMHidden),
			"hyperv": types.SetValueMust(types.StringType, hv),
		})
	},
	fillUnknowns: func(m *domainModel) {
		if m.Features.IsUnknown() {
			m.Features = types.ObjectNull(featuresAttrTypes)
		}
	},
}

// knownBool is a pointer to v's value when known, else nil (keep what the domain has).
func knownBool(v types.Bool) *bool {
	if !known(v) {
		return nil
	}
	b := v.ValueBool()
	return &b
}
