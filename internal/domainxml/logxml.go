package domainxml

import (
	"strings"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/redact"
)

// What LogXML takes out of a definition besides console passwords (graphics.go): the
// values the user passes through to QEMU and libvirt untyped, which may be anything,
// secrets included (a proxy with a password in qemu_env, an fw_cfg string in qemu_args,
// an rbd key or iSCSI password in a device_xml fragment). Names stay, so a log still
// says what was set: an env's name, an option's name ("-fw_cfg"), a device's element and
// attribute names.

// redactForLog masks, in c (a copy LogXML owns), the qemu:commandline values and the
// device_xml fragments its record keeps, and takes the devices of those fragments out of
// c: it returns them masked (maskNode) and written, for withDevices to put back.
func redactForLog(c *libvirtxml.Domain) []string {
	if q := c.QEMUCommandline; q != nil {
		m := &libvirtxml.DomainQEMUCommandline{}
		for _, a := range q.Args {
			if !redact.IsOptionName(a.Value) {
				a.Value = redact.Mask
			}
			m.Args = append(m.Args, a)
		}
		for _, e := range q.Envs {
			e.Value = redact.Mask
			m.Envs = append(m.Envs, e)
		}
		c.QEMUCommandline = m
	}
	rec := readRecord(c)
	if len(rec.DeviceXML) == 0 {
		return nil
	}
	var fragments []*xmlNode
	names := make([]string, len(rec.DeviceXML))
	for i, f := range rec.DeviceXML {
		names[i] = "(a fragment that does not parse) " + redact.Mask
		if n, err := parseNode(f); err == nil {
			fragments = append(fragments, n)
			names[i] = "<" + n.XMLName.Local + "> " + redact.Mask
		}
	}
	rec.DeviceXML = names
	if c.Metadata != nil {
		m := *c.Metadata
		c.Metadata = &m
	}
	if err := SetMetadata(c, MetadataNS, "domain", rec); err != nil {
		c.Metadata = nil // the record cannot be rewritten: leave it out of the log
	}
	devices, err := devicesNode(c.Devices)
	if err != nil {
		c.Devices = nil // cannot tell the fragments' devices: leave all out of the log
		return []string{"<!-- devices not shown -->"}
	}
	// The first device not yet taken that has all a fragment says, as device_xml's own
	// read matches them.
	var out []string
	for _, f := range fragments {
		for j := range devices.Nodes {
			if devices.Nodes[j].has(f) {
				n := devices.Nodes[j]
				devices.Nodes = append(devices.Nodes[:j:j], devices.Nodes[j+1:]...)
				maskNode(&n)
				var b strings.Builder
				if writeNode(&b, n) == nil {
					out = append(out, b.String())
				}
				break
			}
		}
	}
	if list, err := nodesToDevices(devices.Nodes); err == nil {
		c.Devices = list
	} else {
		c.Devices = nil
		out = append(out, "<!-- other devices not shown -->")
	}
	return out
}

// withDevices puts the masked devices back at the end of text's <devices>.
func withDevices(text string, devices []string) string {
	if len(devices) == 0 {
		return text
	}
	add := strings.Join(devices, "")
	if i := strings.LastIndex(text, "</devices>"); i >= 0 {
		return text[:i] + add + text[i:]
	}
	if i := strings.LastIndex(text, "</domain>"); i >= 0 {
		return text[:i] + "<devices>" + add + "</devices>" + text[i:]
	}
	return text + add
}

// maskNode replaces every attribute value and non-blank text of n and its children
// (blank text, the indentation, goes).
func maskNode(n *xmlNode) {
	for i := range n.Attrs {
		n.Attrs[i].Value = redact.Mask
	}
	if strings.TrimSpace(n.Text) != "" {
		n.Text = redact.Mask
	} else {
		n.Text = ""
	}
	for i := range n.Nodes {
		maskNode(&n.Nodes[i])
	}
}
