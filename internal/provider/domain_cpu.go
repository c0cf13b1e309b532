package provider

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainCPUModel: the guest CPU's topology, feature policies and NUMA cells, and the
// vCPU and emulator pins (domainxml/cpu_topology.go and pinning.go own the XML and the
// rules; domain_memory.go has memory_backing).
type domainCPUModel struct {
	CPUTopology     *cpuTopologyModel `tfsdk:"topology"`
	CPUFeatures     types.Map         `tfsdk:"feature"`
	NUMACells       []numaCellModel   `tfsdk:"numa_cell"`
	CPUPinning      types.Map         `tfsdk:"pinning"`
	EmulatorPinning types.String      `tfsdk:"emulator_pinning"`
}

type cpuTopologyModel struct {
	Sockets types.Int64 `tfsdk:"sockets"`
	Dies    types.Int64 `tfsdk:"dies"`
	Cores   types.Int64 `tfsdk:"cores"`
	Threads types.Int64 `tfsdk:"threads"`
}

type numaCellModel struct {
	ID           types.Int64  `tfsdk:"id"`
	CPUs         types.String `tfsdk:"cpus"`
	MemoryMiB    types.Int64  `tfsdk:"memory_mib"`
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

var domainCPU = domainFamily{
	group: groupCPU,
	attributes: map[string]schema.Attribute{
		"topology": schema.SingleNestedAttribute{
			MarkdownDescription: "The CPU topology the guest sees. sockets × dies × cores × threads must equal `max_vcpu` (or `vcpu` " +
				"when `max_vcpu` is unset); the plan fails otherwise. Default: libvirt's (one socket per vCPU)." + cpuRestarts,
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"sockets": countAttr("CPU sockets."),
				"dies": schema.Int64Attribute{MarkdownDescription: "Dies per socket. Default `1`.", Optional: true, Computed: true,
					Default: int64default.StaticInt64(1), Validators: []validator.Int64{int64validator.Between(1, 4096)}},
				"cores":   countAttr("Cores per die."),
				"threads": countAttr("Threads per core."),
			},
		},
		"feature": schema.MapAttribute{
			MarkdownDescription: "CPU feature policies, feature name → `require`, `disable`, `optional`, `force` or `forbid`, e.g. " +
				"`{ vmx = \"disable\", \"sse4.2\" = \"require\" }`. Names as libvirt's CPU map spells them (`virsh cpu-models`, " +
				"`virsh domcapabilities`). They need a CPU model: `cpu_mode = \"host-model\"` or `\"host-passthrough\"`, or `\"custom\"` with `cpu_model`. With `cpu_mode = \"host-passthrough\"` only `disable` and `require` make sense." + cpuRestarts,
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
	},
	blocks: map[string]schema.Block{
		"numa_cell": schema.ListNestedBlock{
			MarkdownDescription: "Guest NUMA nodes. Together the cells' `cpus` must hold every vCPU from 0 to `max_vcpu` - 1 exactly " +
				"once, and their `memory_mib` must add up to the domain's memory (`max_memory_mib`, or `memory_mib`)." + cpuRestarts,
			NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
				"id": schema.Int64Attribute{MarkdownDescription: "Cell number, unique in the domain (usually 0, 1, ...).", Required: true,
					Validators: []validator.Int64{int64validator.Between(0, 255)}},
				"cpus": cpusetAttr("The vCPUs of the cell, e.g. `0-1`.", true),
				"memory_mib": schema.Int64Attribute{MarkdownDescription: "The cell's memory in MiB.", Required: true,
					Validators: []validator.Int64{int64validator.AtLeast(1)}},
				"memory_access": optionalString("`shared` or `private`. Default: the memory backing's (private unless shared memory "+
					"is asked for, or a virtiofs share needs it).", stringvalidator.OneOf(domainxml.MemoryAccessShared, domainxml.MemoryAccessPrivate)),
			}},
		},
	},
	toSpec:   cpuToSpec,
	fromSpec: cpuFromSpec,
	validate: validatePlatform,
}

func cpuToSpec(m *domainModel, s *domainxml.Spec) {
	if t := m.CPU.CPUTopology; t != nil {
		s.CPUTopology = &domainxml.CPUTopology{Sockets: uint(t.Sockets.ValueInt64()), Dies: uint(t.Dies.ValueInt64()),
			Cores: uint(t.Cores.ValueInt64()), Threads: uint(t.Threads.ValueInt64())}
	}
	s.CPUFeatures = mapOfStrings(m.CPU.CPUFeatures)
	for _, c := range m.CPU.NUMACells {
		s.NUMACells = append(s.NUMACells, domainxml.NUMACell{ID: uint(c.ID.ValueInt64()), CPUs: c.CPUs.ValueString(),
			MemoryMiB: uint64(c.MemoryMiB.ValueInt64()), MemAccess: c.MemoryAccess.ValueString()})
	}
	if pins := mapOfStrings(m.CPU.CPUPinning); pins != nil {
		s.CPUPinning = map[uint]string{}
		for k, v := range pins {
			n, err := strconv.ParseUint(k, 10, 32)
			if err != nil {
				n = domainxml.MaxCPUSetCPU + 1 // the validator names it
			}
			s.CPUPinning[uint(n)] = v
		}
	}
	s.EmulatorPinning = m.CPU.EmulatorPinning.ValueString()
}

