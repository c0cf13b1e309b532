package domain

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// extra_xml: raw top-level element fragments for what the schema does not model
// (domainxml/extra_xml.go).

type domainExtraXMLModel struct {
	ExtraXML types.List `tfsdk:"extra_xml"`
}

var domainExtraXML = family{
	attributes: map[string]schema.Attribute{
		"extra_xml": schema.ListAttribute{
			MarkdownDescription: "Raw XML of top-level elements of `<domain>` this schema does not model, e.g. " +
				"`<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/><timer name='hpet' present='no'/></clock>`, " +
				"`<memtune>`, `<blkiotune>`, `<seclabel>`, `<perf>`, `<keywrap>`, `<resource>`, `<idmap>`, `<pm>`, `<genid>`: each " +
				"item is exactly one element, written as libvirt prints it (`virsh dumpxml` shows how; the apply fails naming a " +
				"fragment libvirt stores differently). What libvirt fills in is no change, so an accepted fragment plans clean; " +
				"changed outside Terraform, it shows as a change. A fragment replaces the domain's element of its name; removing it " +
				"removes the element; elements neither the configuration nor a fragment names stay as the domain has them. " +
				"`<cputune>` may carry everything but the pins (`<shares>`, `<period>`, `<quota>`, `<vcpusched>`, `<iothreadpin>`, " +
				"...), merged with `cpu.pinning` and `cpu.emulator_pinning`, which own `<vcpupin>` and `<emulatorpin>`. " +
				"QEMU's own elements other than `<qemu:commandline>` (`qemu.args`, `qemu.env`) are taken too: " +
				"`<qemu:capabilities xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'><qemu:del capability='drive'/>" +
				"</qemu:capabilities>`, `<qemu:override>`, `<qemu:deprecation>`, each declaring its namespace. " +
				"`<metadata>` carries other applications' metadata (virt-install's libosinfo entry, another tool's record): its " +
				"children, each in its own XML namespace declared on the child or on `<metadata>`, e.g. " +
				"`<metadata xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'><libosinfo:libosinfo><libosinfo:os " +
				"id='http://debian.org/debian/12'/></libosinfo:libosinfo></metadata>`; each replaces the domain's element of its " +
				"namespace and name, beside the provider's own record (`tags`), whose namespace is refused here. Elements the " +
				"schema types are taken only in a form it cannot say, whole: a `<cpu>` with a `vendor`, `cache`, `maxphysaddr`, a " +
				"`<model>` beside a host mode, a " +
				"`match` other than `exact`, `migratable` other than libvirt's default, or NUMA cells with `distances`, `cache`, " +
				"`discard` or `interconnects` (the `cpu` group stays null); a `<memoryBacking>` with huge pages per NUMA node or an " +
				"`<allocation>` (`memory_backing` stays null); `<vcpus>` (per-vCPU hot-plug states) and `<iothreadids>` (numbered " +
				"I/O threads, beside `cpu.iothreads`). `<os>` is shared like `<cputune>`: a fragment holds only what the `os` " +
				"group cannot say, merged with it: `<bios>` (`useserial`, `rebootTimeout`), `<acpi>` tables, `<shim>`, " +
				"`<varstore>`, `<bootmenu enable='no'/>`, and with firmware auto-selection a `<loader>` without a path " +
				"(`secure`, `stateless`) and " +
				"`<firmware>` features other than Secure Boot's (e.g. `<os><firmware><feature enabled='no' name='secure-boot'/>" +
				"</firmware></os>`). `<features>` is taken only whole and in a form `features` cannot say (e.g. with `<pmu>`, " +
				"`<msrs>`, `<tcg>` or a Hyper-V `vendor_id`); `features` attributes set beside it override its members. " +
				"Other elements the schema has are refused with the attribute to use (" +
				"`<cpu>`, `<features>`, `<memory>`, `<vcpu>`, " +
				"`<sysinfo>`, `<devices>` (use `device_xml` for devices), `<on_poweroff>`, ...), and so are elements libvirt's " +
				"domain format does not know, two of an element the domain has once, and a comment, processing instruction or " +
				"DOCTYPE. An import writes one item per such element the domain has, leaving out libvirt's own defaults " +
				"(`<clock offset='utc'/>`). Any change restarts a running domain.",
			Optional:    true,
			ElementType: types.StringType,
			Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.ExtraXML = knownStrings(m.ExtraXML)
	},
	// s.ExtraXML is every unmodelled element the definition has. State keeps the
	// fragments the prior (state, plan) wrote that the definition still has, so a
	// fragment changed outside Terraform drops out and shows as a change; an import
	// writes what the domain has beyond libvirt's defaults (the recorded fragments as
	// they were written, for a domain made here).
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.ExtraXML = types.ListNull(types.StringType)
		var list []string
		if isImport(prior) {
			list = domainxml.ImportExtraXML(s.ExtraXML, s.ExtraXMLWas)
		} else {
			for _, f := range knownStrings(prior.ExtraXML) {
				if domainxml.ExtraXMLPresent(s.ExtraXML, f) {
					list = append(list, f)
				}
			}
		}
		if len(list) > 0 {
			m.ExtraXML = tfkit.StringList(list)
		}
	},
	validate: func(m *Model, diags *diag.Diagnostics) {
		list := knownStrings(m.ExtraXML)
		for i, err := range domainxml.CheckExtraXML(list) {
			if err != nil {
				diags.AddAttributeError(path.Root("extra_xml").AtListIndex(i), "Invalid extra_xml fragment",
					fmt.Sprintf("libvirt_domain %s, extra_xml[%d] (%s): %v.", m.Name.ValueString(), i, shorten(list[i], 100), err))
			}
		}
	},
}
