package workflow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// MachineReadAPI is what reading a cluster machine back asks of libvirt.
type MachineReadAPI interface {
	GetDomainStatus(ctx context.Context, id string) (*libvirt.DomainStatus, error)
	VolumeInfo(ctx context.Context, ref libvirt.VolumeRef) (*libvirt.VolumeInfo, error)
	DownloadVolume(ctx context.Context, ref libvirt.VolumeRef, w io.Writer) error
	ReadNetworkDHCP(ctx context.Context, network string) (*netaddr.Network, error)
	NetworkLeases(ctx context.Context, network string) (map[string][]libvirt.Lease, error)
}

// MachinePlace is where a machine's network-side and storage parts are: what the state
// knows of a machine made here, and what an imported one's metadata says.
type MachinePlace struct{ Network, Pool string }

// MachineState is a machine as the host has it.
type MachineState struct {
	Domain, UID string
	Spec        domainxml.Spec // from the persistent definition (sizing, interfaces)
	Active      bool
	MAC         string
	// Meta and UserData are read for an import only (ReadMachine without a place).
	Meta     *domainxml.MachineMeta
	UserData *string // nil when the seed has none
	// DiskBytes is the root volume's capacity; HasDisk is false when the volume is gone.
	DiskBytes uint64
	HasDisk   bool
	IP        string   // the reservation's address; "" without one
	Addresses []string // usable lease addresses of the MAC, sorted; nil while it does not run
}

// ReadMachine reads machine id (its UUID or domain name) from the host: the domain, the
// root volume, the reservation and one look at the leases. It never waits. place nil
// means an import: the machine's place and inputs come from its domain's metadata and
// its seed volume.
func ReadMachine(ctx context.Context, api MachineReadAPI, id string, place *MachinePlace, log Logf) (*MachineState, error) {
	st, err := api.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	var def libvirtxml.Domain
	if err := def.Unmarshal(st.XML); err != nil {
		return nil, fmt.Errorf("parse the definition of domain %s: %w", id, err)
	}
	parsed, err := domainxml.FromDomain(&def)
	if err != nil {
		return nil, err
	}
	m := &MachineState{Domain: def.Name, UID: strings.ToLower(def.UUID), Spec: parsed.Spec, Active: st.Active, MAC: capi.MAC(def.Name)}
	if ifs := parsed.Spec.Interfaces; len(ifs) > 0 && ifs[0].MAC != "" {
		m.MAC = ifs[0].MAC
	}
	if place == nil {
		if err := readImported(ctx, api, &def, m, log); err != nil {
			return nil, err
		}
		place = &MachinePlace{Network: m.Meta.Network, Pool: m.Meta.DomainPool}
	}
	p := MachineParts{Domain: m.Domain, MAC: m.MAC, Network: place.Network, Pool: place.Pool, Root: capi.RootVolumeName(m.Domain)}
	info, err := api.VolumeInfo(ctx, libvirt.VolumeRef{Pool: p.Pool, Name: p.Root})
	switch {
	case err == nil:
		m.DiskBytes, m.HasDisk = info.Capacity, true
	case errors.Is(err, libvirt.ErrNotFound):
		log.log("the root volume of a cluster machine is gone", map[string]any{"domain": p.Domain, "volume": p.Pool + "/" + p.Root})
	default:
		return nil, err
	}
	h, err := MachineReservation(ctx, api, p.Network, p.MAC)
	switch {
	case err == nil && h != nil:
		m.IP = h.IP
	case err != nil && !errors.Is(err, libvirt.ErrNotFound):
		return nil, err
	}
	if st.Active {
		leases, err := api.NetworkLeases(ctx, p.Network)
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			return nil, err
		}
		m.Addresses = []string{}
		for _, l := range leases[p.MAC] {
			if libvirt.UsableAddress(l.IP) {
				m.Addresses = append(m.Addresses, l.IP)
			}
		}
		sort.Strings(m.Addresses)
	}
	return m, nil
}

// readImported fills in an imported machine's metadata and its user-data (read from its
// seed volume).
func readImported(ctx context.Context, api MachineReadAPI, def *libvirtxml.Domain, m *MachineState, log Logf) error {
	meta, ok := domainxml.ParseMachineMeta(def)
	if !ok {
		return fmt.Errorf("domain %s was not made by libvirt_cluster_machine (its metadata has no %s element): import it as a libvirt_domain instead", def.Name, domainxml.MachineMetadataNS)
	}
	m.Meta = meta
	seed := capi.SeedVolumeName(def.Name)
	var files map[string][]byte
	// A download that comes back garbled (seen about once in a few dozen runs under load:
	// the image then does not parse) is tried again; the seed is a few KiB.
	for attempt := 1; ; attempt++ {
		var buf bytes.Buffer
		if err := api.DownloadVolume(ctx, libvirt.VolumeRef{Pool: meta.DomainPool, Name: seed}, &buf); err != nil {
			if errors.Is(err, libvirt.ErrNotFound) {
				return fmt.Errorf("the seed volume %s/%s of machine %s is missing: user_data cannot be read back", meta.DomainPool, seed, def.Name)
			}
			return err
		}
		var err error
		if _, files, err = cloudinit.ReadISO(buf.Bytes()); err == nil {
			break
		}
		if attempt == 3 {
			return fmt.Errorf("read the seed volume %s/%s (%d bytes downloaded, %d attempts): %w", meta.DomainPool, seed, buf.Len(), attempt, err)
		}
		log.log("the downloaded seed does not parse; downloading it again", map[string]any{"volume": meta.DomainPool + "/" + seed, "bytes": buf.Len(), "error": err.Error()})
	}
	if ud := files[cloudinit.UserDataFile]; len(ud) > 0 {
		s := string(ud)
		m.UserData = &s
	}
	return nil
}
