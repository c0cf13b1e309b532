package domain

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainCPUModel: the guest CPU's topology, feature policies and NUMA cells, and the
// vCPU and emulator pins (domainxml/cpu_topology.go and pinning.go own the XML and the
// rules; memory_backing.go has memory_backing).
type domainCPUModel struct {
	CPUTopology     *cpuTopologyModel `tfsdk:"topology"`
	CPUFeatures     types.Map         `tfsdk:"feature"`
	NUMACells       []numaCellModel   `tfsdk:"numa_cell"`
	CPUPinning      types.Map         `tfsdk:"pinning"`
	EmulatorPinning types.String      `tfsdk:"emulator_pinning"`
	VCPUPlacement   types.String      `tfsdk:"vcpu_placement"`
	VCPUCPUSet      types.String      `tfsdk:"vcpu_cpuset"`
}

type cpuTopologyModel struct {
	Sockets types.Int64 `tfsdk:"sockets"`
	Dies    types.Int64 `tfsdk:"dies"`
	Cores   types.Int64 `tfsdk:"cores"`
	Threads types.Int64 `tfsdk:"threads"`
}

// numaCellModel: a cell's memory in MiB or in KiB, like the domain's (sizing.go).
type numaCellModel struct {
	ID           types.Int64  `tfsdk:"id"`
	CPUs         types.String `tfsdk:"cpus"`
	MemoryMiB    types.Int64  `tfsdk:"memory_mib"`
	MemoryKiB    types.Int64  `tfsdk:"memory_kib"`
	MemoryAccess types.String `tfsdk:"memory_access"`
}

// cpusetRegexp is libvirt's cpuset syntax: numbers, ranges, ^exclusions, commas.
var cpusetRegexp = regexp.MustCompile(`^\s*\^?\d+(-\d+)?(\s*,\s*\^?\d+(-\d+)?)*\s*$`)

const (
	cpusetHelp   = "must be a cpuset such as 0-1,4 (numbers and ranges, ^N excludes one)"
	cpuRestarts  = " A change rewrites the definition and restarts a running domain."
	pinsLiveNote = " Adding or changing a pin applies live to a running domain (and to its definition); removing one restarts it."
)

func cpusetAttr(desc string, required bool) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Required: required, Optional: !required,
		Validators: []validator.String{stringvalidator.RegexMatches(cpusetRegexp, cpusetHelp)}}
}

func countAttr(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Required: true, Validators: []validator.Int64{int64validator.Between(1, 4096)}}
}

