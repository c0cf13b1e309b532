package domainxml

import (
	"slices"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// buildChardevs writes the kinds s manages (or Drop takes back to the default). A device
// at the same position with the same host side keeps what the family does not manage
// (its address, a tcp protocol such as telnet, a serial's target model).
func buildChardevs(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
	c, dev := s.Chardevs, d.Devices
	serials := c.Serials
	if len(serials) == 0 && slices.Contains(c.Drop, KindSerial) {
		serials = []Chardev{{Type: "pty"}}
	}
	if len(serials) > 0 {
		dev.Serials = buildSerials(dev.Serials, serials)
		mirrorSerial0(dev)
	}
	if len(c.Consoles) > 0 || slices.Contains(c.Drop, KindConsole) {
		dev.Consoles = buildConsoles(dev.Consoles, c.Consoles)
	}
	if len(c.Channels) > 0 || slices.Contains(c.Drop, KindChannel) {
		dev.Channels = buildUserChannels(dev.Channels, c.Channels)
	}
	return nil
}

func buildSerials(old []libvirtxml.DomainSerial, want []Chardev) []libvirtxml.DomainSerial {
	out := make([]libvirtxml.DomainSerial, len(want))
	for i, w := range want {
		port := uint(i)
		x := libvirtxml.DomainSerial{Source: chardevSource(w), Log: chardevLog(w), Target: &libvirtxml.DomainSerialTarget{Type: w.TargetType, Port: &port}}
		if i < len(old) && sameHost(old[i].Source, w) {
			x.Protocol, x.Address, x.Alias = old[i].Protocol, old[i].Address, old[i].Alias
			if t := old[i].Target; t != nil && (w.TargetType == "" || t.Type == w.TargetType) {
				x.Target.Type, x.Target.Model = t.Type, t.Model
			}
		}
		out[i] = x
	}
	return out
}

// mirrorSerial0 makes the console that aliases serial port 0 show its new host side, as
// libvirt would on define (a stale copy would read back as something else until then).
func mirrorSerial0(dev *libvirtxml.DomainDeviceList) {
	for i := range dev.Consoles {
		if isSerialConsole(dev.Consoles[i]) {
			s0 := dev.Serials[0]
			dev.Consoles[i].Source, dev.Consoles[i].Log, dev.Consoles[i].Protocol, dev.Consoles[i].TTY = s0.Source, s0.Log, s0.Protocol, ""
		}
	}
}

// buildConsoles keeps the consoles that alias serial 0 and replaces the others.
func buildConsoles(old []libvirtxml.DomainConsole, want []Chardev) []libvirtxml.DomainConsole {
	var out, others []libvirtxml.DomainConsole
	for _, x := range old {
		if isSerialConsole(x) {
			out = append(out, x)
		} else {
			others = append(others, x)
		}
	}
	for i, w := range want {
		x := libvirtxml.DomainConsole{Source: chardevSource(w), Log: chardevLog(w), Target: &libvirtxml.DomainConsoleTarget{Type: orVirtio(w.TargetType)}}
		if i < len(others) && sameHost(others[i].Source, w) {
			x.Protocol, x.Address, x.Alias = others[i].Protocol, others[i].Address, others[i].Alias
		}
		out = append(out, x)
	}
	return out
}

// buildUserChannels keeps the guest-agent channel (agent.go's) and the channels this
// family cannot describe, and writes the user's after them; one on the same port name
// and host side keeps its virtio-serial address.
func buildUserChannels(old []libvirtxml.DomainChannel, want []Chardev) []libvirtxml.DomainChannel {
	var out []libvirtxml.DomainChannel
	byName := map[string]libvirtxml.DomainChannel{}
	for _, x := range old {
		if _, ok := channelSpec(x); !ok || isAgentChannel(x) {
			out = append(out, x)
			continue
		}
		byName[x.Target.VirtIO.Name] = x
	}
	for _, w := range want {
		x := libvirtxml.DomainChannel{Source: chardevSource(w), Log: chardevLog(w),
			Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: w.TargetName}}}
		if o, ok := byName[w.TargetName]; ok && sameHost(o.Source, w) {
			x.Protocol, x.Address, x.Alias = o.Protocol, o.Address, o.Alias
		}
		out = append(out, x)
	}
	return out
}

func orVirtio(t string) string {
	if t == "" {
		return "virtio"
	}
	return t
}

func chardevSource(w Chardev) *libvirtxml.DomainChardevSource {
	switch w.Type {
	case "pty":
		return &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}
	case "tcp":
		return &libvirtxml.DomainChardevSource{TCP: &libvirtxml.DomainChardevSourceTCP{Mode: w.Mode, Host: w.Host, Service: strconv.FormatUint(uint64(w.Port), 10)}}
	case "unix":
		mode := w.Mode
		if mode == "" {
			mode = "bind"
		}
		return &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: mode, Path: w.Path}}
	case "file":
		return &libvirtxml.DomainChardevSource{File: &libvirtxml.DomainChardevSourceFile{Path: w.Path}}
	case "null":
		return &libvirtxml.DomainChardevSource{Null: &libvirtxml.DomainChardevSourceNull{}}
	default: // spicevmc (validate allows nothing else)
		return &libvirtxml.DomainChardevSource{SpiceVMC: &libvirtxml.DomainChardevSourceSpiceVMC{}}
	}
}