// cpuFromSpec keeps what the configuration wrote while libvirt's definition says the same
// (cpusets as written, dies left to its default).
func cpuFromSpec(s domainxml.Spec, prior, m *domainModel) {
	var ps domainxml.Spec
	cpuToSpec(prior, &ps)
	ps.VCPU, ps.MaxVCPU = s.VCPU, s.MaxVCPU
	if domainxml.SameCPUParts(ps, s) {
		m.CPU.CPUTopology, m.CPU.CPUFeatures, m.CPU.NUMACells = prior.CPU.CPUTopology, knownMap(prior.CPU.CPUFeatures), prior.CPU.NUMACells
	} else {
		m.CPU.CPUTopology, m.CPU.NUMACells = nil, nil
		if t := s.CPUTopology; t != nil {
			m.CPU.CPUTopology = &cpuTopologyModel{Sockets: int64Of(t.Sockets), Dies: int64Of(t.Dies), Cores: int64Of(t.Cores), Threads: int64Of(t.Threads)}
		}
		m.CPU.CPUFeatures = mapValue(s.CPUFeatures, prior.CPU.CPUFeatures)
		for _, c := range s.NUMACells {
			m.CPU.NUMACells = append(m.CPU.NUMACells, numaCellModel{ID: int64Of(c.ID), CPUs: types.StringValue(c.CPUs),
				MemoryMiB: types.Int64Value(int64(c.MemoryMiB)), MemoryAccess: optString(c.MemAccess)})
		}
	}
	if domainxml.SamePinning(ps, s) {
		m.CPU.CPUPinning, m.CPU.EmulatorPinning = knownMap(prior.CPU.CPUPinning), prior.CPU.EmulatorPinning
		return
	}
	pins := map[string]string{}
	for v, set := range s.CPUPinning {
		pins[strconv.FormatUint(uint64(v), 10)] = set
	}
	m.CPU.CPUPinning = mapValue(pins, prior.CPU.CPUPinning)
	m.CPU.EmulatorPinning = optString(s.EmulatorPinning)
}

// knownMap is v, or a null map of strings when v is null or unknown (or the zero value
// of an empty prior).
func knownMap(v types.Map) types.Map {
	if !known(v) {
		return types.MapNull(types.StringType)
	}
	return v
}

func int64Of(v uint) types.Int64 { return types.Int64Value(int64(v)) }

// mapOfStrings is a known map of strings as a Go map (nil: null, unknown or empty).
func mapOfStrings(v types.Map) map[string]string {
	if !known(v) || len(v.Elements()) == 0 {
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
		if known(prior) && len(prior.Elements()) == 0 {
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
func validatePlatform(m *domainModel, diags *diag.Diagnostics) {
	for _, v := range []interface {
		IsNull() bool
		IsUnknown() bool
	}{m.VCPU, m.MemoryMiB} {
		if !known(v) {
			return
		}
	}
	if m.MaxVCPU.IsUnknown() || m.MaxMemoryMiB.IsUnknown() || m.CPU.CPUFeatures.IsUnknown() || m.CPU.CPUPinning.IsUnknown() ||
		m.CPU.EmulatorPinning.IsUnknown() || m.CPU.CPUMode.IsUnknown() || m.CPU.CPUModel.IsUnknown() || platformUnknown(m) {
		return // a value known only at apply: Build checks the same rules then
	}
	var s domainxml.Spec
	for _, toSpec := range []func(*domainModel, *domainxml.Spec){domainSizing.toSpec, domainPlatform.toSpec, cpuToSpec, memoryToSpec, domainFilesystems.toSpec} {
		toSpec(m, &s)
	}
	for _, e := range domainxml.ValidatePlatform(s) {
		diags.AddAttributeError(path.Root(e.Attribute), "Invalid "+e.Attribute,
			fmt.Sprintf("libvirt_domain %s: %s.", m.Name.ValueString(), e.Err))
	}
}

// platformUnknown reports whether a value the platform rules read is not known yet.
func platformUnknown(m *domainModel) bool {
	var vs []attr.Value
	if t := m.CPU.CPUTopology; t != nil {
		vs = append(vs, t.Sockets, t.Dies, t.Cores, t.Threads)
	}
	for _, c := range m.CPU.NUMACells {
		vs = append(vs, c.ID, c.CPUs, c.MemoryMiB, c.MemoryAccess)
	}
	if b := m.MemoryBacking; b != nil {
		vs = append(vs, b.HugePages, b.HugePageSizeKiB, b.Source, b.Access)
	}
	for _, f := range m.Filesystems {
		vs = append(vs, f.Driver, f.Target)
	}
	for _, v := range vs {
		if v.IsUnknown() {
			return true
		}
	}
	return false
}