var domainCPU = family{
	group: groupCPU,
	attributes: map[string]schema.Attribute{
		"topology": schema.SingleNestedAttribute{
			MarkdownDescription: "The CPU topology the guest sees. sockets × dies × cores × threads must equal `max_vcpu` (or `vcpu` " +
				"when `max_vcpu` is unset); the plan fails otherwise. Null: none (libvirt's one socket per vCPU)." + cpuRestarts,
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"sockets": countAttr("CPU sockets."),
				"dies": schema.Int64Attribute{MarkdownDescription: "Dies per socket. Null: 1.", Optional: true,
					Validators: []validator.Int64{int64validator.Between(1, 4096)}},
				"cores":   countAttr("Cores per die."),
				"threads": countAttr("Threads per core."),
			},
		},
		"feature": schema.MapAttribute{
			MarkdownDescription: "CPU feature policies, feature name → `require`, `disable`, `optional`, `force` or `forbid`, e.g. " +
				"`{ vmx = \"disable\", \"sse4.2\" = \"require\" }`. Names as libvirt's CPU map spells them (`virsh cpu-models`, " +
				"`virsh domcapabilities`). They need a CPU model: `cpu.mode = \"host-model\"` or `\"host-passthrough\"`, or " +
				"`\"custom\"` with `cpu.model`. With `cpu.mode = \"host-passthrough\"` only `disable` and `require` make sense." + cpuRestarts,
			Optional:    true,
			ElementType: types.StringType,
			Validators: []validator.Map{mapvalidator.ValueStringsAre(stringvalidator.OneOf(domainxml.CPUFeaturePolicies...)),
				mapvalidator.KeysAre(stringvalidator.RegexMatches(regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`),
					"must be a CPU feature name as libvirt spells it, lower case, e.g. vmx or sse4.2"))},
		},
		"pinning": schema.MapAttribute{
			MarkdownDescription: "vCPU pinning: vCPU number → the host CPUs it may run on, e.g. `{ \"0\" = \"2\", \"1\" = \"3\" }`. " +
				"Host CPU sets compare by the CPUs they hold (`0,1` is `0-1`)." + pinsLiveNote,
			Optional:    true,
			ElementType: types.StringType,
			Validators: []validator.Map{mapvalidator.ValueStringsAre(stringvalidator.RegexMatches(cpusetRegexp, cpusetHelp)),
				mapvalidator.KeysAre(stringvalidator.RegexMatches(regexp.MustCompile(`^\d+$`), "must be a vCPU number, 0 to max_vcpu - 1"))},
		},
		"emulator_pinning": cpusetAttr("The host CPUs QEMU's emulator threads may run on, e.g. `0`."+
			" Adding or changing it applies live to a running domain; removing it restarts it.", false),
		"vcpu_placement": tfkit.OptionalString("How libvirt places the vCPUs (`<vcpu placement>`): `static` (on `cpu.vcpu_cpuset`, "+
			"or every host CPU) or `auto` (where numad advises, with `<numatune>` placement auto in `extra_xml`). Null: what the "+
			"domain has (`static` for a domain made here)."+cpuRestarts, stringvalidator.OneOf("static", "auto")),
		"vcpu_cpuset": cpusetAttr("The host CPUs every vCPU may run on unless `cpu.pinning` says otherwise (`<vcpu cpuset>`), "+
			"e.g. `0-3,^2`. Sets compare by the CPUs they hold. Null: what the domain has (none for a domain made here)."+cpuRestarts, false),
		"numa_cell": schema.ListNestedAttribute{
			MarkdownDescription: "Guest NUMA nodes. Together the cells' `cpus` must hold every vCPU from 0 to `max_vcpu` - 1 exactly " +
				"once, and their memory must add up to the domain's, to the KiB (the maximum memory, or the memory), less the " +
				"memory devices (`<memory model='dimm'>` and the like) in `device_xml`, which libvirt counts in it. NUMA cells " +
				"with `distances`, `cache` or `discard`, and `interconnects`, are not typed: import writes such a `<cpu>` whole " +
				"into `extra_xml` and leaves `cpu` null." + cpuRestarts,
			Optional: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"id": schema.Int64Attribute{MarkdownDescription: "Cell number, unique in the domain (usually 0, 1, ...).", Required: true,
					Validators: []validator.Int64{int64validator.Between(0, 255)}},
				"cpus": cpusetAttr("The vCPUs of the cell, e.g. `0-1`.", true),
				"memory_mib": schema.Int64Attribute{MarkdownDescription: "The cell's memory in MiB. Set exactly one of `memory_mib` " +
					"and `memory_kib`; import writes `memory_mib` when the cell's memory is a whole number of MiB, else `memory_kib`.",
					Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)}},
				"memory_kib": schema.Int64Attribute{MarkdownDescription: "The cell's memory in KiB, exactly. Set exactly one of " +
					"`memory_mib` and `memory_kib`.", Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)}},
				"memory_access": tfkit.OptionalString("`shared` or `private`. Null: the memory backing's (private unless shared memory "+
					"is asked for, or a virtiofs share needs it).", stringvalidator.OneOf(domainxml.MemoryAccessShared, domainxml.MemoryAccessPrivate)),
			}},
		},
	},
	toSpec:       cpuToSpec,
	fromSpec:     cpuFromSpec,
	validate:     validatePlatform,
	fillUnknowns: cpuFillUnknowns,
}

func cpuToSpec(m *Model, s *domainxml.Spec) {
	s.CPUTopology = cpuTopologySpec(m.CPU.CPUTopology)
	s.CPUFeatures = mapOfStrings(m.CPU.CPUFeatures)
	for _, c := range m.CPU.NUMACells {
		s.NUMACells = append(s.NUMACells, numaCellSpec(c))
	}
	if pins := mapOfStrings(m.CPU.CPUPinning); pins != nil {
		s.CPUPinning = map[uint]string{}
		// In key order: keys that are not numbers all land on one vCPU (the key validator
		// names each), and the same configuration must always give the same message.
		for _, k := range slices.Sorted(maps.Keys(pins)) {
			n, err := strconv.ParseUint(k, 10, 32)
			if err != nil {
				n = domainxml.MaxCPUSetCPU + 1 // the validator names it
			}
			s.CPUPinning[uint(n)] = pins[k]
		}
	}
	s.EmulatorPinning = m.CPU.EmulatorPinning.ValueString()
	s.VCPUPlacement, s.VCPUCPUSet = m.CPU.VCPUPlacement.ValueString(), m.CPU.VCPUCPUSet.ValueString()
}

func numaCellSpec(c numaCellModel) domainxml.NUMACell {
	return domainxml.NUMACell{ID: uint(c.ID.ValueInt64()), CPUs: c.CPUs.ValueString(), MemoryKiB: kibOf(c.MemoryMiB, c.MemoryKiB),
		MemAccess: c.MemoryAccess.ValueString()}
}

// cpuFromSpec: on import, everything of the family the domain has (a domain made here
// has none of it; dies = 1 is the default and left out). Otherwise each part the prior
// model wrote is libvirt's, kept as written while it says the same (cpusets "0,1" for
// libvirt's "0-1", dies left out for 1), cell by cell for numa_cell; a part it left null
// stays null.
func cpuFromSpec(s domainxml.Spec, prior, m *Model) {
	importing, p, c := isImport(prior), prior.CPU.domainCPUModel, &m.CPU.domainCPUModel
	switch {
	case s.CPUTopology == nil || (!importing && p.CPUTopology == nil):
		c.CPUTopology = nil
	case !importing && domainxml.SameTopology(cpuTopologySpec(p.CPUTopology), s.CPUTopology):
		c.CPUTopology = p.CPUTopology
	default:
		t := s.CPUTopology
		c.CPUTopology = &cpuTopologyModel{Sockets: int64Of(t.Sockets), Dies: int64Of(t.Dies), Cores: int64Of(t.Cores), Threads: int64Of(t.Threads)}
		if t.Dies <= 1 && (importing || !tfkit.Known(p.CPUTopology.Dies)) {
			c.CPUTopology.Dies = types.Int64Null()
		}
	}
	c.CPUFeatures = types.MapNull(types.StringType)
	switch {
	case importing:
		c.CPUFeatures = mapValue(s.CPUFeatures, c.CPUFeatures)
	case !tfkit.Known(p.CPUFeatures):
	case domainxml.SameFeatures(mapOfStrings(p.CPUFeatures), s.CPUFeatures):
		c.CPUFeatures = p.CPUFeatures
	default:
		c.CPUFeatures = mapValue(s.CPUFeatures, p.CPUFeatures)
	}
	c.NUMACells = numaCellsFromSpec(s.NUMACells, p.NUMACells, importing)
	pins := map[string]string{}
	for v, set := range s.CPUPinning {
		pins[strconv.FormatUint(uint64(v), 10)] = set
	}
	c.CPUPinning, c.EmulatorPinning = types.MapNull(types.StringType), types.StringNull()
	var ps domainxml.Spec
	cpuToSpec(prior, &ps)
	switch {
	case importing:
		c.CPUPinning = mapValue(pins, c.CPUPinning)
	case !tfkit.Known(p.CPUPinning):
	case maps.EqualFunc(ps.CPUPinning, s.CPUPinning, domainxml.SameCPUSet) && len(ps.CPUPinning) == len(s.CPUPinning):
		c.CPUPinning = p.CPUPinning
	default:
		c.CPUPinning = mapValue(pins, p.CPUPinning)
	}
	switch {
	case importing || (tfkit.Known(p.EmulatorPinning) && !domainxml.SameCPUSet(p.EmulatorPinning.ValueString(), s.EmulatorPinning)):
		c.EmulatorPinning = tfkit.StringOrNull(s.EmulatorPinning)
	case tfkit.Known(p.EmulatorPinning):
		c.EmulatorPinning = p.EmulatorPinning
	}
	// vcpu_placement and vcpu_cpuset: what the domain has on import (static is libvirt's
	// default and reads as null), else as the prior model wrote them while they say the same.
	c.VCPUPlacement, c.VCPUCPUSet = types.StringNull(), types.StringNull()
	switch {
	case importing:
		c.VCPUPlacement = tfkit.StringOrNull(s.VCPUPlacement)
	case tfkit.Known(p.VCPUPlacement) && p.VCPUPlacement.ValueString() == cmpOr(s.VCPUPlacement, "static"):
		c.VCPUPlacement = p.VCPUPlacement
	case tfkit.Known(p.VCPUPlacement):
		c.VCPUPlacement = types.StringValue(cmpOr(s.VCPUPlacement, "static"))
	}
	switch {
	case importing:
		c.VCPUCPUSet = tfkit.StringOrNull(s.VCPUCPUSet)
	case tfkit.Known(p.VCPUCPUSet) && s.VCPUCPUSet != "" && domainxml.SameCPUSet(p.VCPUCPUSet.ValueString(), s.VCPUCPUSet):
		c.VCPUCPUSet = p.VCPUCPUSet
	case tfkit.Known(p.VCPUCPUSet):
		c.VCPUCPUSet = tfkit.StringOrNull(s.VCPUCPUSet)
	}
}

