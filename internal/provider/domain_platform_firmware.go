package provider

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainFirmwareModel: secure_boot and tpm (domainxml's secure_boot and tpm families).
// Unset: none.
type domainFirmwareModel struct {
	SecureBoot *secureBootModel `tfsdk:"secure_boot"`
	TPM        *tpmModel        `tfsdk:"tpm"`
}

type secureBootModel struct {
	EnrolledKeys types.Bool `tfsdk:"enrolled_keys"`
}

type tpmModel struct {
	Model           types.String `tfsdk:"model"`
	Backend         types.String `tfsdk:"backend"`
	Version         types.String `tfsdk:"version"`
	DevicePath      types.String `tfsdk:"device_path"`
	PersistentState types.Bool   `tfsdk:"persistent_state"`
}

var domainFirmware = domainFamily{
	attributes: map[string]schema.Attribute{
		"secure_boot": schema.SingleNestedAttribute{
			MarkdownDescription: "UEFI Secure Boot, e.g. `{}`. Needs `firmware = \"uefi\"` and a q35 `machine`. libvirt's firmware " +
				"auto-selection picks a secure-boot build (`<firmware><feature name=\"secure-boot\"/>...`; on Debian " +
				"`OVMF_CODE_4M.ms.fd` with the `OVMF_VARS_4M.ms.fd` template) and the domain gets `smm` on (`features.smm` " +
				"shows it; setting it to `false` is an error). The loader and nvram paths libvirt chooses are not drift. " +
				"A change rewrites the definition and restarts a running domain; the domain's nvram varstore is kept as it " +
				"is (libvirt copies the template only when there is none), so keys enrolled in it stay until the domain is " +
				"destroyed. Removing the block asks for firmware without Secure Boot again; `smm` stays on.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"enrolled_keys": optionalBool("Firmware with Microsoft's and the distribution's keys enrolled in its varstore "+
					"template (`true`, default: Secure Boot is enforced from the first boot, what Windows 11 expects) or with "+
					"none (`false`: setup mode, enroll your own).", true),
			},
		},
		"tpm": schema.SingleNestedAttribute{
			MarkdownDescription: "A TPM 2.0 device, e.g. `{}` (an emulated `tpm-crb` through swtpm, which the host needs). " +
				"The emulator's state (keys, NV indexes, clock) lives in `/var/lib/libvirt/swtpm/<uuid>/`: it survives every " +
				"update (the definition is rewritten with the same UUID) and restart, and destroy removes it. A change " +
				"rewrites the definition and restarts a running domain (QEMU has no TPM hot-plug). Removing the block removes " +
				"the device but not an emulator's state: libvirt deletes that only when it undefines a definition with the " +
				"TPM, so it stays on the host after destroy (remove the directory by hand).",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"model": defaultEnum("`tpm-crb` (default; TPM 2.0's command response buffer interface) or `tpm-tis` (the older "+
					"TIS interface, for guests without a CRB driver).", domainxml.DefaultTPM, domainxml.TPMModels...),
				"backend": defaultEnum("`emulator` (default: swtpm, one per domain) or `passthrough` (the host's own TPM, "+
					"`device_path`; one domain at a time, and the host loses it meanwhile).", domainxml.TPMEmulator, domainxml.TPMBackends...),
				"version": defaultEnum("The TPM version: `2.0` (default, and the only one offered).", domainxml.DefaultTPMVer,
					domainxml.TPMVersions...),
				"device_path": schema.StringAttribute{MarkdownDescription: "The host's TPM device for `backend = \"passthrough\"` " +
					"(required there, not allowed otherwise), e.g. `/dev/tpm0`. libvirt defines the domain without it; starting " +
					"needs it." + restartNote, Optional: true, Validators: []validator.String{devPath}},
				"persistent_state": optionalBool("Emulator only: written as libvirt's `persistent_state='yes'` (default `true`), "+
					"which keeps the state when the domain is undefined by other means than this provider (e.g. `virsh "+
					"undefine` without `--tpm`) and, for a transient domain, when it stops. This resource's domains are "+
					"persistent, so with either value the state survives updates and restarts, and destroy removes it."+
					restartNote, true),
			},
		},
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		s.SecureBoot, s.TPM = &domainxml.SecureBoot{}, &domainxml.TPM{} // unset: none
		if sb := m.SecureBoot; sb != nil {
			s.SecureBoot = &domainxml.SecureBoot{Enabled: true, EnrolledKeys: !known(sb.EnrolledKeys) || sb.EnrolledKeys.ValueBool()}
		}
		if t := m.TPM; t != nil {
			s.TPM = &domainxml.TPM{Model: knownString(t.Model), Backend: knownString(t.Backend), Version: knownString(t.Version),
				DevicePath: knownString(t.DevicePath), PersistentState: !known(t.PersistentState) || t.PersistentState.ValueBool()}
		}
	},
	fromSpec: func(s domainxml.Spec, prior, m *domainModel) {
		m.SecureBoot, m.TPM = nil, nil
		if sb := s.SecureBoot; sb != nil && sb.Enabled {
			m.SecureBoot = &secureBootModel{EnrolledKeys: types.BoolValue(sb.EnrolledKeys)}
		}
		if t := s.TPM; t != nil && t.Backend != "" {
			m.TPM = &tpmModel{Model: types.StringValue(t.Model), Backend: types.StringValue(t.Backend),
				Version: types.StringValue(t.Version), DevicePath: optString(t.DevicePath), PersistentState: types.BoolValue(t.PersistentState)}
			if t.Backend == domainxml.TPMPassthrough { // no such setting there: as written (default true)
				m.TPM.PersistentState = types.BoolValue(true)
				if prior.TPM != nil && known(prior.TPM.PersistentState) {
					m.TPM.PersistentState = prior.TPM.PersistentState
				}
			}
		}
	},
	validate: validateFirmware,
}

