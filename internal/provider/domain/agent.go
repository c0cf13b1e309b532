package domain

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// qemu_agent: the guest-agent channel (domainxml's agent family).

type domainAgentModel struct {
	QemuAgent types.Bool `tfsdk:"qemu_agent"`
}

var domainAgent = family{
	attributes: map[string]schema.Attribute{
		"qemu_agent": tfkit.OptionalBool("Add the QEMU guest-agent channel (virtio-serial `org.qemu.guest_agent.0`). Default `true`. Needed "+
			"for `wait_for_ip` with `source = \"agent\"` and used for graceful shutdown.", true),
	},
	toSpec:   func(m *Model, s *domainxml.Spec) { s.QemuAgent = m.QemuAgent.ValueBool() },
	fromSpec: func(s domainxml.Spec, _, m *Model) { m.QemuAgent = types.BoolValue(s.QemuAgent) },
}
