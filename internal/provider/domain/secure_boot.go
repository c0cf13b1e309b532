package domain

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainSecureBootModel: os.secure_boot (domainxml's secure_boot family). Unset: none.
type domainSecureBootModel struct {
	SecureBoot *secureBootModel `tfsdk:"secure_boot"`
}

type secureBootModel struct {
	EnrolledKeys types.Bool `tfsdk:"enrolled_keys"`
}

var domainSecureBoot = family{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"secure_boot": schema.SingleNestedAttribute{
			MarkdownDescription: "UEFI Secure Boot, e.g. `{}`. Needs `firmware = \"uefi\"` and a q35 `os.machine`. libvirt's firmware " +
				"auto-selection picks a secure-boot build (`<firmware><feature name=\"secure-boot\"/>...`; on Debian " +
				"`OVMF_CODE_4M.ms.fd` with the `OVMF_VARS_4M.ms.fd` template) and the domain gets `smm` on (`features.smm` " +
				"shows it; setting it to `false` is an error). The loader and nvram paths libvirt chooses are not drift. " +
				"A change rewrites the definition and restarts a running domain; the domain's nvram varstore is kept as it " +
				"is (libvirt copies the template only when there is none), so keys enrolled in it stay until the domain is " +
				"destroyed. Removing the block asks for firmware without Secure Boot again; `smm` stays on.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"enrolled_keys": schema.BoolAttribute{MarkdownDescription: "Firmware with Microsoft's and the distribution's keys " +
					"enrolled in its varstore template (`true`, what null means: Secure Boot is enforced from the first boot, what " +
					"Windows 11 expects) or with none (`false`: setup mode, enroll your own).", Optional: true},
			},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.SecureBoot = &domainxml.SecureBoot{} // unset: none
		if sb := m.OS.SecureBoot; sb != nil {
			s.SecureBoot = &domainxml.SecureBoot{Enabled: true, EnrolledKeys: !tfkit.Known(sb.EnrolledKeys) || sb.EnrolledKeys.ValueBool()}
		}
	},
	// What the domain has (null asks for none: Secure Boot there is drift, and what an
	// import writes); enrolled_keys null while the keys are enrolled, what null asks for.
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.OS.SecureBoot = nil
		if sb := s.SecureBoot; sb != nil && sb.Enabled {
			m.OS.SecureBoot = &secureBootModel{EnrolledKeys: types.BoolValue(sb.EnrolledKeys)}
			if sb.EnrolledKeys && (prior.OS.SecureBoot == nil || prior.OS.SecureBoot.EnrolledKeys.IsNull()) {
				m.OS.SecureBoot.EnrolledKeys = types.BoolNull()
			}
		}
	},
	fillUnknowns: func(m *Model) {
		if sb := m.OS.SecureBoot; sb != nil && sb.EnrolledKeys.IsUnknown() {
			sb.EnrolledKeys = types.BoolNull()
		}
	},
	validate: validateSecureBoot,
}

// validateSecureBoot: what secure_boot needs of firmware, machine and features.smm
// (domainxml.ValidateSecureBoot, on what the configuration says).
func validateSecureBoot(m *Model, d *diag.Diagnostics) {
	if m.OS.SecureBoot != nil && !m.Firmware.IsUnknown() && !m.OS.Machine.IsUnknown() && !m.Features.IsUnknown() {
		s := domainxml.Spec{Name: m.Name.ValueString(), Firmware: m.Firmware.ValueString(), Machine: m.OS.Machine.ValueString(),
			SecureBoot: &domainxml.SecureBoot{Enabled: true}}
		if smm := configSMM(m.Features); smm != nil {
			s.Features = &domainxml.Features{SMM: smm}
		}
		if err := domainxml.ValidateSecureBoot(&s); err != nil {
			d.AddAttributeError(path.Root("os").AtName("secure_boot"), "Invalid secure_boot", fmt.Sprintf("libvirt_domain %s: %v.", s.Name, err))
		}
	}
}

// configSMM is features.smm as the configuration sets it (nil: not set or unknown).
func configSMM(o types.Object) *bool {
	if !tfkit.Known(o) {
		return nil
	}
	var f featuresModel
	if o.As(context.Background(), &f, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true}).HasError() {
		return nil
	}
	return knownBool(f.SMM)
}
