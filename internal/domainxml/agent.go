package domainxml

import "libvirt.org/go/libvirtxml"

// The QEMU guest agent's channel (qemu_agent): a virtio-serial port named
// org.qemu.guest_agent.0 on a unix socket libvirt places.

var agentFamily = family{
	name:     "qemu_agent",
	validate: func(*Spec) error { return nil },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.Devices.Channels = buildChannels(d.Devices.Channels, s.QemuAgent)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.Devices == nil {
			return
		}
		for _, c := range d.Devices.Channels {
			if isAgentChannel(c) {
				p.Spec.QemuAgent = true
				p.AgentConnected = c.Target.VirtIO.State == "connected"
			}
		}
	},
	same:   func(a, b Spec) bool { return a.QemuAgent == b.QemuAgent },
	derive: deriveAgentChannel,
}

// deriveAgentChannel leaves the agent's socket path to libvirt (a source's definition
// may name the one libvirt placed under the source's own directory) and drops its alias.
func deriveAgentChannel(d *libvirtxml.Domain, _ *CloneSpec) error {
	for i := range d.Devices.Channels {
		c := &d.Devices.Channels[i]
		if !isAgentChannel(*c) {
			continue // chardev.go's
		}
		if c.Source != nil && c.Source.UNIX != nil {
			c.Source.UNIX.Path = ""
		}
		c.Alias = nil
	}
	return nil
}

func buildChannels(existing []libvirtxml.DomainChannel, agent bool) []libvirtxml.DomainChannel {
	var out []libvirtxml.DomainChannel
	have := false
	for _, c := range existing {
		if isAgentChannel(c) {
			if !agent || have {
				continue
			}
			have = true
		}
		out = append(out, c)
	}
	if agent && !have {
		out = append(out, libvirtxml.DomainChannel{
			// A socket libvirt places (bind mode): libvirt prints no <source> for it.
			Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{}},
			Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: AgentChannel}},
		})
	}
	return out
}

func isAgentChannel(c libvirtxml.DomainChannel) bool {
	return c.Target != nil && c.Target.VirtIO != nil && c.Target.VirtIO.Name == AgentChannel
}
