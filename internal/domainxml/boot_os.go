package domainxml

import (
	"fmt"
	"slices"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// OS-level boot order and boot menu (<os><boot dev/> and <bootmenu>): os.boot and
// os.boot_menu. The per-device boot orders (boot.go) exclude os.boot; with neither, a
// definition boots from hd as before. A change restarts a running domain.

// BootDeviceNames are the values os.boot takes.
var BootDeviceNames = []string{"hd", "cdrom", "network", "fd"}

// BootOS is libvirt_domain's OS-level boot settings; nil keeps the domain's.
type BootOS struct {
	// Devices in boot order; nil keeps the domain's.
	Devices []string
	Menu    *bool
	// MenuTimeout is how long the menu waits, in ms (<bootmenu timeout>); nil: the
	// firmware's own wait. Only with Menu on (libvirt ignores it otherwise).
	MenuTimeout *uint
}

// MaxBootMenuTimeout is libvirt's limit on <bootmenu timeout> (ms).
const MaxBootMenuTimeout = 65535

var bootOSFamily = family{
	name: "boot",
	validate: func(s *Spec) error {
		if t := s.Boot.MenuTimeout; t != nil && (*t > MaxBootMenuTimeout || s.Boot.Menu == nil || !*s.Boot.Menu) {
			return fmt.Errorf("os.boot_menu.timeout_ms = %d: needs the menu enabled and at most %d (libvirt ignores it otherwise)", *t, MaxBootMenuTimeout)
		}
		if len(s.Boot.Devices) == 0 {
			return nil
		}
		if b := bootOrders(s); len(b) > 0 {
			return fmt.Errorf("os.boot and the boot_order of %s exclude each other (libvirt takes one or the other): remove one", b[0].device)
		}
		for i, dev := range s.Boot.Devices {
			if !slices.Contains(BootDeviceNames, dev) {
				return fmt.Errorf("os.boot[%d] = %q: must be one of %v", i, dev, BootDeviceNames)
			}
			if slices.Index(s.Boot.Devices, dev) != i {
				return fmt.Errorf("os.boot lists %q twice", dev)
			}
		}
		return nil
	},
	// After the device families: setBootDevices (boot.go) has made the default.
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		if s.Boot.Devices != nil && len(bootOrders(s)) == 0 {
			d.OS.BootDevices = nil
			for _, dev := range s.Boot.Devices {
				d.OS.BootDevices = append(d.OS.BootDevices, libvirtxml.DomainBootDevice{Dev: dev})
			}
			if len(d.OS.BootDevices) == 0 { // [] is the default: hd
				d.OS.BootDevices = []libvirtxml.DomainBootDevice{{Dev: "hd"}}
			}
		}
		if m := s.Boot.Menu; m != nil {
			d.OS.BootMenu = nil
			if *m {
				d.OS.BootMenu = &libvirtxml.DomainBootMenu{Enable: "yes"}
				if t := s.Boot.MenuTimeout; t != nil {
					d.OS.BootMenu.Timeout = strconv.FormatUint(uint64(*t), 10)
				}
			}
		}
		return nil
	},
	// What a definition made before os.boot has (hd alone, or nothing beside device
	// boot orders, no menu) reads as nil, so such specs round-trip.
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.OS == nil {
			return
		}
		var devs []string
		for _, b := range d.OS.BootDevices {
			devs = append(devs, b.Dev)
		}
		if !slices.Equal(devs, []string{"hd"}) {
			p.Spec.Boot.Devices = devs
		}
		if m := d.OS.BootMenu; m != nil && m.Enable == "yes" {
			on := true
			p.Spec.Boot.Menu = &on
			if t, err := strconv.ParseUint(m.Timeout, 10, 32); err == nil {
				ms := uint(t)
				p.Spec.Boot.MenuTimeout = &ms
			}
		}
	},
	same: func(a, b Spec) bool {
		x, y := a.Boot, b.Boot
		menu := func(m *bool) bool { return m != nil && *m }
		timeout := func(b BootOS) int64 {
			if b.MenuTimeout == nil || !menu(b.Menu) {
				return -1
			}
			return int64(*b.MenuTimeout)
		}
		return (y.Devices == nil || slices.Equal(EffectiveBootDevices(a), EffectiveBootDevices(b))) &&
			(y.Menu == nil || menu(x.Menu) == *y.Menu && timeout(x) == timeout(y))
	},
}

// EffectiveBootDevices are the OS-level boot devices the definition of s has: none when
// a device has a boot order, hd when nothing says otherwise.
func EffectiveBootDevices(s Spec) []string {
	switch {
	case len(bootOrders(&s)) > 0:
		return []string{}
	case len(s.Boot.Devices) == 0:
		return []string{"hd"}
	}
	return s.Boot.Devices
}
