package domainxml

import (
	"slices"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// buildChardevs writes the kinds s manages (or Drop takes back to the default). A device
// at the same position with the same host side keeps what the family does not manage
// (its address, a console's port); the devices the blocks cannot say (untypedChardevs)
// stay as they are.
func buildChardevs(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
	c, dev := s.Chardevs, d.Devices
	serials := c.Serials
	if serials == nil && slices.Contains(c.Drop, KindSerial) {
		serials = []Chardev{{Type: "pty"}}
	}
	if serials != nil {
		dev.Serials = buildSerials(dev.Serials, serials)
		mirrorSerial0(dev, len(serials))
		if base == nil && len(serials) > 0 && !slices.Contains([]string{"", "isa-serial", "system-serial"}, serials[0].TargetType) {
			// libvirt adds the console that mirrors serial 0 for the architecture's own
			// serial only: a fresh definition's (the default one's) goes.
			dev.Consoles = slices.DeleteFunc(dev.Consoles, func(x libvirtxml.DomainConsole) bool { return isSerialConsole(x) && consoleTyped(x) })
		}
	}
	if len(c.Consoles) > 0 || slices.Contains(c.Drop, KindConsole) {
		dev.Consoles = buildConsoles(dev.Consoles, c.Consoles)
	}
	if len(c.Channels) > 0 || slices.Contains(c.Drop, KindChannel) {
		dev.Channels = buildUserChannels(dev.Channels, c.Channels)
	}
	return nil
}

// buildSerials writes want at ports 0, 1, ... and keeps old's untyped serials after them.
func buildSerials(old []libvirtxml.DomainSerial, want []Chardev) []libvirtxml.DomainSerial {
	var typed, untyped []libvirtxml.DomainSerial
	for i, ok := range typedSerials(old) {
		if ok {
			typed = append(typed, old[i])
		} else {
			untyped = append(untyped, old[i])
		}
	}
	out := make([]libvirtxml.DomainSerial, 0, len(want)+len(untyped))
	for i, w := range want {
		port := uint(i)
		x := libvirtxml.DomainSerial{Source: chardevSource(w), Log: chardevLog(w), Target: &libvirtxml.DomainSerialTarget{Type: w.TargetType, Port: &port}}
		if m := serialModels[w.TargetType]; len(m) == 1 {
			x.Target.Model = &libvirtxml.DomainSerialTargetModel{Name: m[0]} // what libvirt writes
		}
		if i < len(typed) && sameHost(typed[i].Source, w) {
			x.Protocol, x.Address, x.Alias = typed[i].Protocol, typed[i].Address, typed[i].Alias
			if t := typed[i].Target; t != nil && (w.TargetType == "" || t.Type == w.TargetType) {
				x.Target.Type, x.Target.Model = t.Type, t.Model
			}
		}
		out = append(out, x)
	}
	return append(out, untyped...)
}

// mirrorSerial0 makes the console that aliases serial port 0 show its new host side, as
// libvirt would on define (a stale copy would read back as something else until then);
// typed is how many of the serials (the first) the family wrote. Without any serial
// port, the typed consoles that aliased one go (the default pty serial's, on a fresh
// definition); one that mirrors an untyped serial 0 stays as it is.
func mirrorSerial0(dev *libvirtxml.DomainDeviceList, typed int) {
	if len(dev.Serials) == 0 {
		dev.Consoles = slices.DeleteFunc(dev.Consoles, func(x libvirtxml.DomainConsole) bool {
			return isSerialConsole(x) && consoleTyped(x)
		})
		return
	}
	if typed == 0 {
		return
	}
	for i := range dev.Consoles {
		if isSerialConsole(dev.Consoles[i]) {
			s0 := dev.Serials[0]
			dev.Consoles[i].Source, dev.Consoles[i].Log, dev.Consoles[i].Protocol, dev.Consoles[i].TTY = s0.Source, s0.Log, s0.Protocol, ""
		}
	}
}

// buildConsoles keeps the consoles that alias serial 0 and the untyped ones, and
// replaces the others; one at the same place with the same host side keeps its port.
func buildConsoles(old []libvirtxml.DomainConsole, want []Chardev) []libvirtxml.DomainConsole {
	var out, others, untyped []libvirtxml.DomainConsole
	for _, x := range old {
		switch {
		case isSerialConsole(x):
			out = append(out, x)
		case !consoleTyped(x):
			untyped = append(untyped, x)
		default:
			others = append(others, x)
		}
	}
	for i, w := range want {
		x := libvirtxml.DomainConsole{Source: chardevSource(w), Log: chardevLog(w), Target: &libvirtxml.DomainConsoleTarget{Type: orVirtio(w.TargetType)}}
		if i < len(others) && sameHost(others[i].Source, w) {
			x.Protocol, x.Address, x.Alias = others[i].Protocol, others[i].Address, others[i].Alias
			if others[i].Target != nil {
				x.Target.Port = others[i].Target.Port
			}
		}
		if x.Target.Port == nil { // the port libvirt gives it: one past the highest so far
			port := uint(0)
			for _, o := range slices.Concat(out, untyped) {
				if o.Target != nil && o.Target.Port != nil && *o.Target.Port >= port {
					port = *o.Target.Port + 1
				}
			}
			x.Target.Port = &port
		}
		out = append(out, x)
	}
	return append(out, untyped...)
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
		src := chardevSource(w)
		if w.Type == "unix" && w.Path == "" {
			src.UNIX.Mode = "" // a socket libvirt places: it prints no <source> (bind)
		}
		x := libvirtxml.DomainChannel{Source: src, Log: chardevLog(w),
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
		return Chardev{Type: "pty"}, len(src.Pty.SecLabel) == 0 // its path is the pty libvirt opened
	case src.TCP != nil:
		port, err := strconv.ParseUint(src.TCP.Service, 10, 16)
		mode := src.TCP.Mode
		if mode == "" {
			mode = "connect" // libvirt's default
		}
		return Chardev{Type: "tcp", Host: src.TCP.Host, Port: uint(port), Mode: mode}, err == nil && src.TCP.TLS == "" && src.TCP.Reconnect == nil
	case src.UNIX != nil:
		return Chardev{Type: "unix", Path: src.UNIX.Path, Mode: src.UNIX.Mode}, src.UNIX.Reconnect == nil && len(src.UNIX.SecLabel) == 0
	case src.File != nil:
		return Chardev{Type: "file", Path: src.File.Path}, src.File.Append == "" && len(src.File.SecLabel) == 0
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

// untypedChardevs: the chardev family's untyped hook (device_xml_adopt.go): the serials,
// consoles and channels the blocks cannot say exactly, in l's order.
func untypedChardevs(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for i, ok := range typedSerials(l.Serials) {
		if !ok {
			out.Serials = append(out.Serials, l.Serials[i])
		}
	}
	for _, x := range l.Consoles {
		if !consoleTyped(x) {
			out.Consoles = append(out.Consoles, x)
		}
	}
	for _, x := range l.Channels {
		if _, ok := channelSpec(x); !ok && !isAgentChannel(x) && x.Target != nil {
			out.Channels = append(out.Channels, x)
		}
	}
	return &out
}

// serialModels are the target models libvirt gives each serial target type (what it
// prints when none is written); system-serial's depends on the machine (pl011 on ARM's
// virt, 16550a on RISC-V's).
var serialModels = map[string][]string{
	"isa-serial": {"isa-serial"}, "usb-serial": {"usb-serial"}, "pci-serial": {"pci-serial"},
	"spapr-vio-serial": {"spapr-vty"}, "system-serial": {"pl011", "16550a"}, "sclp-serial": {"sclpconsole", "sclplmconsole"},
	"isa-debug": {"isa-debugcon"},
}

// typedSerials says which of l the serial blocks say exactly: a host side they type
// (chardevForm), a target model that is the target type's own, and the port the block's
// position among the typed ones gives it (0, 1, ...).
func typedSerials(l []libvirtxml.DomainSerial) []bool {
	out := make([]bool, len(l))
	k := uint(0)
	for i, x := range l {
		ok := chardevForm(x.Source, x.Log, x.Protocol)
		if t := x.Target; ok && t != nil {
			ok = (t.Port == nil || *t.Port == k) && (t.Model == nil || slices.Contains(serialModels[t.Type], t.Model.Name))
		}
		if ok {
			k++
		}
		out[i] = ok
	}
	return out
}

// chardevForm says whether a host side, log and protocol are what a block says.
func chardevForm(src *libvirtxml.DomainChardevSource, log *libvirtxml.DomainChardevLog, proto *libvirtxml.DomainChardevProtocol) bool {
	_, ok := sourceSpec(src)
	_, lok := logSpec(log)
	return ok && lok && (proto == nil || proto.Type == "raw")
}

// consoleTyped says whether the console blocks (or, for the console that aliases serial
// 0, the serial blocks) say x exactly.
func consoleTyped(x libvirtxml.DomainConsole) bool {
	if !chardevForm(x.Source, x.Log, x.Protocol) {
		return false
	}
	return isSerialConsole(x) || slices.Contains(ConsoleTargetTypes, x.Target.Type)
}

// parseChardevs reads the serials, consoles and channels the blocks say (the others are
// device_xml's: untypedChardevs). No typed serial port reads as an empty list (none: a
// fresh definition's default one would be one too many), the default pty one as nil.
// The serials keep libvirt's target type (isa-serial on x86): the provider shows it only
// where the configuration wrote it.
func parseChardevs(d *libvirtxml.Domain, p *Parsed, _ *record) {
	if d.Devices == nil {
		return
	}
	c := &p.Spec.Chardevs
	c.Serials = []Chardev{}
	for i, ok := range typedSerials(d.Devices.Serials) {
		if !ok {
			continue
		}
		x := d.Devices.Serials[i]
		w, _ := sourceSpec(x.Source)
		w.LogFile, _ = logSpec(x.Log)
		if x.Target != nil {
			w.TargetType = x.Target.Type
		}
		c.Serials = append(c.Serials, w)
	}
	if DefaultSerials(c.Serials) {
		c.Serials = nil
	}
	for _, x := range d.Devices.Consoles {
		if isSerialConsole(x) || !consoleTyped(x) {
			continue
		}
		w, _ := sourceSpec(x.Source)
		w.LogFile, _ = logSpec(x.Log)
		w.TargetType = x.Target.Type
		c.Consoles = append(c.Consoles, w)
	}
	for _, x := range d.Devices.Channels {
		w, ok := channelSpec(x)
		if ok && !isAgentChannel(x) {
			c.Channels = append(c.Channels, w)
		}
	}
}
