package domain

import (
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// qemu.args / qemu.env: QEMU command-line passthrough (domainxml/qemu_commandline.go).

type domainQEMUModel struct {
	QEMUArgs types.List `tfsdk:"args"`
	QEMUEnv  types.Map  `tfsdk:"env"`
}

const qemuPassthroughNote = " Passed to QEMU as they are (`<qemu:commandline>`): libvirt neither checks them nor knows what they " +
	"do, and marks the domain tainted (`custom-argv`). Use it for what libvirt cannot express. A change restarts a running domain."

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var domainQEMU = family{
	group: groupQEMU,
	attributes: map[string]schema.Attribute{
		"args": schema.ListAttribute{
			MarkdownDescription: "Extra QEMU command-line arguments, in order, e.g. `[\"-fw_cfg\", \"name=opt/com.example/x,string=1\"]`." +
				qemuPassthroughNote,
			Optional:    true,
			ElementType: types.StringType,
			Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
		},
		"env": schema.MapAttribute{
			MarkdownDescription: "Environment variables for the QEMU process (name → value)." + qemuPassthroughNote,
			Optional:            true,
			ElementType:         types.StringType,
			Validators: []validator.Map{mapvalidator.SizeAtLeast(1), mapvalidator.KeysAre(stringvalidator.RegexMatches(
				envNamePattern, "must be an environment variable name: letters, digits and _, not starting with a digit"))},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		// libvirt_domain manages the whole command line: none set removes it.
		s.QEMU = &domainxml.QEMUCommandline{Args: knownStrings(m.QEMU.QEMUArgs), Env: mapOfStrings(m.QEMU.QEMUEnv)}
	},
	// What the domain has, which is what the configuration wrote: left out means none, so
	// args or env given outside Terraform show as drift (the next update removes them).
	// Whether the group is in state at all is the engine's (settleGroups): written, or on
	// import when the domain has a command line (a domain made here has none).
	fromSpec: func(s domainxml.Spec, _, m *Model) {
		q := &m.QEMU.domainQEMUModel
		q.QEMUArgs, q.QEMUEnv = types.ListNull(types.StringType), types.MapNull(types.StringType)
		if s.QEMU == nil {
			return
		}
		if len(s.QEMU.Args) > 0 {
			q.QEMUArgs = tfkit.StringList(s.QEMU.Args)
		}
		if len(s.QEMU.Env) > 0 {
			q.QEMUEnv = stringMap(s.QEMU.Env)
		}
	},
	fillUnknowns: func(m *Model) {
		if m.QEMU.QEMUArgs.IsUnknown() {
			m.QEMU.QEMUArgs = types.ListNull(types.StringType)
		}
		if m.QEMU.QEMUEnv.IsUnknown() {
			m.QEMU.QEMUEnv = types.MapNull(types.StringType)
		}
	},
}
