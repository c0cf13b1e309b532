package hostxml

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// DNS records beyond host entries (SRV, TXT) and raw dnsmasq options.

// SRV is a DNS service record dnsmasq serves: _Service._Protocol.Domain points at
// Target:Port.
type SRV struct {
	Service, Protocol, Domain, Target string
	Port, Priority, Weight            uint
}

// TXT is a DNS text record.
type TXT struct{ Name, Value string }

var (
	objectNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	// libvirt's own check of an SRV service and a TXT name: letters, digits, '-' (and '_' / '.' in TXT names).
	srvServiceRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,15}$`)
	txtNameRE    = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

func (n *Network) validateDNS() []FieldError {
	var errs []FieldError
	add := func(f string, a ...any) { errs = append(errs, FieldError{"dns", fmt.Sprintf(f, a...)}) }
	d := n.DNS
	if !d.Enabled && (len(d.Hosts) > 0 || len(d.Forwarders) > 0) {
		add("hosts and forwarders need enabled = true (or remove them)")
	}
	seen := map[string]int{}
	for i, h := range d.Hosts {
		ip, err := netip.ParseAddr(h.IP)
		if err != nil || ip.String() != h.IP {
			add("hosts[%d]: ip %q must be an IP address in canonical form", i, h.IP)
		}
		if len(h.Hostnames) == 0 {
			add("hosts[%d]: give at least one hostname", i)
		}
		for _, k := range append([]string{"ip " + h.IP}, prefixAll("hostname ", h.Hostnames)...) {
			if j, ok := seen[k]; ok {
				add("hosts: %s appears in hosts[%d] and hosts[%d]; libvirt allows each once", k, j, i)
			}
			seen[k] = i
		}
		for _, name := range h.Hostnames {
			if !hostnameRE.MatchString(name) {
				add("hosts[%d]: %q is not a host name", i, name)
			}
		}
	}
	for i, f := range d.Forwarders {
		if f.Addr == "" && f.Domain == "" {
			add("forwarders[%d]: give addr, domain or both", i)
		}
		if f.Addr != "" {
			if a, err := netip.ParseAddr(f.Addr); err != nil || a.String() != f.Addr {
				add("forwarders[%d]: addr %q must be an IP address in canonical form", i, f.Addr)
			}
		}
		if f.Domain != "" && !hostnameRE.MatchString(f.Domain) {
			add("forwarders[%d]: %q is not a DNS domain", i, f.Domain)
		}
	}
	return errs
}

func (n *Network) validateDNSRecords(add func(attr, f string, a ...any)) {
	d := n.DNS
	for i, s := range d.SRVs {
		switch {
		case !srvServiceRE.MatchString(s.Service):
			add("dns", "srv[%d]: service %q must be 1-15 letters, digits or '-' (e.g. \"ldap\"; no leading '_')", i, s.Service)
		case s.Protocol != "tcp" && s.Protocol != "udp":
			add("dns", "srv[%d]: protocol must be tcp or udp, got %q", i, s.Protocol)
		case s.Domain != "" && !hostnameRE.MatchString(s.Domain):
			add("dns", "srv[%d]: domain %q is not a DNS domain", i, s.Domain)
		case s.Target != "" && s.Target != "." && !hostnameRE.MatchString(s.Target):
			add("dns", "srv[%d]: target %q is not a host name", i, s.Target)
		case s.Port > 65535:
			add("dns", "srv[%d]: port %d is beyond 65535", i, s.Port)
		case s.Target == "" && (s.Port != 0 || s.Priority != 0 || s.Weight != 0):
			add("dns", "srv[%d]: port, priority and weight need a target", i)
		}
	}
	seen := map[string]int{}
	for i, t := range d.TXTs {
		if !txtNameRE.MatchString(t.Name) {
			add("dns", "txt[%d]: name %q must hold only letters, digits, '_', '.' and '-'", i, t.Name)
		}
		if j, ok := seen[t.Name]; ok {
			add("dns", "txt[%d] and txt[%d] are both named %s: libvirt keeps one record per name", j, i, t.Name)
		}
		seen[t.Name] = i
	}
	if !d.Enabled && (len(d.SRVs) > 0 || len(d.TXTs) > 0) {
		add("dns", "srv and txt need enabled = true (or remove them)")
	}
	for i, o := range n.DnsmasqOptions {
		if strings.TrimSpace(o) == "" || strings.ContainsAny(o, "\n\r") {
			add("dnsmasq_options", "dnsmasq_options[%d]: %q must be one dnsmasq.conf line, e.g. \"log-queries\" or \"dhcp-option=42,10.0.0.1\"", i, o)
		}
	}
}

// XML is the record's element (for the definition and network-update).
func (s SRV) XML() libvirtxml.NetworkDNSSRV {
	return libvirtxml.NetworkDNSSRV{Service: s.Service, Protocol: s.Protocol, Domain: s.Domain, Target: s.Target,
		Port: s.Port, Priority: s.Priority, Weight: s.Weight}
}

// XML is the record's element (for the definition and network-update).
func (t TXT) XML() libvirtxml.NetworkDNSTXT {
	return libvirtxml.NetworkDNSTXT{Name: t.Name, Value: t.Value}
}

func dnsRecordsFromXML(x *libvirtxml.NetworkDNS, d *DNS) {
	for _, s := range x.SRVs {
		d.SRVs = append(d.SRVs, SRV{Service: s.Service, Protocol: s.Protocol, Domain: s.Domain, Target: s.Target,
			Port: s.Port, Priority: s.Priority, Weight: s.Weight})
	}
	for _, t := range x.TXTs {
		d.TXTs = append(d.TXTs, TXT{Name: t.Name, Value: t.Value})
	}
}

func dnsmasqXML(opts []string) *libvirtxml.NetworkDnsmasqOptions {
	if len(opts) == 0 {
		return nil
	}
	x := &libvirtxml.NetworkDnsmasqOptions{}
	for _, o := range opts {
		x.Option = append(x.Option, libvirtxml.NetworkDnsmasqOption{Value: o})
	}
	return x
}

func dnsmasqFromXML(x *libvirtxml.NetworkDnsmasqOptions) []string {
	if x == nil {
		return nil
	}
	var out []string
	for _, o := range x.Option {
		out = append(out, o.Value)
	}
	return out
}
