package domain

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// The graphical console of libvirt_domain: type, listen, port, websocket, keymap and the
// password, kept in state (graphics.password) or write-only (graphics_password_wo beside
// graphics: the framework allows no write-only attribute inside a computed object).

type domainGraphicsModel struct {
	Graphics                  *graphicsModel `tfsdk:"graphics"`
	GraphicsPasswordWO        types.String   `tfsdk:"graphics_password_wo"`
	GraphicsPasswordWOVersion types.Int64    `tfsdk:"graphics_password_wo_version"`
}

type graphicsModel struct {
	Type      types.String `tfsdk:"type"`
	Listen    types.String `tfsdk:"listen"`
	Port      types.Int64  `tfsdk:"port"`
	AutoPort  types.Bool   `tfsdk:"autoport"`
	Websocket types.Int64  `tfsdk:"websocket"`
	Keymap    types.String `tfsdk:"keymap"`
	Password  types.String `tfsdk:"password"`
}

var graphicsAttrTypes = map[string]attr.Type{"type": types.StringType, "listen": types.StringType, "port": types.Int64Type,
	"autoport": types.BoolType, "websocket": types.Int64Type, "keymap": types.StringType, "password": types.StringType}

// tcpPort: -1 (libvirt picks) or a TCP port.
var tcpPort = int64validator.Any(int64validator.OneOf(-1), int64validator.Between(1, 65535))

// listenLibvirtDefault is graphics.listen for a console without a listen address
// (domainxml.Graphics.ListenUnset). Not "": -generate-config-out writes an empty string
// as null, which would be the default 127.0.0.1.
const listenLibvirtDefault = "libvirt-default"

const restartsGraphics = " Changing it rewrites the definition; a running domain is restarted."

