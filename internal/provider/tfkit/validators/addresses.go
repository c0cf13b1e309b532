package validators

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// URI rejects a malformed libvirt URI at plan time, with the parser's message saying
// which form is expected.
func URI() String {
	return New("must be a libvirt URI such as qemu:///system or qemu+ssh://user@host/system", "Invalid libvirt URI", func(_ path.Path, s string) string {
		if _, err := libvirt.ParseURI(s); err != nil {
			return err.Error()
		}
		return ""
	})
}

// SourceURL accepts http, https and file URLs. Messages never quote a token or password
// the URL carries.
func SourceURL() String {
	return New("must be an http://, https:// or file:// URL", "Invalid source_url", func(_ path.Path, raw string) string {
		s := libvirt.RedactURL(raw)
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // without the URL itself
			}
			return fmt.Sprintf("source_url %q: %v", s, err)
		case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file":
			return fmt.Sprintf("source_url %q: scheme %q is not supported; use an http://, https:// or file:// URL (or source_file for a local path).", s, u.Scheme)
		case u.Scheme != "file" && u.Host == "":
			return fmt.Sprintf("source_url %q has no host.", s)
		case u.Scheme == "file" && u.Path == "":
			return fmt.Sprintf("source_url %q has no path; write file:///absolute/path.", s)
		}
		return ""
	})
}

// IPv4 accepts a dotted IPv4 address.
func IPv4() String {
	const desc = "must be an IPv4 address, e.g. 192.168.122.10"
	return New(desc, "Invalid IPv4 address", func(_ path.Path, s string) string {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			return ""
		}
		return fmt.Sprintf("%q %s.", s, desc)
	})
}

// IP accepts an IPv4 or IPv6 address.
func IP() String {
	return New("must be an IP address such as 127.0.0.1 or ::1", "Invalid IP address", func(_ path.Path, s string) string {
		if net.ParseIP(s) != nil {
			return ""
		}
		return "\"" + s + "\" is not an IP address: use e.g. 127.0.0.1, 0.0.0.0 or ::1."
	})
}