var devPath = stringvalidator.RegexMatches(regexp.MustCompile(`^/dev/\S+$`), "must be a device path under /dev, e.g. /dev/tpm0")

// validateFirmware: what secure_boot needs of firmware, machine and features.smm
// (domainxml.ValidateSecureBoot, on what the configuration says), and device_path with
// the passthrough backend only.
func validateFirmware(m *domainModel, d *diag.Diagnostics) {
	if m.SecureBoot != nil && !m.Firmware.IsUnknown() && !m.Machine.IsUnknown() && !m.Features.IsUnknown() {
		s := domainxml.Spec{Name: m.Name.ValueString(), Firmware: m.Firmware.ValueString(), Machine: m.Machine.ValueString(),
			SecureBoot: &domainxml.SecureBoot{Enabled: true}}
		if smm := configSMM(m.Features); smm != nil {
			s.Features = &domainxml.Features{SMM: smm}
		}
		if err := domainxml.ValidateSecureBoot(&s); err != nil {
			d.AddAttributeError(path.Root("secure_boot"), "Invalid secure_boot", fmt.Sprintf("libvirt_domain %s: %v.", s.Name, err))
		}
	}
	t := m.TPM
	if t == nil || t.Backend.IsUnknown() || t.DevicePath.IsUnknown() {
		return
	}
	name, backend := m.Name.ValueString(), t.Backend.ValueString()
	if t.Backend.IsNull() {
		backend = domainxml.TPMEmulator // the default
	}
	switch passthrough := backend == domainxml.TPMPassthrough; {
	case passthrough && t.DevicePath.IsNull():
		d.AddAttributeError(path.Root("tpm").AtName("device_path"), "tpm passthrough needs device_path",
			fmt.Sprintf("libvirt_domain %s: tpm.backend = \"passthrough\" hands the host's TPM to the domain: set device_path "+
				"to it, e.g. \"/dev/tpm0\", or use backend = \"emulator\".", name))
	case !passthrough && !t.DevicePath.IsNull():
		d.AddAttributeError(path.Root("tpm").AtName("device_path"), "device_path is for the passthrough backend",
			fmt.Sprintf("libvirt_domain %s: tpm.device_path names a host TPM, which only backend = \"passthrough\" uses; the "+
				"backend is %q. Remove device_path or set backend = \"passthrough\".", name, backend))
	}
}

// configSMM is features.smm as the configuration sets it (nil: not set or unknown).
func configSMM(o types.Object) *bool {
	if !known(o) {
		return nil
	}
	var f featuresModel
	if o.As(context.Background(), &f, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true}).HasError() {
		return nil
	}
	return knownBool(f.SMM)
}

// planSecureBoot: with secure_boot, features.smm is on after apply (the secure_boot family
// turns it on), even where the plan carried state's false forward; ValidateConfig has
// refused a configuration that sets it false.
func planSecureBoot(plan *domainModel) {
	if plan.SecureBoot == nil || !known(plan.Features) {
		return
	}
	attrs := plan.Features.Attributes()
	if smm, ok := attrs["smm"].(types.Bool); ok && known(smm) && !smm.ValueBool() {
		attrs["smm"] = types.BoolValue(true)
		plan.Features = types.ObjectValueMust(featuresAttrTypes, attrs)
	}
}