// cmpOr is v, or def when v is empty.
func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// numaCellsFromSpec is libvirt's cells, each kept as the prior model wrote it while it
// says the same, else with its memory in the form the prior cell wrote (MiB on import, or
// KiB when it is no whole number of MiB); nil where the prior model wrote none (an empty
// list stays empty while libvirt has none).
func numaCellsFromSpec(cells []domainxml.NUMACell, prior []numaCellModel, importing bool) []numaCellModel {
	if !importing && (prior == nil || len(cells) == 0) {
		if len(cells) == 0 && prior != nil {
			return prior[:0:0]
		}
		return nil
	}
	var out []numaCellModel
	for i, c := range cells {
		if !importing && i < len(prior) && domainxml.SameNUMACell(numaCellSpec(prior[i]), c) {
			out = append(out, prior[i])
			continue
		}
		n := numaCellModel{ID: int64Of(c.ID), CPUs: types.StringValue(c.CPUs), MemoryAccess: tfkit.StringOrNull(c.MemAccess)}
		n.MemoryMiB, n.MemoryKiB = memoryForm(c.MemoryKiB, !importing && i < len(prior) && !prior[i].MemoryKiB.IsNull())
		out = append(out, n)
	}
	return out
}

// cpuTopologySpec is t as domainxml's (a null dies reads as 0: libvirt's 1).
func cpuTopologySpec(t *cpuTopologyModel) *domainxml.CPUTopology {
	if t == nil {
		return nil
	}
	return &domainxml.CPUTopology{Sockets: uint(t.Sockets.ValueInt64()), Dies: uint(t.Dies.ValueInt64()),
		Cores: uint(t.Cores.ValueInt64()), Threads: uint(t.Threads.ValueInt64())}
}

// cpuFillUnknowns: a value known only at apply that the read-back could not fill is null.
func cpuFillUnknowns(m *Model) {
	c := &m.CPU.domainCPUModel
	tfkit.NullIfUnknown(&c.EmulatorPinning, &c.VCPUPlacement, &c.VCPUCPUSet)
	for _, v := range []*types.Map{&c.CPUFeatures, &c.CPUPinning} {
		if v.IsUnknown() {
			*v = types.MapNull(types.StringType)
		}
	}
	if t := c.CPUTopology; t != nil {
		cpuNullIfUnknownInts(&t.Sockets, &t.Dies, &t.Cores, &t.Threads)
	}
	for i := range c.NUMACells {
		n := &c.NUMACells[i]
		cpuNullIfUnknownInts(&n.ID, &n.MemoryMiB, &n.MemoryKiB)
		tfkit.NullIfUnknown(&n.CPUs, &n.MemoryAccess)
	}
}

