package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// This file is libvirt_cluster_machine's create and delete: the parts a machine is made
// of, made in order and removed again, newest first, when a step fails.

// MachineAPI is what making and removing a cluster machine asks of libvirt.
type MachineAPI interface {
	AddressAPI
	HostInfo(ctx context.Context) (*libvirt.HostInfo, error)
	LookupDomain(ctx context.Context, id string) (libvirt.Domain, error)
	VolumeInfo(ctx context.Context, ref libvirt.VolumeRef) (*libvirt.VolumeInfo, error)
	CreateOverlay(ctx context.Context, spec libvirt.VolumeSpec, backing libvirt.VolumeRef) (*libvirt.VolumeInfo, error)
	UploadBytes(ctx context.Context, spec libvirt.VolumeSpec, name string, b []byte) (*libvirt.VolumeInfo, error)
	DefineDomain(ctx context.Context, name, xml string) (libvirt.Domain, error)
	SetDomainAutostart(ctx context.Context, id string, on bool) error
	StartDomain(ctx context.Context, id string) error
	ShutdownDomain(ctx context.Context, id string, timeout time.Duration) (forced bool, err error)
	UndefineDomain(ctx context.Context, id string) error
	DeleteVolume(ctx context.Context, ref libvirt.VolumeRef) error
}

// MachineHeadroom is the factor between a machine's vcpu / memory and the ceilings
// written at create (<vcpu> maximum, <memory>): growth up to it applies live.
const MachineHeadroom = 2

// MachineShutdownTimeout is how long a machine's graceful shutdown may take (a restart,
// running = false, a removal) before it is forced off.
const MachineShutdownTimeout = time.Minute

// MachineParts names everything a cluster machine is made of on the host.
type MachineParts struct {
	Domain  string // domain name
	UID     string // domain UUID ("" when not known)
	MAC     string
	Network string
	Pool    string // domain_pool
	Root    string // root volume name
	Seed    string // seed volume name
}

// NewMachineParts are the parts of machine namespace/name by the rules of internal/capi.
func NewMachineParts(namespace, name, uid, network, pool string) MachineParts {
	dn := capi.DomainName(namespace, name)
	return MachineParts{Domain: dn, UID: uid, MAC: capi.MAC(dn), Network: network, Pool: pool,
		Root: capi.RootVolumeName(dn), Seed: capi.SeedVolumeName(dn)}
}

// DomainID is how the domain is looked up: by UUID when known (a domain of the same
// name that is not this machine's is never touched), else by name.
func (p MachineParts) DomainID() string {
	if p.UID != "" {
		return p.UID
	}
	return p.Domain
}

// MachineRequest is a machine to make.
type MachineRequest struct {
	Namespace, Name, UID string // UID: the domain's UUID and the seed's instance-id
	Network              string
	BasePool, Image      string // the base volume the root disk overlays
	DomainPool           string
	VCPU                 uint
	MemoryMiB, DiskGiB   uint64
	UserData             string
	Running              bool
	Log                  Logf
}

// Parts are the request's machine parts.
func (r MachineRequest) Parts() MachineParts {
	return NewMachineParts(r.Namespace, r.Name, r.UID, r.Network, r.DomainPool)
}

// Warning is something a user should know about a change that went through.
type Warning struct{ Summary, Detail string }

// MachineResult is a machine made.
type MachineResult struct {
	IP       string    // the address reserved for it
	Warnings []Warning // leftovers of an earlier machine that were removed
}

// CreateMachine makes a cluster machine: checks first (seed, host), leftovers of an
// earlier machine of the same names removed, then the root overlay, the seed, the address
// reservation, the domain, autostart and the start. When a step fails, everything made so
// far is removed again — and so is what a step whose answer was lost may have made — and
// the error names the step and what was rolled back (or what is left to remove by hand).
func CreateMachine(ctx context.Context, api MachineAPI, req MachineRequest) (MachineResult, error) {
	var res MachineResult
	p := req.Parts()
	meta, err := cloudinit.MetaData(req.UID, req.Name)
	if err != nil {
		return res, fmt.Errorf("render meta-data: %w", err)
	}
	iso, _, err := cloudinit.BuildISO(cloudinit.Seed{UserData: req.UserData, MetaData: meta})
	if err != nil {
		return res, fmt.Errorf("build the cloud-init seed: %w", err)
	}
	host, err := api.HostInfo(ctx)
	if err != nil {
		return res, fmt.Errorf("read the host's capabilities: %w", err)
	}
	if host.DefaultDomainType == "" {
		return res, errors.New("The host offers neither kvm nor qemu domains for its architecture.") //nolint:revive,staticcheck // the sentence users have seen as the detail

	}
	old, err := leftovers(ctx, api, p)
	if err != nil {
		return res, err
	}
	if old != 0 {
		if err := removeParts(ctx, api, p, old); err != nil {
			return res, fmt.Errorf("remove what an earlier machine %s/%s left without its domain (%s): %w", req.Namespace, req.Name, p.names(old), err)
		}
		res.Warnings = append(res.Warnings, Warning{"Removed leftovers of cluster machine " + p.Domain,
			fmt.Sprintf("The host held %s for machine %s/%s without its domain (the domain was removed outside Terraform, or an "+
				"earlier run was interrupted). They were removed and are made afresh.", p.names(old), req.Namespace, req.Name)})
	}

	// made: what this create has made. A step whose outcome is unknown (unknownOutcome)
	// names its part when it fails, and the rollback removes that too: a define or a
	// reservation whose answer was lost may well have been carried out.
	var made partSet
	fail := func(step string, err error, part partSet) (MachineResult, error) {
		var unsure partSet
		if unknownOutcome(ctx, err) {
			unsure = part
		}
		return res, rollbackMachine(ctx, api, p, made, unsure, step, err, req.Log)
	}

	root, err := api.CreateOverlay(ctx, libvirt.VolumeSpec{Pool: p.Pool, Name: p.Root, Format: "qcow2", Capacity: req.DiskGiB << 30},
		libvirt.VolumeRef{Pool: req.BasePool, Name: req.Image})
	if err != nil {
		return fail("creating the root volume "+p.Pool+"/"+p.Root+" on image "+req.BasePool+"/"+req.Image, err, partRoot)
	}
	made |= partRoot
	seed, err := api.UploadBytes(ctx, libvirt.VolumeSpec{Pool: p.Pool, Name: p.Seed, Format: "raw"}, "the cloud-init seed", iso)
	if err != nil {
		return fail("creating the seed volume "+p.Pool+"/"+p.Seed, err, partSeed)
	}
	made |= partSeed
	h, err := ReserveAddress(ctx, api, p.Network, p.Domain, p.MAC)
	if err != nil {
		return fail("reserving an address for "+p.MAC+" in network "+p.Network, err, partReservation)
	}
	made |= partReservation
	res.IP = h.IP
	req.Log.log("reserved machine address", map[string]any{"domain": p.Domain, "mac": p.MAC, "ip": h.IP})

	text, err := machineDomainXML(p, req, host.DefaultDomainType, root, seed)
	if err != nil {
		return fail("building the domain definition of "+p.Domain, err, 0)
	}
	req.Log.log("defining cluster machine domain", map[string]any{"name": p.Domain, "xml": text})
	if _, err := api.DefineDomain(ctx, p.Domain, text); err != nil {
		return fail("defining domain "+p.Domain, err, partDomain)
	}
	made |= partDomain
	if err := api.SetDomainAutostart(ctx, p.UID, req.Running); err != nil {
		return fail("setting autostart of domain "+p.Domain, err, 0)
	}
	if req.Running {
		if err := api.StartDomain(ctx, p.UID); err != nil {
			return fail("starting domain "+p.Domain, err, 0)
		}
	}
	return res, nil
}

