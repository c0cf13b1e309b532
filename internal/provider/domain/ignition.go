package domain

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// ignition_id: the Ignition config handed to the guest through fw_cfg (domainxml's
// ignition family).
type domainIgnitionModel struct {
	IgnitionID types.String `tfsdk:"ignition_id"`
}

var domainIgnition = family{
	attributes: map[string]schema.Attribute{
		"ignition_id": tfkit.OptionalString("ID of a `libvirt_ignition` (a volume key or `<pool>/<name>`): the file is handed to the guest " +
			"through QEMU's fw_cfg as `opt/com.coreos/config` (`<sysinfo type='fwcfg'>`, libvirt 6.5 or newer), where " +
			"Fedora CoreOS and Flatcar read their Ignition config. Changing it rewrites the definition (a running " +
			"domain is restarted); Ignition itself only runs on a guest's first boot."),
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
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
	fromSpec: func(s domainxml.Spec, _, m *Model) {
		m.IgnitionID = types.StringNull()
		if s.Ignition != nil {
			m.IgnitionID = types.StringValue(s.Ignition.ID)
		}
	},
}