func chardevLog(w Chardev) *libvirtxml.DomainChardevLog {
	if w.LogFile == "" {
		return nil
	}
	return &libvirtxml.DomainChardevLog{File: w.LogFile}
}

// sameHost says src is still the host side w describes (a kept device keeps its extras).
func sameHost(src *libvirtxml.DomainChardevSource, w Chardev) bool {
	got, ok := sourceSpec(src)
	return ok && got.Type == w.Type && got.Path == w.Path && got.Host == w.Host && got.Port == w.Port
}

// sourceSpec reads a host side this family can describe; ok false for the others
// (dev, pipe, udp, stdio, vc, spiceport, nmdm, qemu-vdagent).
func sourceSpec(src *libvirtxml.DomainChardevSource) (Chardev, bool) {
	switch {
	case src == nil:
		return Chardev{}, false
	case src.Pty != nil:
		return Chardev{Type: "pty"}, true // its path is the pty libvirt opened
	case src.TCP != nil:
		port, err := strconv.ParseUint(src.TCP.Service, 10, 16)
		mode := src.TCP.Mode
		if mode == "" {
			mode = "connect" // libvirt's default
		}
		return Chardev{Type: "tcp", Host: src.TCP.Host, Port: uint(port), Mode: mode}, err == nil && src.TCP.TLS == "" && src.TCP.Reconnect == nil
	case src.UNIX != nil:
		return Chardev{Type: "unix", Path: src.UNIX.Path, Mode: src.UNIX.Mode}, src.UNIX.Reconnect == nil
	case src.File != nil:
		return Chardev{Type: "file", Path: src.File.Path}, src.File.Append == ""
	case src.Null != nil:
		return Chardev{Type: "null"}, true
	case src.SpiceVMC != nil:
		return Chardev{Type: "spicevmc"}, true
	}
	return Chardev{}, false
}

func logSpec(l *libvirtxml.DomainChardevLog) (string, bool) {
	if l == nil {
		return "", true
	}
	return l.File, l.Append == ""
}

func isSerialConsole(x libvirtxml.DomainConsole) bool {
	return x.Target == nil || x.Target.Type == "" || x.Target.Type == "serial"
}

// channelSpec reads a virtio channel; ok false for what this family cannot describe
// (guestfwd and xen targets, other host sides). A unix channel without a source is one
// whose socket libvirt places (the agent's).
func channelSpec(x libvirtxml.DomainChannel) (Chardev, bool) {
	if x.Target == nil || x.Target.VirtIO == nil {
		return Chardev{}, false
	}
	c, ok := Chardev{Type: "unix"}, true
	if x.Source != nil {
		c, ok = sourceSpec(x.Source)
	}
	lf, lok := logSpec(x.Log)
	c.LogFile, c.TargetType, c.TargetName = lf, "virtio", x.Target.VirtIO.Name
	return c, ok && lok && (x.Protocol == nil || x.Protocol.Type == "raw")
}

// parseChardevs reads every kind whose devices it can all describe (a kind with one it
// cannot is left unmanaged: kept as it is); channels one by one. The serials keep
// libvirt's target type (isa-serial on x86): the provider shows it only where the
// configuration wrote it.
func parseChardevs(d *libvirtxml.Domain, p *Parsed, _ *record) {
	if d.Devices == nil {
		return
	}
	c := &p.Spec.Chardevs
	for _, x := range d.Devices.Serials {
		w, ok := sourceSpec(x.Source)
		lf, lok := logSpec(x.Log)
		if !ok || !lok || x.Protocol != nil && x.Protocol.Type != "raw" {
			c.Serials = nil
			break
		}
		w.LogFile = lf
		if x.Target != nil {
			w.TargetType = x.Target.Type
		}
		c.Serials = append(c.Serials, w)
	}
	if DefaultSerials(c.Serials) {
		c.Serials = nil
	}
	for _, x := range d.Devices.Consoles {
		if isSerialConsole(x) {
			continue
		}
		w, ok := sourceSpec(x.Source)
		lf, lok := logSpec(x.Log)
		if !ok || !lok || x.Protocol != nil && x.Protocol.Type != "raw" {
			c.Consoles = nil
			break
		}
		w.LogFile, w.TargetType = lf, x.Target.Type
		c.Consoles = append(c.Consoles, w)
	}
	for _, x := range d.Devices.Channels {
		w, ok := channelSpec(x)
		if ok && !isAgentChannel(x) {
			c.Channels = append(c.Channels, w)
		}
	}
}
