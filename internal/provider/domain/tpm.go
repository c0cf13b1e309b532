package domain

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
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainTPMModel: devices.tpm (domainxml's tpm family). Null: none. Nothing in it is
// defaulted into state: a null model, backend, version or persistent_state means the
// default, and reads back null while libvirt has that default.
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

var domainTPM = family{
	group: groupDevices,
	attributes: map[string]schema.Attribute{
		"tpm": schema.SingleNestedAttribute{
			MarkdownDescription: "A TPM 2.0 device, e.g. `{}` (an emulated `tpm-crb` through swtpm, which the host needs). " +
				"The emulator's state (keys, NV indexes, clock) lives in `/var/lib/libvirt/swtpm/<uuid>/`: it survives every " +
				"update (the definition is rewritten with the same UUID) and restart, and destroy removes it. A change " +
				"rewrites the definition and restarts a running domain (QEMU has no TPM hot-plug). Null (the default): none; removing it removes " +
				"the device but not an emulator's state: libvirt deletes that only when it undefines a definition with the " +
				"TPM, so it stays on the host after destroy (remove the directory by hand). A TPM with more than these " +
				"attributes say (an encrypted state, chosen PCR banks, a state file, a profile, an external backend) goes " +
				"into `device_xml` (import puts it there); null keeps it.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"model": optionalEnum("`tpm-crb` (null: this; TPM 2.0's command response buffer interface) or `tpm-tis` (the "+
					"older TIS interface, for guests without a CRB driver).", domainxml.TPMModels...),
				"backend": optionalEnum("`emulator` (null: this; swtpm, one per domain) or `passthrough` (the host's own TPM, "+
					"`device_path`; one domain at a time, and the host loses it meanwhile).", domainxml.TPMBackends...),
				"version": optionalEnum("The emulated TPM's version: `2.0` (null: this) or `1.2` (with `model = \"tpm-tis\"`).",
					domainxml.TPMVersions...),
				"device_path": schema.StringAttribute{MarkdownDescription: "The host's TPM device for `backend = \"passthrough\"` " +
					"(required there, not allowed otherwise), e.g. `/dev/tpm0`. libvirt defines the domain without it; starting " +
					"needs it." + restartNote, Optional: true, Validators: []validator.String{devPath}},
				"persistent_state": optionalBoolNull("Emulator only: written as libvirt's `persistent_state='yes'` (null: `true`), " +
					"which keeps the state when the domain is undefined by other means than this provider (e.g. `virsh " +
					"undefine` without `--tpm`) and, for a transient domain, when it stops. This resource's domains are " +
					"persistent, so with either value the state survives updates and restarts, and destroy removes it." +
					restartNote),
			},
		},
	},
	toSpec:       tpmToSpec,
	fromSpec:     tpmFromSpec,
	fillUnknowns: func(m *Model) { nullUnknowns(&m.Devices.domainTPMModel) },
	validate:     validateTPM,
}

func optionalBoolNull(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Optional: true}
}

// tpmToSpec: null values are the defaults (unknown ones read as empty, so that Classify
// sees them as changes); no tpm is none.
func tpmToSpec(m *Model, s *domainxml.Spec) {
	s.TPM = &domainxml.TPM{} // null: none
	t := m.Devices.TPM
	if t == nil {
		return
	}
	or := func(v types.String, def string) string {
		if v.IsNull() {
			return def
		}
		return tfkit.StringOf(v)
	}
	s.TPM = &domainxml.TPM{Model: or(t.Model, domainxml.DefaultTPM), Backend: or(t.Backend, domainxml.TPMEmulator),
		Version: or(t.Version, domainxml.DefaultTPMVer), DevicePath: tfkit.StringOf(t.DevicePath),
		PersistentState: t.PersistentState.IsNull() || t.PersistentState.ValueBool()}
	if s.TPM.Backend == domainxml.TPMPassthrough {
		s.TPM.Version = "" // an emulator's setting (normTPM reads it as 2.0)
	}
}

// tpmFromSpec: the TPM libvirt has, each value null where prior (or, on import, nothing)
// left it null and libvirt has the default.
func tpmFromSpec(s domainxml.Spec, prior, m *Model) {
	m.Devices.TPM = nil
	t := s.TPM
	if t == nil || t.Backend == "" || !isImport(prior) && prior.Devices.TPM == nil {
		return
	}
	p := prior.Devices.TPM
	if p == nil {
		p = &tpmModel{} // every value null
	}
	tm := &tpmModel{Model: orDefault(p.Model, t.Model, domainxml.DefaultTPM), Backend: orDefault(p.Backend, t.Backend, domainxml.TPMEmulator),
		Version: orDefault(p.Version, t.Version, domainxml.DefaultTPMVer), DevicePath: tfkit.StringOrNull(t.DevicePath),
		PersistentState: types.BoolValue(t.PersistentState)}
	switch {
	case t.Backend == domainxml.TPMPassthrough: // no such setting there: as written
		tm.PersistentState = p.PersistentState
		if p.Version.IsNull() {
			tm.Version = types.StringNull()
		}
	case p.PersistentState.IsNull() && t.PersistentState:
		tm.PersistentState = types.BoolNull()
	}
	m.Devices.TPM = tm
}

var devPath = stringvalidator.RegexMatches(regexp.MustCompile(`^/dev/\S+$`), "must be a device path under /dev, e.g. /dev/tpm0")

// validateTPM: device_path with the passthrough backend only.
func validateTPM(m *Model, d *diag.Diagnostics) {
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
			fmt.Sprintf("libvirt_domain %s: devices.tpm.backend = \"passthrough\" hands the host's TPM to the domain: set "+
				"devices.tpm.device_path to it, e.g. \"/dev/tpm0\", or use backend = \"emulator\".", name))
	case !passthrough && !t.DevicePath.IsNull():
		d.AddAttributeError(path.Root("devices").AtName("tpm").AtName("device_path"), "device_path is for the passthrough backend",
			fmt.Sprintf("libvirt_domain %s: devices.tpm.device_path names a host TPM, which only backend = \"passthrough\" uses; the "+
				"backend is %q. Remove device_path or set backend = \"passthrough\".", name, backend))
	}
	// TPM 1.2 has no CRB interface (the null model's): libvirt refuses the pair on define.
	if tfkit.Known(t.Version) && t.Version.ValueString() == "1.2" && !t.Model.IsUnknown() && t.Model.ValueString() != "tpm-tis" {
		d.AddAttributeError(path.Root("devices").AtName("tpm").AtName("version"), "TPM 1.2 needs the TIS interface",
			fmt.Sprintf("libvirt_domain %s: devices.tpm.version = \"1.2\" needs model = \"tpm-tis\" (the CRB interface, %s, "+
				"is TPM 2.0's).", name, orNull(t.Model, domainxml.DefaultTPM)))
	}
}

// orNull is v's text, or def (what null means) when v is null.
func orNull(v types.String, def string) string {
	if v.IsNull() {
		return def
	}
	return v.ValueString()
}