// DeleteMachine removes every part of a machine: the domain, both volumes, the
// reservation. A part already gone counts as removed; every failure is reported.
func DeleteMachine(ctx context.Context, api MachineAPI, p MachineParts) error {
	return removeParts(ctx, api, p, partsAll)
}

// machineDomainXML is the machine's domain: the overlay as a virtio disk, the seed as a
// cdrom, one virtio NIC with the derived MAC, the guest-agent channel, VNC on
// 127.0.0.1, the headroom for vcpu and memory, and the metadata an import reads back.
func machineDomainXML(p MachineParts, req MachineRequest, domType string, root, seed *libvirt.VolumeInfo) (string, error) {
	spec := domainxml.Spec{
		Name: p.Domain, UUID: p.UID, Type: domType,
		VCPU: req.VCPU, MaxVCPU: req.VCPU * MachineHeadroom, MemoryKiB: req.MemoryMiB * domainxml.KiBPerMiB, MaxMemoryKiB: req.MemoryMiB * domainxml.KiBPerMiB * MachineHeadroom,
		Disks: []domainxml.Disk{{VolumeID: p.Pool + "/" + p.Root, Path: root.Path, Device: domainxml.DeviceDisk,
			Bus: "virtio", Target: "vda", Format: "qcow2"}},
		CloudInit:  &domainxml.CloudInit{ID: p.Pool + "/" + p.Seed, Path: seed.Path},
		Interfaces: []domainxml.Interface{{Network: p.Network, MAC: p.MAC, Model: domainxml.DefaultNIC}},
		Graphics:   domainxml.Graphics{Type: domainxml.GraphicsVNC, Listen: domainxml.DefaultListen},
		QemuAgent:  true,
	}
	d, err := domainxml.Build(nil, spec)
	if err != nil {
		return "", err
	}
	err = domainxml.SetMachineMeta(d, domainxml.MachineMeta{Namespace: req.Namespace, Name: req.Name,
		Network: p.Network, BasePool: req.BasePool, DomainPool: p.Pool, Image: req.Image})
	if err != nil {
		return "", err
	}
	return d.Marshal()
}

// leftovers finds parts of a machine with these names that exist without its domain.
// A domain of that name is an error: it is another machine (or this one, untracked).
func leftovers(ctx context.Context, api MachineAPI, p MachineParts) (partSet, error) {
	_, err := api.LookupDomain(ctx, p.Domain)
	switch {
	case err == nil:
		return 0, fmt.Errorf("a domain named %s already exists on the host: it is a machine with the same namespace and name "+
			"(import it: terraform import <address> %s), or another object to rename", p.Domain, p.Domain)
	case !errors.Is(err, libvirt.ErrNotFound):
		return 0, err
	}
	if p.UID != "" {
		if _, err := api.LookupDomain(ctx, p.UID); err == nil {
			return 0, fmt.Errorf("a domain with UUID %s already exists on the host: choose another uid", p.UID)
		} else if !errors.Is(err, libvirt.ErrNotFound) {
			return 0, err
		}
	}
	var found partSet
	for _, v := range []struct {
		name string
		part partSet
	}{{p.Root, partRoot}, {p.Seed, partSeed}} {
		_, err := api.VolumeInfo(ctx, libvirt.VolumeRef{Pool: p.Pool, Name: v.name})
		switch {
		case err == nil:
			found |= v.part
		case !errors.Is(err, libvirt.ErrNotFound):
			return 0, err
		}
	}
	h, err := MachineReservation(ctx, api, p.Network, p.MAC)
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		return 0, err
	}
	if h != nil {
		found |= partReservation
	}
	return found, nil
}
