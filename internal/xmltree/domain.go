package xmltree

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Assigned takes out of a domain tree n what libvirt assigns when a definition leaves
// it out, so that a domain recreated from a configuration compares equal to the one it
// was read from (the contract's "Lose nothing": uuid and MACs when not set, PCI
// addresses, aliases). written is the definition as the user wrote it: what it sets is
// the user's and stays.
//   - <alias> of any device;
//   - a device's PCI <address>, and any other <address> the written definition does not
//     hold as it is (libvirt numbers drives, USB ports and serial ports itself);
//   - an interface's <mac> the written definition does not hold;
//   - the <uuid> when the written definition has none;
//   - the provider's own record in <metadata> (RecordNamespace), and <metadata> when
//     nothing else is left in it.
func Assigned(n, written *Node) {
	addrs := map[string]bool{}
	macs := map[string]bool{}
	written.Remove(func(path string, e *Node) bool {
		switch {
		case strings.HasPrefix(path, "/domain/devices/") && e.Name == "address":
			addrs[e.String()] = true
		case path == "/domain/devices/interface/mac":
			v, _ := e.Attr("address")
			macs[strings.ToLower(v)] = true
		}
		return false
	})
	hasUUID := written.Child("uuid") != nil
	n.Remove(func(path string, e *Node) bool {
		switch {
		case path == "/domain/metadata/"+RecordElement:
			return true
		case path == "/domain/uuid":
			return !hasUUID
		case !strings.HasPrefix(path, "/domain/devices/"):
			return false
		case e.Name == "alias":
			return true
		case e.Name == "address" && strings.Count(path, "/") == 4:
			// A device's own address (not a hostdev's <source><address>).
			if t, _ := e.Attr("type"); t == "pci" {
				return true
			}
			return !addrs[e.String()]
		case path == "/domain/devices/interface/mac":
			v, _ := e.Attr("address")
			return !macs[strings.ToLower(v)]
		}
		return false
	})
	n.Remove(func(path string, e *Node) bool {
		return path == "/domain/metadata" && len(e.Children) == 0 && written.Child("metadata") == nil
	})
}

// RecordElement is the provider's record in a domain's <metadata> as Parse names it.
const RecordElement = "{https://github.com/kvmforge/terraform-provider-libvirt/domain/1}domain"

// DiffFilled is DiffTrees for a domain recreated from a configuration (built) against
// the one it was read from (twin), where written is what the user wrote for twin: a
// value the twin has and the written definition does not is one libvirt filled in, and
// libvirt fills it in again when it defines built, so built may lack it. Reordering and
// numbers spelled otherwise (0x10 for 16) are not reported: libvirt writes devices in its
// own order and numbers its own way.
func DiffFilled(twin, built, written *Node) []string {
	tl, bl, wl := numbers(twin.Leaves()), numbers(built.Leaves()), numbers(written.Leaves())
	keys := map[string]bool{}
	for k := range tl {
		keys[k] = true
	}
	for k := range bl {
		keys[k] = true
	}
	isElem := func(k string) bool { return !strings.Contains(k, "/@") && !strings.HasSuffix(k, "/text()") }
	var gone []string
	var out []string
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		if slices.ContainsFunc(gone, func(r string) bool { return strings.HasPrefix(k, r) }) {
			continue
		}
		filled := minus(tl[k], wl[k])
		lost := minus(minus(tl[k], bl[k]), filled)
		added := minus(bl[k], tl[k])
		switch {
		case len(lost) == 0 && len(added) == 0:
		case isElem(k) && len(lost) > 0:
			out = append(out, fmt.Sprintf("lost %s (x%d)", k, len(lost)))
			if len(bl[k]) == 0 {
				gone = append(gone, k+"/")
			}
		case isElem(k):
			out = append(out, fmt.Sprintf("added %s (x%d)", k, len(added)))
			if len(tl[k]) == 0 {
				gone = append(gone, k+"/")
			}
		case len(added) == 0:
			out = append(out, fmt.Sprintf("lost %s: %s", k, strings.Join(lost, " ")))
		case len(lost) == 0:
			out = append(out, fmt.Sprintf("added %s: %s", k, strings.Join(added, " ")))
		case sameNumbers(lost, added):
			// libvirt prints numbers its own way whatever the definition says.
		default:
			out = append(out, fmt.Sprintf("changed %s: %s -> %s", k, strings.Join(lost, " "), strings.Join(added, " ")))
		}
	}
	return out
}

// numbers writes hexadecimal values of m in decimal (libvirt prints 0x10 for a PCI port
// a definition wrote as 16, and reads both).
func numbers(m map[string][]string) map[string][]string {
	for k, vs := range m {
		for i, v := range vs {
			u, err := strconv.Unquote(v)
			if err != nil || !strings.HasPrefix(u, "0x") {
				continue
			}
			if n, err := strconv.ParseUint(u, 0, 64); err == nil {
				vs[i] = strconv.Quote(strconv.FormatUint(n, 10))
			}
		}
		m[k] = vs
	}
	return m
}
