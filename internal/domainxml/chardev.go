package domainxml

import (
	"errors"
	"fmt"
	"path"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Character devices: the serial ports, the consoles and the channels (serial, console
// and channel blocks). Each kind is managed only when the spec has it (a non-nil list):
// left out (nil), the definition keeps what it has — for a fresh one the default pty
// serial port and the console libvirt makes mirror it, and the guest-agent channel
// (agent.go) — unless Drop names the kind: the previous spec had it, so it goes back to
// that default (the pty serial; no further consoles; no channels but the agent's). An
// empty, non-nil Serials is "no serial ports" (what parse reads from a domain that has
// none): build takes away the default one and the console that mirrors it.
//
// libvirt keeps a console with target type serial as an alias of serial port 0 (on x86
// it adds one whenever there is an isa serial): that console is not one of Consoles, it
// follows the serials. Consoles are the further ones (virtio).
//
// What the blocks cannot say exactly is the device_xml family's (the untyped hook,
// untypedChardevs): a serial, console or channel whose host side is of another type
// (dev, pipe, udp, stdio, vc, spiceport, nmdm, qemu-vdagent, dbus) or has what the
// blocks do not say (a seclabel, TLS, reconnect, append, a protocol but raw, a serial
// target model other than the target type's own), a serial whose port is not its
// position among the typed ones, a channel that is not a virtio one. Parse skips them,
// build keeps them where the definition has them, and import escapes them whole.

// Chardev kinds, as Drop names them.
const (
	KindSerial  = "serial"
	KindConsole = "console"
	KindChannel = "channel"
)

// Enumerations libvirt 9 accepts (the provider's validators use the same lists).
var (
	ChardevTypes       = []string{"pty", "tcp", "unix", "file", "null", "spicevmc"}
	ChardevModes       = []string{"bind", "connect"}
	SerialTargetTypes  = []string{"isa-serial", "usb-serial", "pci-serial", "spapr-vio-serial", "system-serial", "sclp-serial", "isa-debug"}
	ConsoleTargetTypes = []string{"virtio", "sclp", "sclplm"}
	ChannelTargetTypes = []string{"virtio"}
)

// Chardev is one serial port, console or channel: its host side (Type and what the type
// needs), its log file and its guest side (TargetType, and a channel's TargetName).
type Chardev struct {
	Type       string // pty, tcp, unix, file, null, spicevmc
	Path       string // unix, file
	Host       string // tcp
	Port       uint   // tcp
	Mode       string // tcp, unix: bind or connect (empty for unix: bind)
	LogFile    string
	TargetType string // empty: libvirt's (isa-serial on x86) for a serial, virtio otherwise
	TargetName string // a virtio channel's port name
}

// Chardevs are the character devices the user manages; a nil kind keeps the definition's.
type Chardevs struct {
	Serials  []Chardev
	Consoles []Chardev
	Channels []Chardev
	// Drop are the kinds to take back to the default although nil here: the domain's
	// previous spec had them (DroppedChardevs). Not part of what a spec wants.
	Drop []string
}

func (c Chardevs) kinds() []string {
	var out []string
	if c.Serials != nil { // [] too: no serial ports
		out = append(out, KindSerial)
	}
	if len(c.Consoles) > 0 {
		out = append(out, KindConsole)
	}
	if len(c.Channels) > 0 {
		out = append(out, KindChannel)
	}
	return out
}

// DroppedChardevs are the kinds old manages and next does not: what an update from old
// to next takes back to the default (next's Drop).
func DroppedChardevs(old, next Chardevs) []string {
	var out []string
	for _, k := range old.kinds() {
		if !slices.Contains(next.kinds(), k) {
			out = append(out, k)
		}
	}
	return out
}

// DefaultSerials says ss is what a fresh definition has: one pty serial port, no log,
// libvirt's target for the architecture (isa-serial on x86, system-serial — a pl011 — on
// ARM's virt machine). Parse reads it as no serials (a spec that leaves serials out).
func DefaultSerials(ss []Chardev) bool {
	return len(ss) == 1 && ss[0] == Chardev{Type: "pty", TargetType: ss[0].TargetType} &&
		(ss[0].TargetType == "" || ss[0].TargetType == "isa-serial" || ss[0].TargetType == "system-serial")
}

var chardevFamily = family{
	name:     "chardev",
	untyped:  untypedChardevs, // chardev_xml.go
	validate: func(s *Spec) error { return ValidateChardevs(s.Chardevs, s.QemuAgent) },
	build:    buildChardevs,
	parse:    parseChardevs,
	same: func(a, b Spec) bool {
		x, y := a.Chardevs.normal(), b.Chardevs.normal()
		return (x.Serials == nil) == (y.Serials == nil) && slices.Equal(x.Serials, y.Serials) && slices.Equal(x.Consoles, y.Consoles) && slices.Equal(x.Channels, y.Channels)
	},
	derive: deriveChardevs,
}

// deriveChardevs gives a clone its own of what a serial port, console or channel opens
// on the host for one domain alone: a unix socket it listens on, a file it writes (its
// output, its log) and a TCP port it listens on. A serial's or console's socket and
// files get the clone's name in front of their file name (same directory; the console
// that mirrors serial 0 gets the same); a channel's listening socket path is left to
// libvirt (it places one per domain), as for the agent's (agent.go); a listening TCP
// port, which libvirt cannot choose, becomes a pty (virsh console still reaches it). A
// socket or port it connects to is a service of the host's, shared as it is.
func deriveChardevs(d *libvirtxml.Domain, s *CloneSpec) error {
	dev := d.Devices
	for i := range dev.Serials {
		x := &dev.Serials[i]
		x.Source, x.Protocol = deriveChardev(x.Source, x.Protocol, x.Log, s.Name, false)
	}
	for i := range dev.Consoles {
		x := &dev.Consoles[i]
		x.Source, x.Protocol = deriveChardev(x.Source, x.Protocol, x.Log, s.Name, false)
	}
	for i := range dev.Channels {
		x := &dev.Channels[i]
		if isAgentChannel(*x) {
			continue
		}
		x.Source, x.Protocol = deriveChardev(x.Source, x.Protocol, x.Log, s.Name, true)
		x.Alias = nil
	}
	return nil
}

// deriveChardev is the clone's host side of one character device (deriveChardevs) and
// its protocol; it renames log's file in place.
func deriveChardev(src *libvirtxml.DomainChardevSource, proto *libvirtxml.DomainChardevProtocol, log *libvirtxml.DomainChardevLog,
	name string, channel bool) (*libvirtxml.DomainChardevSource, *libvirtxml.DomainChardevProtocol) {
	if log != nil && log.File != "" {
		log.File = cloneHostPath(log.File, name)
	}
	switch {
	case src == nil:
	case src.UNIX != nil && channel:
		if src.UNIX.Mode != "connect" {
			src.UNIX.Path = ""
		}
	case src.UNIX != nil && src.UNIX.Mode == "bind" && src.UNIX.Path != "":
		src.UNIX.Path = cloneHostPath(src.UNIX.Path, name)
	case src.File != nil && src.File.Path != "":
		src.File.Path = cloneHostPath(src.File.Path, name)
	case src.TCP != nil && src.TCP.Mode == "bind" && src.TCP.Service != "" && src.TCP.Service != "0":
		return &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}, nil
	}
	return src, proto
}

// cloneHostPath is a clone's own file beside the source's p: the clone's name in front
// of its file name (/var/log/web-serial.log: /var/log/web2-web-serial.log).
func cloneHostPath(p, name string) string {
	dir, file := path.Split(p)
	return dir + name + "-" + file
}

// normal is c as same compares it: serials left out and the default pty one alike (what
// a fresh definition gets; an empty list, no serial ports, is not that), a unix socket's
// mode spelled out.
func (c Chardevs) normal() Chardevs {
	n := Chardevs{Serials: slices.Clone(c.Serials), Consoles: slices.Clone(c.Consoles), Channels: slices.Clone(c.Channels)}
	if DefaultSerials(n.Serials) {
		n.Serials = nil
	}
	for _, l := range [][]Chardev{n.Serials, n.Consoles, n.Channels} {
		for i := range l {
			if l[i].Type == "unix" && l[i].Mode == "" {
				l[i].Mode = "bind"
			}
		}
	}
	return n
}

// ValidateChardevs checks c (agent: qemu_agent is on), naming the block and what to fix.
func ValidateChardevs(c Chardevs, agent bool) error {
	var errs []error
	check := func(kind string, list []Chardev, targets []string) {
		for i, d := range list {
			if err := validateChardev(d, targets, kind == KindChannel); err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", kind, i, err))
			}
		}
	}
	check(KindSerial, c.Serials, SerialTargetTypes)
	check(KindConsole, c.Consoles, ConsoleTargetTypes)
	check(KindChannel, c.Channels, ChannelTargetTypes)
	for i, d := range c.Serials {
		if d.TargetName != "" {
			errs = append(errs, fmt.Errorf("serial[%d]: target_name is for channels; remove it", i))
		}
	}
	for i, d := range c.Consoles {
		if d.TargetName != "" {
			errs = append(errs, fmt.Errorf("console[%d]: target_name is for channels; remove it", i))
		}
	}
	for i, d := range c.Channels {
		switch d.TargetName {
		case "":
			errs = append(errs, fmt.Errorf("channel[%d]: target_name is required (the virtio-serial port name the guest sees, e.g. org.example.port.0)", i))
		case AgentChannel:
			// The agent family owns every channel of that name (it reads one as qemu_agent = true).
			errs = append(errs, fmt.Errorf("channel[%d]: target_name %s is the guest-agent channel, which qemu_agent = true (%v here) adds itself: "+
				"remove this channel entry and use qemu_agent", i, AgentChannel, agent))
		}
	}
	return errors.Join(errs...)
}