var domainGraphics = family{
	attributes: map[string]schema.Attribute{
		"graphics": schema.SingleNestedAttribute{
			MarkdownDescription: "Graphical console. Default `{ type = \"vnc\", listen = \"127.0.0.1\" }`; the port is chosen by libvirt " +
				"(see `console_url`). Only a password change applies to a running domain live; any other change restarts it.",
			Optional: true,
			Computed: true,
			Default: objectdefault.StaticValue(types.ObjectValueMust(graphicsAttrTypes, map[string]attr.Value{
				"type": types.StringValue(domainxml.GraphicsVNC), "listen": types.StringValue(domainxml.DefaultListen),
				"port": types.Int64Value(-1), "autoport": types.BoolValue(true), "websocket": types.Int64Null(),
				"keymap": types.StringNull(), "password": types.StringNull()})),
			Attributes: map[string]schema.Attribute{
				"type": schema.StringAttribute{
					MarkdownDescription: "`vnc` (default), `spice` or `none`. Consoles these attributes cannot say exactly " +
						"(egl-headless, dbus, sdl, a second console, one listening on a socket, a network or none, with a share " +
						"policy, SPICE channels, compression or GL, ...) go into `device_xml`; import puts them there." + restartsGraphics,
					Optional:   true,
					Computed:   true,
					Default:    stringdefault.StaticString(domainxml.GraphicsVNC),
					Validators: []validator.String{stringvalidator.OneOf(domainxml.GraphicsVNC, domainxml.GraphicsSpice, domainxml.GraphicsNone)},
				},
				"listen": schema.StringAttribute{
					MarkdownDescription: "Address the console listens on. Default `127.0.0.1`. `\"" + listenLibvirtDefault + "\"`: no " +
						"address in the definition (`<listen type='address'/>`): the console listens where the host's libvirt " +
						"configuration says (`vnc_listen` / `spice_listen` in qemu.conf); an imported console written that way " +
						"reads so." + restartsGraphics,
					Optional:   true,
					Computed:   true,
					Default:    stringdefault.StaticString(domainxml.DefaultListen),
					Validators: []validator.String{stringvalidator.Any(stringvalidator.OneOf(listenLibvirtDefault), validators.IP())},
				},
				"port": schema.Int64Attribute{
					MarkdownDescription: "Fixed TCP port of the console (VNC: 5900-65535); `-1` (default): libvirt picks a free one at " +
						"each start (`autoport`), which `console_url` shows — the definition keeps `-1`, so the chosen port is " +
						"never drift." + restartsGraphics,
					Optional: true, Computed: true, Default: int64default.StaticInt64(-1),
					Validators: []validator.Int64{tcpPort},
				},
				"autoport": schema.BoolAttribute{
					MarkdownDescription: "libvirt picks the port. Default `true` unless `port` is set; `port` with `autoport = true` " +
						"is an error." + restartsGraphics,
					Optional: true, Computed: true,
					PlanModifiers: []planmodifier.Bool{autoportDefault{}},
				},
				"websocket": schema.Int64Attribute{
					MarkdownDescription: "VNC only: also serve the console over a websocket (for noVNC) on this port; `-1`: libvirt " +
						"picks one. Unset: none." + restartsGraphics,
					Optional: true, Validators: []validator.Int64{tcpPort},
				},
				"keymap": schema.StringAttribute{
					MarkdownDescription: "Keyboard layout QEMU maps keys with, e.g. `en-us`, `de`, `fr-ch`. Unset: QEMU's default." +
						restartsGraphics,
					Optional: true,
					Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^[a-z]{2}(-[a-z]{2})?$`),
						"must be a QEMU keymap name: a language, optionally a region, e.g. \"en-us\", \"de\" or \"fr-ch\"")},
				},
				"password": schema.StringAttribute{
					MarkdownDescription: "Password of the VNC / SPICE console (kept in the state; see `graphics_password_wo` for one " +
						"that is not). Read back from libvirt, so a password changed outside Terraform (`virsh`) shows as a change. " +
						"A change applies to a running domain live (no restart). Conflicts with `graphics_password_wo`. An imported " +
						"domain's password is in the state, but `-generate-config-out` writes sensitive values as `null`: put the " +
						"password (or `graphics_password_wo`) into the generated configuration, or the plan removes it.",
					Optional: true, Sensitive: true,
					Validators: []validator.String{stringvalidator.LengthBetween(1, 1024)},
				},
			},
		},
		"graphics_password_wo": tfkit.WriteOnlyString("Write-only console password: set on the console, never kept in the plan or the "+
			"state (Terraform >= 1.11, OpenTofu >= 1.11). Needs `graphics_password_wo_version`: Terraform cannot compare "+
			"write-only values, so bump the version to apply a new password (live on a running domain). Conflicts with "+
			"`graphics.password`.", stringvalidator.LengthBetween(1, 1024)),
		"graphics_password_wo_version": schema.Int64Attribute{
			MarkdownDescription: "Any number, kept in the state: changing it sets `graphics_password_wo` on the console again (live on " +
				"a running domain, no restart).",
			Optional: true,
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		if m.Graphics == nil {
			return
		}
		g := m.Graphics
		s.Graphics = domainxml.Graphics{Type: g.Type.ValueString(), Listen: g.Listen.ValueString(),
			Port: int(max(g.Port.ValueInt64(), 0)), Websocket: int(g.Websocket.ValueInt64()), Keymap: g.Keymap.ValueString(),
			ListenUnset: g.Listen.ValueString() == listenLibvirtDefault}
		if s.Graphics.ListenUnset {
			s.Graphics.Listen = ""
		}
		switch {
		case !g.Password.IsNull():
			s.Graphics.Password = new(g.Password.ValueString())
		case !m.GraphicsPasswordWOVersion.IsNull():
			// Write-only: the value is only in the configuration (passwordWO); nil keeps it.
			s.Graphics.PasswordVersion = m.GraphicsPasswordWOVersion.String()
		default:
			s.Graphics.Password = new("")
		}
	},
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		g := s.Graphics
		listen := g.Listen
		if g.ListenUnset {
			listen = listenLibvirtDefault
		}
		m.Graphics = &graphicsModel{Type: types.StringValue(g.Type), Listen: types.StringValue(listen), Port: types.Int64Value(-1),
			AutoPort: types.BoolValue(g.Port == 0), Websocket: types.Int64Null(), Keymap: tfkit.StringOrNull(g.Keymap), Password: types.StringNull()}
		if g.Port > 0 {
			m.Graphics.Port = types.Int64Value(int64(g.Port))
		}
		if g.Websocket != 0 {
			m.Graphics.Websocket = types.Int64Value(int64(g.Websocket))
		}
		m.GraphicsPasswordWO, m.GraphicsPasswordWOVersion = types.StringNull(), prior.GraphicsPasswordWOVersion
		if g.Password != nil && prior.GraphicsPasswordWOVersion.IsNull() {
			m.Graphics.Password = tfkit.StringOrNull(*g.Password)
		}
		if g.Type == domainxml.GraphicsNone {
			// Without a console there is nothing to listen on and libvirt stores no address:
			// keep what the configuration said, or (import) the schema's default, so that a
			// config that leaves listen out — a generated one too — plans clean.
			m.Graphics.Listen = types.StringValue(domainxml.DefaultListen)
			if prior.Graphics != nil && tfkit.Known(prior.Graphics.Listen) {
				m.Graphics.Listen = prior.Graphics.Listen
			}
		}
	},
	validate: validateGraphics,
	fillUnknowns: func(m *Model) {
		if m.Graphics != nil && m.Graphics.AutoPort.IsUnknown() {
			m.Graphics.AutoPort = types.BoolValue(m.Graphics.Port.ValueInt64() <= 0)
		}
	},
}

// validateGraphics checks what goes together: port and autoport, websocket and the
// type, the two password forms.
func validateGraphics(m *Model, diags *diag.Diagnostics) {
	if tfkit.Known(m.GraphicsPasswordWO) && m.GraphicsPasswordWOVersion.IsNull() {
		diags.AddAttributeError(path.Root("graphics_password_wo_version"), "graphics_password_wo needs graphics_password_wo_version",
			"Terraform cannot compare write-only values: set graphics_password_wo_version (any number) and change it whenever "+
				"graphics_password_wo changes.")
	}
	g := m.Graphics
	if g == nil {
		return
	}
	at := path.Root("graphics")
	if !g.Password.IsNull() && !m.GraphicsPasswordWO.IsNull() {
		diags.AddAttributeError(at.AtName("password"), "Two console passwords",
			"graphics.password and graphics_password_wo both set the console's password: keep one (graphics_password_wo keeps it "+
				"out of the state).")
	}
	port := g.Port.ValueInt64()
	switch {
	case tfkit.Known(g.Port) && port > 0 && tfkit.Known(g.AutoPort) && g.AutoPort.ValueBool():
		diags.AddAttributeError(at.AtName("autoport"), "port with autoport",
			fmt.Sprintf("graphics sets port = %d and autoport = true: with autoport libvirt picks the port. Remove autoport (a set "+
				"port turns it off) or remove port.", port))
	case tfkit.Known(g.AutoPort) && !g.AutoPort.ValueBool() && tfkit.Known(g.Port) && port <= 0 || g.Port.IsNull() && tfkit.Known(g.AutoPort) && !g.AutoPort.ValueBool():
		diags.AddAttributeError(at.AtName("port"), "autoport = false needs a port",
			"graphics sets autoport = false but no port: set port (VNC: 5900-65535) or remove autoport.")
	}
	typ := g.Type.ValueString()
	if tfkit.Known(g.Port) && port > 0 && port < 5900 && (typ == domainxml.GraphicsVNC || g.Type.IsNull()) {
		diags.AddAttributeError(at.AtName("port"), "VNC port below 5900",
			fmt.Sprintf("graphics port = %d: a VNC port is 5900 + the display number, 5900-65535. Use one in that range.", port))
	}
	if !g.Websocket.IsNull() && tfkit.Known(g.Type) && typ != domainxml.GraphicsVNC {
		diags.AddAttributeError(at.AtName("websocket"), "websocket is for VNC only",
			fmt.Sprintf("graphics type = %q: only a VNC console has a websocket. Remove websocket or use type = \"vnc\".", typ))
	}
	if tfkit.Known(g.Type) && typ == domainxml.GraphicsNone && (!g.Password.IsNull() || !m.GraphicsPasswordWO.IsNull()) {
		diags.AddAttributeError(at.AtName("type"), "A password without a console",
			"graphics type = \"none\" has no console to protect: remove the password or choose vnc or spice.")
	}
}

// autoportDefault: autoport unset is true unless a port is set.
type autoportDefault struct{}

func (autoportDefault) Description(context.Context) string {
	return "autoport defaults to true unless port is set"
}
func (d autoportDefault) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (autoportDefault) PlanModifyBool(ctx context.Context, req planmodifier.BoolRequest, resp *planmodifier.BoolResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	var port types.Int64
	if d := req.Config.GetAttribute(ctx, req.Path.ParentPath().AtName("port"), &port); d.HasError() || port.IsUnknown() {
		return
	}
	resp.PlanValue = types.BoolValue(port.IsNull() || port.ValueInt64() <= 0)
}

// passwordWO puts the write-only console password from the configuration into s when it
// is to be written: at create, and when graphics_password_wo_version changes (prior: the
// state; nil at create). Otherwise s keeps the definition's (Password nil).
func passwordWO(ctx context.Context, config tfsdk.Config, plan, prior *Model, s *domainxml.Spec) diag.Diagnostics {
	if plan.GraphicsPasswordWOVersion.IsNull() || prior != nil && prior.GraphicsPasswordWOVersion.Equal(plan.GraphicsPasswordWOVersion) {
		return nil
	}
	var wo types.String
	diags := config.GetAttribute(ctx, path.Root("graphics_password_wo"), &wo)
	if !diags.HasError() && !wo.IsNull() {
		s.Graphics.Password = new(wo.ValueString())
	}
	return diags
}
