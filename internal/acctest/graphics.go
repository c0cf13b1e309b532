package acctest

import (
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// ConsolePassword is the password of a domain's first VNC or SPICE console, read with the
// secure flag (libvirt prints passwd only then): in the running domain when live, else
// in its definition. "" when it has none.
func ConsolePassword(t testing.TB, name string, live bool) (string, error) {
	var out string
	err := Client(t).Read(Ctx(t), "read the console password of domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		flags := golibvirt.DomainXMLSecure
		if !live {
			flags |= golibvirt.DomainXMLInactive
		}
		text, err := l.DomainGetXMLDesc(d, flags)
		if err != nil {
			return err
		}
		var dom libvirtxml.Domain
		if err := dom.Unmarshal(text); err != nil {
			return err
		}
		for _, g := range dom.Devices.Graphics {
			switch {
			case g.VNC != nil:
				out = g.VNC.Passwd
			case g.Spice != nil:
				out = g.Spice.Passwd
			default:
				continue
			}
			return nil
		}
		return nil
	})
	return out, err
}