func cpuNullIfUnknownInts(vs ...*types.Int64) {
	for _, v := range vs {
		if v.IsUnknown() {
			*v = types.Int64Null()
		}
	}
}

func int64Of(v uint) types.Int64 { return types.Int64Value(int64(v)) }

// mapOfStrings is a known map of strings as a Go map (nil: null, unknown or empty).
func mapOfStrings(v types.Map) map[string]string {
	if !tfkit.Known(v) || len(v.Elements()) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, e := range v.Elements() {
		if s, ok := e.(types.String); ok {
			out[k] = s.ValueString()
		}
	}
	return out
}

// mapValue is m as a map value: null when empty, unless prior is an empty map (as written).
func mapValue(m map[string]string, prior types.Map) types.Map {
	if len(m) == 0 {
		if tfkit.Known(prior) && len(prior.Elements()) == 0 {
			return prior
		}
		return types.MapNull(types.StringType)
	}
	vals := map[string]attr.Value{}
	for k, v := range m {
		vals[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, vals)
}

// validatePlatform runs domainxml's platform rules at plan time, once what they read is
// known: topology against max_vcpu, NUMA cells against vCPUs and memory, pins against
// the vCPUs, memory_backing against virtiofs shares.
func validatePlatform(m *Model, diags *diag.Diagnostics) {
	if !tfkit.Known(m.VCPU) || !memoryFormsOK(m) {
		return // validateSizing names what is missing or doubled
	}
	if m.MemoryMiB.IsUnknown() || m.MemoryKiB.IsUnknown() || m.MaxVCPU.IsUnknown() || m.MaxMemoryMiB.IsUnknown() || m.MaxMemoryKiB.IsUnknown() ||
		m.CPU.CPUFeatures.IsUnknown() || m.CPU.CPUPinning.IsUnknown() || m.CPU.EmulatorPinning.IsUnknown() ||
		m.CPU.CPUMode.IsUnknown() || m.CPU.CPUModel.IsUnknown() || platformUnknown(m) {
		return // a value known only at apply: Build checks the same rules then
	}
	var s domainxml.Spec
	// device_xml: its memory devices count in the domain's memory beside the NUMA cells'.
	for _, toSpec := range []func(*Model, *domainxml.Spec){domainSizing.toSpec, domainPlatform.toSpec, domainCPUMode.toSpec, cpuToSpec, memoryToSpec,
		domainFilesystems.toSpec, domainDeviceXML.toSpec} {
		toSpec(m, &s)
	}
	for _, e := range domainxml.ValidatePlatform(s) {
		names := strings.Split(e.Attribute, ".") // cpu.topology: the attribute in its group
		at := path.Root(names[0])
		for _, n := range names[1:] {
			at = at.AtName(n)
		}
		diags.AddAttributeError(at, "Invalid "+e.Attribute,
			fmt.Sprintf("libvirt_domain %s: %s.", m.Name.ValueString(), e.Err))
	}
}

// platformUnknown reports whether a value the platform rules read is not known yet.
func platformUnknown(m *Model) bool {
	var vs []attr.Value
	if t := m.CPU.CPUTopology; t != nil {
		vs = append(vs, t.Sockets, t.Dies, t.Cores, t.Threads)
	}
	for _, c := range m.CPU.NUMACells {
		vs = append(vs, c.ID, c.CPUs, c.MemoryMiB, c.MemoryKiB, c.MemoryAccess)
	}
	if b := m.MemoryBacking; b != nil {
		vs = append(vs, b.HugePages, b.HugePageSizeKiB, b.Source, b.Access)
	}
	for _, f := range m.Filesystems {
		vs = append(vs, f.Driver, f.Target)
	}
	vs = append(vs, m.DeviceXML)
	if len(m.CPU.NUMACells) > 0 && tfkit.Known(m.DeviceXML) {
		vs = append(vs, m.DeviceXML.Elements()...)
	}
	for _, v := range vs {
		if v.IsUnknown() {
			return true
		}
	}
	return false
}
