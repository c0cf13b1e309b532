package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// arch and emulator round-trip through the model; only a known arch that differs from a
// known one in state replaces (a state from before arch never does); acpi on aarch64
// without UEFI is refused at plan time naming the domain.
func TestDomainArch(t *testing.T) {
	m := fromSpec(domainxml.Spec{Name: "a", Arch: "aarch64", Emulator: "/usr/bin/qemu-system-aarch64"}, nil)
	if m.OS.Arch.ValueString() != "aarch64" || m.OS.Emulator.ValueString() != "/usr/bin/qemu-system-aarch64" {
		t.Errorf("fromSpec: %v %v", m.OS.Arch, m.OS.Emulator)
	}
	if s := specFromModel(m); s.Arch != "aarch64" || s.Emulator != "/usr/bin/qemu-system-aarch64" {
		t.Errorf("toSpec: %q %q", s.Arch, s.Emulator)
	}
	if s := specFromModel(&domainModel{groupsModel: groupsModel{OS: &domainOSGroup{domainArchModel: domainArchModel{Arch: types.StringUnknown(), Emulator: types.StringNull()}}}}); s.Arch != "" || s.Emulator != "" {
		t.Errorf("unknown reads as empty: %q %q", s.Arch, s.Emulator)
	}

	for _, c := range []struct {
		state, plan types.String
		want        bool
	}{
		{types.StringValue("x86_64"), types.StringValue("aarch64"), true},
		{types.StringValue("x86_64"), types.StringValue("x86_64"), false},
		{types.StringNull(), types.StringValue("x86_64"), false},
		{types.StringValue("x86_64"), types.StringUnknown(), true},
	} {
		var resp stringplanmodifier.RequiresReplaceIfFuncResponse
		archReplace(context.Background(), planmodifier.StringRequest{StateValue: c.state, PlanValue: c.plan}, &resp)
		if resp.RequiresReplace != c.want {
			t.Errorf("%v -> %v: replace %v", c.state, c.plan, resp.RequiresReplace)
		}
	}

	features := func(acpi bool) types.Object {
		return types.ObjectValueMust(featuresAttrTypes, map[string]attr.Value{"acpi": types.BoolValue(acpi), "apic": types.BoolNull(),
			"pae": types.BoolNull(), "smm": types.BoolNull(), "hap": types.BoolNull(), "kvm_hidden": types.BoolNull(),
			"hyperv": types.SetNull(types.StringType)})
	}
	for _, c := range []struct {
		arch, firmware string
		acpi, bad      bool
	}{
		{"aarch64", "bios", true, true},
		{"aarch64", "uefi", true, false},
		{"aarch64", "bios", false, false},
		{"x86_64", "bios", true, false},
	} {
		m := &domainModel{Name: types.StringValue("arm-1")}
		m.OS.Arch, m.Firmware, m.Features = types.StringValue(c.arch), types.StringValue(c.firmware), features(c.acpi)
		var diags diag.Diagnostics
		domainArch.validate(m, &diags)
		if diags.HasError() != c.bad || c.bad && !strings.Contains(diags.Errors()[0].Detail(), `libvirt_domain arm-1: features.acpi = true with arch = "aarch64" needs firmware = "uefi"`) {
			t.Errorf("%+v: %v", c, diags)
		}
	}
}
