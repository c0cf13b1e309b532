package provider

import (
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainTPMModel: devices.tpm (domainxml's tpm family). Unset: none.
type domainTPMModel struct {
	TPM *tpmModel `tfsdk:"tpm"`
}

type tpmModel struct {
	Model           types.String `tfsdk:"model"`
	Backend         types.String `tfsdk:"backend"`
	Version         types.String `tfsdk:"version"`
	DevicePath      types.String `tfsdk:"device_path"`
	PersistentState types.Bool   `tfsdk:"persistent_state"`
}

var domainTPM = domainFamily{
	group: groupDevices,
	attributes: map[string]schema.Attribute{
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
		s.TPM = &domainxml.TPM{} // unset: none
		if t := m.Devices.TPM; t != nil {
			s.TPM = &domainxml.TPM{Model: knownString(t.Model), Backend: knownString(t.Backend), Version: knownString(t.Version),
				DevicePath: knownString(t.DevicePath), PersistentState: !known(t.PersistentState) || t.PersistentState.ValueBool()}
		}
	},
	fromSpec: func(s domainxml.Spec, prior, m *domainModel) {
		m.Devices.TPM = nil
		if t := s.TPM; t != nil && t.Backend != "" {
			m.Devices.TPM = &tpmModel{Model: types.StringValue(t.Model), Backend: types.StringValue(t.Backend),
				Version: types.StringValue(t.Version), DevicePath: optString(t.DevicePath), PersistentState: types.BoolValue(t.PersistentState)}
			if t.Backend == domainxml.TPMPassthrough { // no such setting there: as written (default true)
				m.Devices.TPM.PersistentState = types.BoolValue(true)
				if prior.Devices.TPM != nil && known(prior.Devices.TPM.PersistentState) {
					m.Devices.TPM.PersistentState = prior.Devices.TPM.PersistentState
				}
			}
		}
	},
	validate: validateTPM,
}

var devPath = stringvalidator.RegexMatches(regexp.MustCompile(`^/dev/\S+$`), "must be a device path under /dev, e.g. /dev/tpm0")

// validateTPM: device_path with the passthrough backend only.
func validateTPM(m *domainModel, d *diag.Diagnostics) {
	t := m.Devices.TPM
	if t == nil || t.Backend.IsUnknown() || t.DevicePath.IsUnknown() {
		return
	}
	name, backend := m.Name.ValueString(), t.Backend.ValueString()
	if t.Backend.IsNull() {
		backend = domainxml.TPMEmulator // the default
	}
	switch passthrough := backend == domainxml.TPMPassthrough; {
	case passthrough && t.DevicePath.IsNull():
		d.AddAttributeError(path.Root("devices").AtName("tpm").AtName("device_path"), "tpm passthrough needs device_path",
			fmt.Sprintf("libvirt_domain %s: tpm.backend = \"passthrough\" hands the host's TPM to the domain: set device_path "+
				"to it, e.g. \"/dev/tpm0\", or use backend = \"emulator\".", name))
	case !passthrough && !t.DevicePath.IsNull():
		d.AddAttributeError(path.Root("devices").AtName("tpm").AtName("device_path"), "device_path is for the passthrough backend",
			fmt.Sprintf("libvirt_domain %s: tpm.device_path names a host TPM, which only backend = \"passthrough\" uses; the "+
				"backend is %q. Remove device_path or set backend = \"passthrough\".", name, backend))
	}
}
