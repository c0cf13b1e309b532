package domain

import (
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainFilesystemsModel: the `filesystem` blocks, host directories shared with the guest.
type domainFilesystemsModel struct {
	Filesystems []filesystemModel `tfsdk:"filesystem"`
}

type filesystemModel struct {
	Source     types.String `tfsdk:"source"`
	Target     types.String `tfsdk:"target"`
	Driver     types.String `tfsdk:"driver"`
	ReadOnly   types.Bool   `tfsdk:"read_only"`
	AccessMode types.String `tfsdk:"access_mode"`
}

var domainFilesystems = family{
	blocks: map[string]schema.Block{
		"filesystem": schema.ListNestedBlock{
			MarkdownDescription: "Host directories shared with the guest, which mounts each by its tag: " +
				"`mount -t virtiofs <target> /mnt` or `mount -t 9p -o trans=virtio,version=9p2000.L <target> /mnt`. " +
				"A virtiofs share needs the guest's memory shared with virtiofsd: without `memory_backing`, the provider gives the " +
				"domain `memfd` shared memory, and takes it away again with the last virtiofs share. " +
				"On a running domain, a virtiofs share removed is detached live and from the definition " +
				"(`update_method = \"live\"`; the guest should unmount it first; with the last one, the shared memory leaves " +
				"the definition, the running guest keeps it until it stops). Adding a share restarts the domain: QEMU " +
				"cannot hot-plug 9p, and libvirt 9.0's virtiofs hot-plug crashes libvirtd on hosts without cgroups. Changing, " +
				"reordering or removing a 9p share rewrites the definition and restarts a running domain too.",
			NestedObject: schema.NestedBlockObject{
				Attributes: map[string]schema.Attribute{
					"source": schema.StringAttribute{
						MarkdownDescription: "The directory on the libvirt host.",
						Required:            true,
						Validators:          []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^/`), "must be an absolute path on the host")},
					},
					"target": schema.StringAttribute{
						MarkdownDescription: fmt.Sprintf("The mount tag the guest names the share by (1 to %d bytes, unique in the domain).", domainxml.MaxFSTag),
						Required:            true,
						Validators:          []validator.String{stringvalidator.LengthBetween(1, domainxml.MaxFSTag)},
					},
					"driver": schema.StringAttribute{
						MarkdownDescription: "`virtiofs` (default: fast, POSIX semantics; libvirt starts virtiofsd) or `9p` (QEMU's own " +
							"server, no shared memory needed).",
						Optional:   true,
						Computed:   true,
						Default:    stringdefault.StaticString(domainxml.FSVirtiofs),
						Validators: []validator.String{stringvalidator.OneOf(domainxml.FSVirtiofs, domainxml.FS9p)},
					},
					"read_only": tfkit.OptionalBool("The guest may only read the share. Default `false`. libvirt 9.0 refuses it for virtiofs "+
						"(\"virtiofs does not yet support read-only mode\"); use `driver = \"9p\"` there.", false),
					"access_mode": tfkit.OptionalString("9p only: how guest file ownership maps to the host, `passthrough` (libvirt's "+
						"default), `mapped` (kept in extended attributes) or `squash` (passthrough, failures ignored).",
						stringvalidator.OneOf(domainxml.AccessPassthrough, "mapped", "squash")),
				},
			},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		for _, f := range m.Filesystems {
			s.Filesystems = append(s.Filesystems, domainxml.Filesystem{Source: f.Source.ValueString(), Target: f.Target.ValueString(),
				Driver: f.Driver.ValueString(), ReadOnly: f.ReadOnly.ValueBool(), AccessMode: f.AccessMode.ValueString()})
		}
	},
	// access_mode is null for libvirt's default (passthrough), unless the configuration
	// spelled it out.
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.Filesystems = nil
		for i, f := range s.Filesystems {
			fm := filesystemModel{Source: types.StringValue(f.Source), Target: types.StringValue(f.Target),
				Driver: types.StringValue(f.Driver), ReadOnly: types.BoolValue(f.ReadOnly), AccessMode: tfkit.StringOrNull(f.AccessMode)}
			if i < len(prior.Filesystems) {
				p := prior.Filesystems[i]
				if tfkit.Known(p.AccessMode) && p.AccessMode.ValueString() == domainxml.AccessPassthrough && f.AccessMode == "" {
					fm.AccessMode = p.AccessMode
				}
				if tfkit.Known(p.Source) && sameDir(p.Source.ValueString(), f.Source) {
					fm.Source = p.Source // a trailing slash as written
				}
			}
			m.Filesystems = append(m.Filesystems, fm)
		}
	},
	validate: func(m *Model, diags *diag.Diagnostics) {
		tags := map[string]int{}
		for i, f := range m.Filesystems {
			at := path.Root("filesystem").AtListIndex(i)
			if tfkit.Known(f.Target) {
				if j, ok := tags[f.Target.ValueString()]; ok {
					diags.AddAttributeError(at.AtName("target"), "Filesystem target used twice",
						fmt.Sprintf("filesystem %d and filesystem %d both use the mount tag %q; give each share its own.", j, i, f.Target.ValueString()))
				}
				tags[f.Target.ValueString()] = i
			}
			// A driver left out is the default, virtiofs (the config holds no defaults yet).
			if tfkit.Known(f.AccessMode) && !f.Driver.IsUnknown() && f.Driver.ValueString() != domainxml.FS9p {
				diags.AddAttributeError(at.AtName("access_mode"), "access_mode is a 9p setting",
					fmt.Sprintf("filesystem %d (%s) uses driver %q, which always passes file ownership through. Remove access_mode, "+
						"or set driver = \"9p\".", i, f.Target.ValueString(), domainxml.FSVirtiofs))
			}
		}
	},
}

// sameDir reports whether two host paths name the same directory as written.
func sameDir(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }
