package domain

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainLoaderModel: os.loader and os.nvram (domainxml's loader family), firmware chosen
// by hand instead of libvirt's auto-selection. Null: auto-selection (`firmware`).
type domainLoaderModel struct {
	Loader *loaderModel `tfsdk:"loader"`
	NVRAM  *nvramModel  `tfsdk:"nvram"`
}

type loaderModel struct {
	Path     types.String `tfsdk:"path"`
	Type     types.String `tfsdk:"type"`
	Readonly types.Bool   `tfsdk:"readonly"`
	Secure   types.Bool   `tfsdk:"secure"`
}

type nvramModel struct {
	Path     types.String `tfsdk:"path"`
	Template types.String `tfsdk:"template"`
}

var domainLoader = family{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"loader": schema.SingleNestedAttribute{
			MarkdownDescription: "Firmware chosen by hand (`<os><loader>`) instead of libvirt's auto-selection, e.g. " +
				"`{ path = \"/usr/share/OVMF/OVMF_CODE_4M.fd\", type = \"pflash\", readonly = true }`. A `pflash` loader is UEFI " +
				"firmware (set `firmware = \"uefi\"`), a `rom` one BIOS. Not with `os.secure_boot` (auto-selection's; set " +
				"`secure = true` here instead). A change rewrites the definition and restarts a running domain; removing it " +
				"goes back to what `firmware` selects.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"path": schema.StringAttribute{MarkdownDescription: "Absolute path of the firmware image on the host.", Required: true, Validators: absPath},
				"type": tfkit.OptionalString("`rom` (what null means, libvirt's default) or `pflash` (UEFI images such as OVMF).",
					stringvalidator.OneOf(domainxml.LoaderTypes...)),
				"readonly": schema.BoolAttribute{MarkdownDescription: "The image is read-only (`readonly=\"yes\"`, what UEFI code images want). Default: libvirt's.", Optional: true},
				"secure":   schema.BoolAttribute{MarkdownDescription: "A Secure Boot build that needs SMM (`secure=\"yes\"`; set `features.smm = true`). Default: libvirt's.", Optional: true},
			},
		},
		"nvram": schema.SingleNestedAttribute{
			MarkdownDescription: "The variable store of a hand-chosen `pflash` loader (`<os><nvram>`). Needs `os.loader`. Default: " +
				"libvirt's path for the domain (`/var/lib/libvirt/qemu/nvram/<name>_VARS.fd`), copied on first start from the " +
				"template libvirt finds for the loader. The varstore is removed when the domain is destroyed.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"path":     tfkit.OptionalString("Absolute path of the domain's varstore on the host. Default: libvirt's.", absPath...),
				"template": tfkit.OptionalString("Absolute path of the varstore template (e.g. `/usr/share/OVMF/OVMF_VARS_4M.fd`), copied when the varstore does not exist yet.", absPath...),
			},
		},
	},
	toSpec: loaderToSpec,
	// The loader as the domain has it (null asks for none: a hand-chosen one there is
	// drift, and what an import writes), field by field against what the user wrote: a
	// flag left null stays null. The nvram only where written (libvirt fills in a path of
	// its own); an import writes its template, and its path where it is not libvirt's.
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.OS.Loader, m.OS.NVRAM = nil, nil
		l := s.Loader
		if l == nil {
			return
		}
		m.OS.Loader = &loaderModel{Path: types.StringValue(l.Path), Type: tfkit.StringOrNull(l.Type), Readonly: loaderFlag(l.Readonly), Secure: loaderFlag(l.Secure)}
		if p := prior.OS.Loader; p != nil {
			if p.Type.IsNull() && (l.Type == "" || l.Type == domainxml.LoaderROM) {
				m.OS.Loader.Type = types.StringNull()
			}
			if p.Readonly.IsNull() {
				m.OS.Loader.Readonly = types.BoolNull()
			}
			if p.Secure.IsNull() {
				m.OS.Loader.Secure = types.BoolNull()
			}
		}
		n := s.NVRam
		switch p := prior.OS.NVRAM; {
		case n == nil:
		case isImport(prior):
			out := &nvramModel{Path: tfkit.StringOrNull(n.Path), Template: tfkit.StringOrNull(n.Template)}
			if libvirtNVRAM(n.Path, s.Name) {
				out.Path = types.StringNull()
			}
			if !out.Path.IsNull() || !out.Template.IsNull() {
				m.OS.NVRAM = out
			}
		case p != nil:
			m.OS.NVRAM = &nvramModel{Path: types.StringNull(), Template: types.StringNull()}
			if !p.Path.IsNull() {
				m.OS.NVRAM.Path = tfkit.StringOrNull(n.Path)
			}
			if !p.Template.IsNull() {
				m.OS.NVRAM.Template = tfkit.StringOrNull(n.Template)
			}
		}
	},
	validate: func(m *Model, d *diag.Diagnostics) {
		if m.Firmware.IsUnknown() {
			return
		}
		s := domainxml.Spec{Firmware: m.Firmware.ValueString()}
		loaderToSpec(m, &s)
		if m.OS.SecureBoot != nil {
			s.SecureBoot = &domainxml.SecureBoot{Enabled: true}
		}
		if err := domainxml.ValidateLoader(&s); err != nil {
			at := path.Root("os").AtName("loader")
			if m.OS.Loader == nil {
				at = path.Root("os").AtName("nvram")
			}
			d.AddAttributeError(at, "Invalid firmware chosen by hand", fmt.Sprintf("libvirt_domain %s: %v.", m.Name.ValueString(), err))
		}
	},
	fillUnknowns: func(m *Model) {
		if l := m.OS.Loader; l != nil {
			tfkit.NullIfUnknown(&l.Path, &l.Type)
			for _, b := range []*types.Bool{&l.Readonly, &l.Secure} {
				if b.IsUnknown() {
					*b = types.BoolNull()
				}
			}
		}
		if n := m.OS.NVRAM; n != nil {
			tfkit.NullIfUnknown(&n.Path, &n.Template)
		}
	},
}

func loaderToSpec(m *Model, s *domainxml.Spec) {
	s.Loader, s.NVRam = &domainxml.Loader{}, nil // null: auto-selection
	if l := m.OS.Loader; l != nil {
		s.Loader = &domainxml.Loader{Path: tfkit.StringOf(l.Path), Type: tfkit.StringOf(l.Type), Readonly: knownBool(l.Readonly), Secure: knownBool(l.Secure)}
	}
	if n := m.OS.NVRAM; n != nil {
		s.NVRam = &domainxml.NVRam{Path: tfkit.StringOf(n.Path), Template: tfkit.StringOf(n.Template)}
	}
}

// libvirtNVRAM reports whether path is the varstore path libvirt gives domain name by
// itself (<nvram dir>/<name>_VARS.fd).
func libvirtNVRAM(path, name string) bool {
	return path != "" && (path == "/var/lib/libvirt/qemu/nvram/"+name+"_VARS.fd")
}

// loaderFlag is a loader flag as the model holds it: null where libvirt's is not set.
func loaderFlag(b *bool) types.Bool {
	if b == nil {
		return types.BoolNull()
	}
	return types.BoolValue(*b)
}