// validateChardev checks one character device; channel says it is a <channel>, whose
// unix socket libvirt places itself when no path is given (a serial or console needs one).
func validateChardev(d Chardev, targets []string, channel bool) error {
	var errs []error
	need := func(what string, set bool) {
		if !set {
			errs = append(errs, fmt.Errorf("type %s needs %s", d.Type, what))
		}
	}
	none := func(what string, set bool) {
		if set {
			errs = append(errs, fmt.Errorf("type %s takes no %s; remove it", d.Type, what))
		}
	}
	switch d.Type {
	case "tcp":
		need("host", d.Host != "")
		need("port (1 to 65535)", d.Port > 0 && d.Port < 65536)
		need(`mode ("bind" to listen, "connect" to dial)`, d.Mode != "")
		none("path", d.Path != "")
	case "unix", "file":
		need("path (absolute)", d.Path != "" || (channel && d.Type == "unix" && d.Mode != "connect"))
		if d.Path != "" && !path.IsAbs(d.Path) {
			errs = append(errs, fmt.Errorf("path %q must be absolute", d.Path))
		}
		none("host", d.Host != "")
		none("port", d.Port != 0)
		if d.Type == "file" {
			none("mode", d.Mode != "")
		}
	case "pty", "null", "spicevmc":
		none("path", d.Path != "")
		none("host", d.Host != "")
		none("port", d.Port != 0)
		none("mode", d.Mode != "")
	default:
		errs = append(errs, fmt.Errorf("type %q must be one of %v", d.Type, ChardevTypes))
	}
	if d.Mode != "" && !slices.Contains(ChardevModes, d.Mode) {
		errs = append(errs, fmt.Errorf(`mode %q must be "bind" or "connect"`, d.Mode))
	}
	if d.LogFile != "" && !path.IsAbs(d.LogFile) {
		errs = append(errs, fmt.Errorf("log_file %q must be an absolute path", d.LogFile))
	}
	if d.TargetType != "" && !slices.Contains(targets, d.TargetType) {
		errs = append(errs, fmt.Errorf("target_type %q must be one of %v", d.TargetType, targets))
	}
	return errors.Join(errs...)
}
