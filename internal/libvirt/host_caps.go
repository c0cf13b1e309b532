package libvirt

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// GuestArch is what the host's capabilities offer for hvm guests of one architecture.
type GuestArch struct {
	Arch        string
	Emulator    string   // the binary libvirt uses when a definition names none
	DomainTypes []string // e.g. qemu, kvm
	Machines    []string // machine types: names and the canonical names of aliases
}

// Capabilities is the part of the host's capabilities (virsh capabilities) domains are
// checked against: the host CPU's arch and the hvm guest architectures offered; and the
// host's CPU, NUMA cells and huge page sizes (host_numa.go).
type Capabilities struct {
	HostArch         string
	Guests           []GuestArch // sorted by arch
	CPU              HostCPU
	Cells            []NUMACell // without free memory (HostMemory reads that)
	HugepageSizesKiB []uint64   // sorted; the base page size is not among them
}

// Guest is the guest architecture arch, if offered.
func (c *Capabilities) Guest(arch string) (GuestArch, bool) {
	for _, g := range c.Guests {
		if g.Arch == arch {
			return g, true
		}
	}
	return GuestArch{}, false
}

// Arches are the guest architectures offered, sorted.
func (c *Capabilities) Arches() []string {
	out := make([]string, len(c.Guests))
	for i, g := range c.Guests {
		out[i] = g.Arch
	}
	return out
}

// ParseCapabilities reads the host's capabilities XML.
func ParseCapabilities(text string) (*Capabilities, error) {
	var caps libvirtxml.Caps
	if err := caps.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("parse host capabilities: %w", err)
	}
	out := &Capabilities{}
	if caps.Host.CPU != nil {
		out.HostArch = caps.Host.CPU.Arch
	}
	out.CPU, out.Cells, out.HugepageSizesKiB = parseHostTopology(&caps)
	for _, g := range caps.Guests {
		if g.OSType != "hvm" {
			continue
		}
		ga := GuestArch{Arch: g.Arch.Name, Emulator: g.Arch.Emulator, Machines: machines(&caps, g.Arch.Name)}
		for _, d := range g.Arch.Domains {
			if !slices.Contains(ga.DomainTypes, d.Type) {
				ga.DomainTypes = append(ga.DomainTypes, d.Type)
			}
		}
		slices.Sort(ga.DomainTypes)
		if i := slices.IndexFunc(out.Guests, func(x GuestArch) bool { return x.Arch == ga.Arch }); i >= 0 {
			out.Guests[i].DomainTypes = slices.Compact(slices.Sorted(slices.Values(append(out.Guests[i].DomainTypes, ga.DomainTypes...))))
			continue
		}
		out.Guests = append(out.Guests, ga)
	}
	slices.SortFunc(out.Guests, func(a, b GuestArch) int { return cmp.Compare(a.Arch, b.Arch) })
	return out, nil
}

// DomainCaps is what the host's domain capabilities (virsh domcapabilities) say for one
// emulator, arch, machine and domain type.
type DomainCaps struct {
	Emulator      string // the binary (<path>)
	Arch          string
	Machine       string   // the machine type it was asked for, expanded (virt-7.2)
	FirmwareTypes []string // firmware auto-selection values, e.g. efi
	FirmwarePaths []string // loader images
	// CPUModels are the custom CPU models the host offers, by name: "yes", "no" or
	// "unknown", whether this host can run a guest with it (libvirt's usable).
	CPUModels map[string]string
}

// ParseDomainCapabilities reads the host's domain capabilities XML.
func ParseDomainCapabilities(text string) (*DomainCaps, error) {
	var dc libvirtxml.DomainCaps
	if err := dc.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("parse domain capabilities: %w", err)
	}
	out := &DomainCaps{Emulator: dc.Path, Arch: dc.Arch, Machine: dc.Machine}
	out.FirmwareTypes, out.FirmwarePaths = firmware(&dc)
	if dc.CPU != nil {
		for _, mode := range dc.CPU.Modes {
			if mode.Name != "custom" || mode.Supported != "yes" {
				continue
			}
			out.CPUModels = map[string]string{}
			for _, m := range mode.Models {
				out.CPUModels[m.Name] = m.Usable
			}
		}
	}
	return out, nil
}

// Host capabilities change only when software is installed on the host, and every
// libvirt_domain in a plan asks for them: they are read once per client (and key) for
// capsTTL, so that a plan of many domains asks libvirt once.
var (
	capsCache    ttlCache[*Client, *Capabilities]
	domCapsCache ttlCache[domCapsKey, *DomainCaps]
	hostCache    ttlCache[*Client, *HostInfo]
)

// capsTTL is longer than a plan of many domains takes.
const capsTTL = time.Minute

type domCapsKey struct {
	c                                *Client
	emulator, arch, machine, virType string
}

// Capabilities are the host's capabilities, read at most once per capsTTL.
func (c *Client) Capabilities(ctx context.Context) (*Capabilities, error) {
	return capsCache.get(c, capsTTL, func() (*Capabilities, error) {
		var text string
		err := c.Read(ctx, "read host capabilities", func(l *golibvirt.Libvirt) error {
			var err error
			text, err = l.ConnectGetCapabilities()
			return err
		})
		if err != nil {
			return nil, err
		}
		return ParseCapabilities(text)
	})
}

// DomainCapabilities are the host's domain capabilities for an emulator binary, arch,
// machine type and domain type (each may be empty: libvirt's default), read at most once
// per capsTTL. libvirt refuses (an error that is not IsTransport) what it cannot offer:
// an arch without an emulator, a binary that does not exist or is for another arch.
func (c *Client) DomainCapabilities(ctx context.Context, emulator, arch, machine, virType string) (*DomainCaps, error) {
	key := domCapsKey{c, emulator, arch, machine, virType}
	return domCapsCache.get(key, capsTTL, func() (*DomainCaps, error) {
		opt := func(s string) golibvirt.OptString {
			if s == "" {
				return nil
			}
			return golibvirt.OptString{s}
		}
		var text string
		err := c.Read(ctx, "read domain capabilities", func(l *golibvirt.Libvirt) error {
			var err error
			text, err = l.ConnectGetDomainCapabilities(opt(emulator), opt(arch), opt(machine), opt(virType), 0)
			return err
		})
		if err != nil {
			return nil, err
		}
		return ParseDomainCapabilities(text)
	})
}

// ttlCache keeps values per key for a while; failures are not kept.
type ttlCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]ttlEntry[V]
}

type ttlEntry[V any] struct {
	at time.Time
	v  V
}

func (t *ttlCache[K, V]) get(key K, ttl time.Duration, fetch func() (V, error)) (V, error) {
	t.mu.Lock()
	e, ok := t.m[key]
	t.mu.Unlock()
	if ok && time.Since(e.at) < ttl {
		return e.v, nil
	}
	v, err := fetch()
	if err != nil {
		return v, err
	}
	t.mu.Lock()
	if t.m == nil {
		t.m = map[K]ttlEntry[V]{}
	}
	t.m[key] = ttlEntry[V]{at: time.Now(), v: v}
	t.mu.Unlock()
	return v, nil
}
