package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/validators"
)

// The small families of libvirt_domain: the graphical console, the guest-agent channel
// and the Ignition config.

type domainGraphicsModel struct {
	Graphics *graphicsModel `tfsdk:"graphics"`
}

type graphicsModel struct {
	Type   types.String `tfsdk:"type"`
	Listen types.String `tfsdk:"listen"`
}

var graphicsAttrTypes = map[string]attr.Type{"type": types.StringType, "listen": types.StringType}

var domainGraphics = domainFamily{
	attributes: map[string]schema.Attribute{
		"graphics": schema.SingleNestedAttribute{
			MarkdownDescription: "Graphical console. Default `{ type = \"vnc\", listen = \"127.0.0.1\" }`; the port is chosen by libvirt " +
				"(see `console_url`).",
			Optional: true,
			Computed: true,
			Default: objectdefault.StaticValue(types.ObjectValueMust(graphicsAttrTypes, map[string]attr.Value{
				"type": types.StringValue(domainxml.GraphicsVNC), "listen": types.StringValue(domainxml.DefaultListen)})),
			Attributes: map[string]schema.Attribute{
				"type": schema.StringAttribute{
					MarkdownDescription: "`vnc` (default), `spice` or `none`.",
					Optional:            true,
					Computed:            true,
					Default:             stringdefault.StaticString(domainxml.GraphicsVNC),
					Validators:          []validator.String{stringvalidator.OneOf(domainxml.GraphicsVNC, domainxml.GraphicsSpice, domainxml.GraphicsNone)},
				},
				"listen": schema.StringAttribute{
					MarkdownDescription: "Address the console listens on. Default `127.0.0.1`.",
					Optional:            true,
					Computed:            true,
					Default:             stringdefault.StaticString(domainxml.DefaultListen),
					Validators:          []validator.String{validators.IP()},
				},
			},
		},
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		if m.Graphics != nil {
			s.Graphics = domainxml.Graphics{Type: m.Graphics.Type.ValueString(), Listen: m.Graphics.Listen.ValueString()}
		}
	},
	fromSpec: func(s domainxml.Spec, prior, m *domainModel) {
		m.Graphics = &graphicsModel{Type: types.StringValue(s.Graphics.Type), Listen: types.StringValue(s.Graphics.Listen)}
		if s.Graphics.Type == domainxml.GraphicsNone {
			// Without a console there is nothing to listen on and libvirt stores no address:
			// keep what the configuration said, or (import) the schema's default, so that a
			// config that leaves listen out — a generated one too — plans clean.
			m.Graphics.Listen = types.StringValue(domainxml.DefaultListen)
			if prior.Graphics != nil && known(prior.Graphics.Listen) {
				m.Graphics.Listen = prior.Graphics.Listen
			}
		}
	},
}

type domainAgentModel struct {
	QemuAgent types.Bool `tfsdk:"qemu_agent"`
}

var domainAgent = domainFamily{
	attributes: map[string]schema.Attribute{
		"qemu_agent": optionalBool("Add the QEMU guest-agent channel (virtio-serial `org.qemu.guest_agent.0`). Default `true`. Needed "+
			"for `wait_for_ip` with `source = \"agent\"` and used for graceful shutdown.", true),
	},
	toSpec:   func(m *domainModel, s *domainxml.Spec) { s.QemuAgent = m.QemuAgent.ValueBool() },
	fromSpec: func(s domainxml.Spec, _, m *domainModel) { m.QemuAgent = types.BoolValue(s.QemuAgent) },
}

type domainIgnitionModel struct {
	IgnitionID types.String `tfsdk:"ignition_id"`
}

var domainIgnition = domainFamily{
	attributes: map[string]schema.Attribute{
		"ignition_id": optionalString("ID of a `libvirt_ignition` (a volume key or `<pool>/<name>`): the file is handed to the guest " +
			"through QEMU's fw_cfg as `opt/com.coreos/config` (`<sysinfo type='fwcfg'>`, libvirt 6.5 or newer), where " +
			"Fedora CoreOS and Flatcar read their Ignition config. Changing it rewrites the definition (a running " +
			"domain is restarted); Ignition itself only runs on a guest's first boot."),
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		if !m.IgnitionID.IsNull() {
			s.Ignition = &domainxml.Ignition{ID: m.IgnitionID.ValueString()}
		}
	},
	resolve: func(ctx context.Context, c *libvirt.Client, s *domainxml.Spec) error {
		if s.Ignition == nil {
			return nil
		}
		p, _, err := c.DiskSource(ctx, s.Ignition.ID, "")
		if err != nil {
			return fmt.Errorf("ignition_id: %w", err)
		}
		s.Ignition.Path = p
		return nil
	},
	fromSpec: func(s domainxml.Spec, _, m *domainModel) {
		m.IgnitionID = types.StringNull()
		if s.Ignition != nil {
			m.IgnitionID = types.StringValue(s.Ignition.ID)
		}
	},
}
