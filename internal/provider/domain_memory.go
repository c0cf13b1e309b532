package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
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

var domainMemory = domainFamily{
	attributes: map[string]schema.Attribute{
		"memory_backing": schema.SingleNestedAttribute{
			MarkdownDescription: "How the guest's memory is backed on the host. Default: libvirt's (anonymous private memory), or " +
				"`memfd` shared memory while the domain has a virtiofs `filesystem`. With a virtiofs share, a `source` or `access` " +
				"left out here is `memfd` and `shared`, and `access = \"private\"` is an error. Huge pages must be reserved on the " +
				"host (`HugePages_Total` in /proc/meminfo) before the domain starts." + cpuRestarts,
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"hugepages": optionalBool("Back the memory with huge pages. Default `false`.", false),
				"hugepage_size_kib": schema.Int64Attribute{MarkdownDescription: "Huge page size in KiB, e.g. `2048` or `1048576`; needs " +
					"`hugepages = true`. Default: the host's default huge page size.", Optional: true,
					Validators: []validator.Int64{int64validator.AtLeast(4)}},
				"source": optionalString("`anonymous`, `memfd` or `file`. Default: libvirt's (`anonymous`), or `memfd` with a virtiofs share; "+
					"huge pages need `memfd` or `file`.", stringvalidator.OneOf(domainxml.MemorySourceAnonymous, domainxml.MemorySourceMemfd, domainxml.MemorySourceFile)),
				"access": optionalString("`shared` or `private`. Default: `private`, or `shared` with a virtiofs share.",
					stringvalidator.OneOf(domainxml.MemoryAccessShared, domainxml.MemoryAccessPrivate)),
				"locked": optionalBool("Lock the guest's memory (and QEMU's) in host RAM: never swapped. libvirt then lifts QEMU's "+
					"locked-memory limit; set a memory hard limit on the host side if that matters. Default `false`.", false),
				"nosharepages": optionalBool("Keep the host from merging the guest's identical pages (KSM). Default `false`.", false),
				"discard":      optionalBool("Discard the memory's content when the guest stops (file-backed or huge page memory). Default `false`.", false),
			},
		},
	},
	toSpec: memoryToSpec,
	// What the configuration wrote stays while the domain has that memory (a source or
	// access a virtiofs share implies reads back as libvirt writes it).
	fromSpec: func(s domainxml.Spec, prior, m *domainModel) {
		ps := domainxml.Spec{Filesystems: s.Filesystems}
		memoryToSpec(prior, &ps)
		if domainxml.SameMemoryBacking(ps, s) {
			m.MemoryBacking = prior.MemoryBacking
			return
		}
		m.MemoryBacking = nil
		if b := s.MemoryBacking; b != nil {
			m.MemoryBacking = &memoryBackingModel{HugePages: types.BoolValue(b.HugePages), HugePageSizeKiB: types.Int64Null(),
				Source: optString(b.Source), Access: optString(b.Access), Locked: types.BoolValue(b.Locked),
				NoSharePages: types.BoolValue(b.NoSharePages), Discard: types.BoolValue(b.Discard)}
			if b.HugePageSizeKiB != 0 {
				m.MemoryBacking.HugePageSizeKiB = types.Int64Value(int64(b.HugePageSizeKiB))
			}
		}
	},
}

func memoryToSpec(m *domainModel, s *domainxml.Spec) {
	b := m.MemoryBacking
	if b == nil {
		return
	}
	s.MemoryBacking = &domainxml.MemoryBacking{HugePages: b.HugePages.ValueBool(), HugePageSizeKiB: uint64(b.HugePageSizeKiB.ValueInt64()),
		Source: b.Source.ValueString(), Access: b.Access.ValueString(), Locked: b.Locked.ValueBool(),
		NoSharePages: b.NoSharePages.ValueBool(), Discard: b.Discard.ValueBool()}
}
