package domain

import (
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// fwCfgName is QEMU's rule for user fw_cfg names.
var fwCfgName = regexp.MustCompile(`^opt/.{1,51}$`)

// domainSMBIOSModel: smbios and fw_cfg (domainxml's smbios family). Unset: none.
type domainSMBIOSModel struct {
	SMBIOS *smbiosModel `tfsdk:"smbios"`
	FWCfg  types.Map    `tfsdk:"fw_cfg"`
	// FWCfgFiles: fw_cfg entries read from a host file.
	FWCfgFiles types.Map `tfsdk:"fw_cfg_files"`
}

type smbiosModel struct {
	Mode       types.String `tfsdk:"mode"`
	BIOS       types.Map    `tfsdk:"bios"`
	System     types.Map    `tfsdk:"system"`
	BaseBoard  types.List   `tfsdk:"base_board"` // of map(string)
	Chassis    types.Map    `tfsdk:"chassis"`
	OEMStrings types.List   `tfsdk:"oem_strings"`
}

// baseBoardType is one os.smbios.base_board element.
var baseBoardType = types.MapType{ElemType: types.StringType}

func smbiosTable(desc string) schema.MapAttribute {
	return schema.MapAttribute{MarkdownDescription: desc, ElementType: types.StringType, Optional: true,
		Validators: []validator.Map{mapvalidator.SizeAtLeast(1)}}
}

var domainSMBIOS = family{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"smbios": schema.SingleNestedAttribute{
			MarkdownDescription: "SMBIOS strings the guest reads from its firmware tables (`/sys/class/dmi/id/...`). A change " +
				"rewrites the definition and restarts a running domain.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"mode": schema.StringAttribute{
					MarkdownDescription: "`sysinfo` (the tables here; what null means when a table is set), `host` (the host's own) or `emulate`.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.OneOf(domainxml.SMBIOSModes...)},
				},
				"bios":   smbiosTable("BIOS strings by libvirt's name: `vendor`, `version`, `date`, `release`."),
				"system": smbiosTable("System strings: `manufacturer`, `product`, `version`, `serial`, `uuid`, `sku`, `family`."),
				"base_board": schema.ListAttribute{
					MarkdownDescription: "Base board tables, in order (a board and its risers), each of strings: `manufacturer`, " +
						"`product`, `version`, `serial`, `asset`, `location`.",
					ElementType: baseBoardType, Optional: true,
					Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueMapsAre(mapvalidator.SizeAtLeast(1))},
				},
				"chassis": smbiosTable("Chassis strings: `manufacturer`, `version`, `serial`, `asset`, `sku`."),
				"oem_strings": schema.ListAttribute{
					MarkdownDescription: "OEM strings (SMBIOS type 11), in order; the guest reads them with `dmidecode -t 11`. " +
						"Tools such as systemd's credentials (`io.systemd.credential:NAME=VALUE`) read configuration from them.",
					ElementType: types.StringType, Optional: true, Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				},
			},
		},
		"fw_cfg": schema.MapAttribute{
			MarkdownDescription: "QEMU fw_cfg entries, name → value, that the guest reads at `/sys/firmware/qemu_fw_cfg/by_name/<name>/raw`. " +
				"Names start with `opt/` (e.g. `opt/com.example/role`); the Ignition entry is `ignition_id`'s. A change rewrites the " +
				"definition and restarts a running domain.",
			ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.SizeAtLeast(1), mapvalidator.KeysAre(stringvalidator.RegexMatches(fwCfgName,
				"must start with opt/ and be at most 55 characters, e.g. opt/com.example/role"))},
		},
		"fw_cfg_files": schema.MapAttribute{
			MarkdownDescription: "QEMU fw_cfg entries whose content QEMU reads from a file on the host (`<entry name=... file=.../>`), " +
				"name → absolute path; names as in `fw_cfg` (which may not hold the same name). An import writes the entries the " +
				"domain has. A change rewrites the definition and restarts a running domain.",
			ElementType: types.StringType, Optional: true,
			Validators: []validator.Map{mapvalidator.SizeAtLeast(1), mapvalidator.KeysAre(stringvalidator.RegexMatches(fwCfgName,
				"must start with opt/ and be at most 55 characters, e.g. opt/com.example/role"))},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.SMBIOS, s.FWCfg, s.FWCfgFiles = &domainxml.SMBIOS{}, map[string]string{}, map[string]string{} // unset: none
		if tfkit.Known(m.OS.FWCfg) {
			s.FWCfg = mapStrings(m.OS.FWCfg)
		}
		if tfkit.Known(m.OS.FWCfgFiles) {
			s.FWCfgFiles = mapStrings(m.OS.FWCfgFiles)
		}
		if t := m.OS.SMBIOS; t != nil {
			s.SMBIOS = &domainxml.SMBIOS{Mode: tfkit.StringOf(t.Mode), BIOS: mapStrings(t.BIOS), System: mapStrings(t.System),
				Chassis: mapStrings(t.Chassis), BaseBoards: baseBoards(t.BaseBoard)}
			if tfkit.Known(t.OEMStrings) {
				s.SMBIOS.OEMStrings = listStrings(t.OEMStrings)
			}
			if s.SMBIOS.Mode == "" && s.SMBIOS.Tables() {
				s.SMBIOS.Mode = "sysinfo"
			}
		}
	},
	// What the domain has (null asks for none: entries there are drift, and what an import
	// writes); mode null while it is the sysinfo that tables without a mode ask for.
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.OS.FWCfg = types.MapNull(types.StringType)
		if len(s.FWCfg) > 0 {
			m.OS.FWCfg = stringMap(s.FWCfg)
		}
		m.OS.FWCfgFiles = types.MapNull(types.StringType)
		if len(s.FWCfgFiles) > 0 {
			m.OS.FWCfgFiles = stringMap(s.FWCfgFiles)
		}
		m.OS.SMBIOS = nil
		if t := s.SMBIOS; t != nil {
			m.OS.SMBIOS = &smbiosModel{Mode: tfkit.StringOrNull(t.Mode), BIOS: optMap(t.BIOS), System: optMap(t.System), Chassis: optMap(t.Chassis),
				BaseBoard: types.ListNull(baseBoardType), OEMStrings: types.ListNull(types.StringType)}
			if len(t.BaseBoards) > 0 {
				boards := make([]attr.Value, len(t.BaseBoards))
				for i, b := range t.BaseBoards {
					boards[i] = stringMap(b)
				}
				m.OS.SMBIOS.BaseBoard = types.ListValueMust(baseBoardType, boards)
			}
			if len(t.OEMStrings) > 0 {
				m.OS.SMBIOS.OEMStrings = tfkit.StringList(t.OEMStrings)
			}
			if t.Mode == "sysinfo" && t.Tables() && (prior.OS.SMBIOS == nil || prior.OS.SMBIOS.Mode.IsNull()) {
				m.OS.SMBIOS.Mode = types.StringNull()
			}
		}
	},
	fillUnknowns: func(m *Model) {
		if m.OS.FWCfg.IsUnknown() {
			m.OS.FWCfg = types.MapNull(types.StringType)
		}
		if m.OS.FWCfgFiles.IsUnknown() {
			m.OS.FWCfgFiles = types.MapNull(types.StringType)
		}
		if t := m.OS.SMBIOS; t != nil {
			tfkit.NullIfUnknown(&t.Mode)
			for _, v := range []*types.Map{&t.BIOS, &t.System, &t.Chassis} {
				if v.IsUnknown() {
					*v = types.MapNull(types.StringType)
				}
			}
			if t.BaseBoard.IsUnknown() {
				t.BaseBoard = types.ListNull(baseBoardType)
			}
			if t.OEMStrings.IsUnknown() {
				t.OEMStrings = types.ListNull(types.StringType)
			}
		}
	},
}

// baseBoards is os.smbios.base_board as tables (nil: none).
func baseBoards(l types.List) []map[string]string {
	if !tfkit.Known(l) {
		return nil
	}
	var out []map[string]string
	for _, v := range l.Elements() {
		if m, ok := v.(types.Map); ok {
			out = append(out, mapStrings(m))
		}
	}
	return out
}

func mapStrings(m types.Map) map[string]string {
	if !tfkit.Known(m) {
		return nil
	}
	out := map[string]string{}
	for k, v := range m.Elements() {
		if s, ok := v.(types.String); ok {
			out[k] = s.ValueString()
		}
	}
	return out
}

// optMap is a map value, null when empty.
func optMap(m map[string]string) types.Map {
	if len(m) == 0 {
		return types.MapNull(types.StringType)
	}
	return stringMap(m)
}
