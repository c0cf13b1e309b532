package domain

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainMemoryModel: memory_backing, how the guest's RAM is provided
// (domainxml/memory_backing.go owns the XML, the rules and the virtiofs default).
type domainMemoryModel struct {
	MemoryBacking *memoryBackingModel `tfsdk:"memory_backing"`
}

type memoryBackingModel struct {
	HugePages       types.Bool   `tfsdk:"hugepages"`
	HugePageSizeKiB types.Int64  `tfsdk:"hugepage_size_kib"`
	Source          types.String `tfsdk:"source"`
	Access          types.String `tfsdk:"access"`
	Locked          types.Bool   `tfsdk:"locked"`
	NoSharePages    types.Bool   `tfsdk:"nosharepages"`
	Discard         types.Bool   `tfsdk:"discard"`
}

// memoryBool is a memory_backing switch: unset is false.
func memoryBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc + " Unset: `false`.", Optional: true}
}

var domainMemory = family{
	attributes: map[string]schema.Attribute{
		"memory_backing": schema.SingleNestedAttribute{
			MarkdownDescription: "How the guest's memory is backed on the host. Null (the default): libvirt's (anonymous private " +
				"memory), or `memfd` shared memory while the domain has a virtiofs `filesystem`. With a virtiofs share, a `source` " +
				"or `access` left out here is `memfd` and `shared`, and `access = \"private\"` is an error. Huge pages must be " +
				"reserved on the host (`HugePages_Total` in /proc/meminfo) before the domain starts." + cpuRestarts,
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"hugepages": memoryBool("Back the memory with huge pages."),
				"hugepage_size_kib": schema.Int64Attribute{MarkdownDescription: "Huge page size in KiB, e.g. `2048` or `1048576`; needs " +
					"`hugepages = true`. Unset: the host's default huge page size.", Optional: true,
					Validators: []validator.Int64{int64validator.AtLeast(4)}},
				"source": tfkit.OptionalString("`anonymous`, `memfd` or `file`. Unset: libvirt's (`anonymous`), or `memfd` with a virtiofs share; "+
					"huge pages need `memfd` or `file`.", stringvalidator.OneOf(domainxml.MemorySourceAnonymous, domainxml.MemorySourceMemfd, domainxml.MemorySourceFile)),
				"access": tfkit.OptionalString("`shared` or `private`. Unset: `private`, or `shared` with a virtiofs share.",
					stringvalidator.OneOf(domainxml.MemoryAccessShared, domainxml.MemoryAccessPrivate)),
				"locked": memoryBool("Lock the guest's memory (and QEMU's) in host RAM: never swapped. libvirt then lifts QEMU's " +
					"locked-memory limit; set a memory hard limit on the host side if that matters."),
				"nosharepages": memoryBool("Keep the host from merging the guest's identical pages (KSM)."),
				"discard":      memoryBool("Discard the memory's content when the guest stops (file-backed or huge page memory)."),
			},
		},
	},
	toSpec:   memoryToSpec,
	fromSpec: memoryFromSpec,
	fillUnknowns: func(m *Model) {
		if b := m.MemoryBacking; b != nil {
			for _, f := range memoryFields {
				if f.unknown(b) {
					f.clear(b)
				}
			}
		}
	},
}

// memoryFromSpec: memory_backing holds what the configuration wrote, as the domain has it:
// all of it while the domain has that memory (a source or access a virtiofs share implies
// reads back as libvirt writes it), else field by field, a field the configuration left out
// staying null while the domain has what leaving it out means. Null when the configuration
// leaves it out and the domain has what that means (none, or virtiofs' own memory). An
// import writes it when the domain has another backing, with the fields that differ from
// leaving them out (false, none, memfd and shared with a virtiofs share); so does a read
// of a domain given another backing outside Terraform while the configuration leaves it
// out: left out means none (the next update removes it), and the plan must say so.
func memoryFromSpec(s domainxml.Spec, prior, m *Model) {
	m.MemoryBacking = nil
	written := prior.MemoryBacking
	notWritten := isImport(prior) || written == nil
	if notWritten {
		if s.MemoryBacking == nil {
			return
		}
		none := emptyBacking()
		written = &none
	} else if domainxml.SameMemoryBacking(backingSpec(written, s.Filesystems), s) {
		m.MemoryBacking = written
		return
	}
	var have domainxml.MemoryBacking
	if s.MemoryBacking != nil {
		have = *s.MemoryBacking
	}
	mb := backingModel(have)
	for _, f := range memoryFields {
		if !f.null(written) {
			continue
		}
		try := *mb
		f.clear(&try)
		if domainxml.SameMemoryBacking(backingSpec(&try, s.Filesystems), s) {
			*mb = try
		}
	}
	if notWritten && *mb == emptyBacking() {
		return // what the provider gives the domain without memory_backing
	}
	m.MemoryBacking = mb
}

// backingSpec is the Spec b asks for beside the filesystems fss.
func backingSpec(b *memoryBackingModel, fss []domainxml.Filesystem) domainxml.Spec {
	s := domainxml.Spec{Filesystems: fss}
	memoryToSpec(&Model{domainMemoryModel: domainMemoryModel{MemoryBacking: b}}, &s)
	return s
}

// backingModel is b with every field set (the strings and the page size null when empty).
func backingModel(b domainxml.MemoryBacking) *memoryBackingModel {
	mb := &memoryBackingModel{HugePages: types.BoolValue(b.HugePages), HugePageSizeKiB: types.Int64Null(),
		Source: tfkit.StringOrNull(b.Source), Access: tfkit.StringOrNull(b.Access), Locked: types.BoolValue(b.Locked),
		NoSharePages: types.BoolValue(b.NoSharePages), Discard: types.BoolValue(b.Discard)}
	if b.HugePageSizeKiB != 0 {
		mb.HugePageSizeKiB = types.Int64Value(int64(b.HugePageSizeKiB))
	}
	return mb
}

func emptyBacking() memoryBackingModel {
	return memoryBackingModel{HugePages: types.BoolNull(), HugePageSizeKiB: types.Int64Null(), Source: types.StringNull(),
		Access: types.StringNull(), Locked: types.BoolNull(), NoSharePages: types.BoolNull(), Discard: types.BoolNull()}
}

// memoryField is one field of memory_backing, for the field-by-field reconciliation.
type memoryField struct {
	v func(b *memoryBackingModel) attr.Value
	// clear makes the field null.
	clear func(b *memoryBackingModel)
}

func (f memoryField) null(b *memoryBackingModel) bool    { return f.v(b).IsNull() }
func (f memoryField) unknown(b *memoryBackingModel) bool { return f.v(b).IsUnknown() }

var memoryFields = []memoryField{
	{func(b *memoryBackingModel) attr.Value { return b.HugePages }, func(b *memoryBackingModel) { b.HugePages = types.BoolNull() }},
	{func(b *memoryBackingModel) attr.Value { return b.HugePageSizeKiB }, func(b *memoryBackingModel) { b.HugePageSizeKiB = types.Int64Null() }},
	{func(b *memoryBackingModel) attr.Value { return b.Source }, func(b *memoryBackingModel) { b.Source = types.StringNull() }},
	{func(b *memoryBackingModel) attr.Value { return b.Access }, func(b *memoryBackingModel) { b.Access = types.StringNull() }},
	{func(b *memoryBackingModel) attr.Value { return b.Locked }, func(b *memoryBackingModel) { b.Locked = types.BoolNull() }},
	{func(b *memoryBackingModel) attr.Value { return b.NoSharePages }, func(b *memoryBackingModel) { b.NoSharePages = types.BoolNull() }},
	{func(b *memoryBackingModel) attr.Value { return b.Discard }, func(b *memoryBackingModel) { b.Discard = types.BoolNull() }},
}

func memoryToSpec(m *Model, s *domainxml.Spec) {
	b := m.MemoryBacking
	if b == nil {
		return
	}
	s.MemoryBacking = &domainxml.MemoryBacking{HugePages: b.HugePages.ValueBool(), HugePageSizeKiB: uint64(b.HugePageSizeKiB.ValueInt64()),
		Source: b.Source.ValueString(), Access: b.Access.ValueString(), Locked: b.Locked.ValueBool(),
		NoSharePages: b.NoSharePages.ValueBool(), Discard: b.Discard.ValueBool()}
}
