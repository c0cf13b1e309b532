package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// CloneAPI is what making a clone asks of libvirt.
type CloneAPI interface {
	LookupDomain(ctx context.Context, id string) (libvirt.Domain, error)
	GetDomainStatus(ctx context.Context, id string) (*libvirt.DomainStatus, error)
	DiskVolumeByPath(ctx context.Context, path, pool, volume string) (*libvirt.DiskVolume, error)
	PoolExists(ctx context.Context, name string) error
	DiskSource(ctx context.Context, volumeID, path string) (string, string, error)
	CreateVolumeOver(ctx context.Context, spec libvirt.VolumeSpec, capacity uint64, backing, backingFormat string) (*libvirt.VolumeInfo, error)
	CloneVolume(ctx context.Context, spec libvirt.VolumeSpec, from libvirt.VolumeRef) (*libvirt.VolumeInfo, error)
	CopyDiskLive(ctx context.Context, domain, target, dest, destFormat string, shallow bool) error
	VolumeInfo(ctx context.Context, ref libvirt.VolumeRef) (*libvirt.VolumeInfo, error)
	DefineDomain(ctx context.Context, name, xml string) (libvirt.Domain, error)
	SuspendDomain(ctx context.Context, id string) error
	ResumeDomain(ctx context.Context, id string) error
	CopyNVRAM(ctx context.Context, src, dst string) (bool, error)
	StartDomain(ctx context.Context, id string) error
	// For the rollback.
	ShutdownDomain(ctx context.Context, id string, timeout time.Duration) (bool, error)
	UndefineDomain(ctx context.Context, id string) error
	DeleteVolume(ctx context.Context, ref libvirt.VolumeRef) error
}

// Logf reports a step (tflog in the provider); nil is silent.
type Logf func(msg string, fields map[string]any)

func (l Logf) log(msg string, fields map[string]any) {
	if l != nil {
		l(msg, fields)
	}
}

// CloneRequest is a clone to make.
type CloneRequest struct {
	SourceID    string // the source domain's UUID or name, as the user wrote it
	Name        string
	Mode        string // domainxml.CloneLinked or domainxml.CloneFull
	Pool        string // for the clone's disks; "" = the pool of the source's first disk
	VCPU        uint   // 0: the source's
	MemoryMiB   uint64 // 0: the source's
	CloudinitID string // the clone's own seed ("" = none)
	Running     bool
	Log         Logf
}

// CloneResult is a clone made.
type CloneResult struct {
	ID       string   // its UUID
	Warnings []string // things the user should know (a linked clone of a shut-off source)
}

// CloneSource is one look at a clone's source: its definitions, its state and its disks.
type CloneSource struct {
	Status   *libvirt.DomainStatus
	Inactive *libvirtxml.Domain
	Live     *libvirtxml.Domain // nil while it does not run
	Disks    []domainxml.SourceDisk
}

// LookupCloneSource reads the source of a clone. A missing domain is ErrNotFound; a
// source without disks to copy is an error saying so.
func LookupCloneSource(ctx context.Context, api interface {
	GetDomainStatus(ctx context.Context, id string) (*libvirt.DomainStatus, error)
}, id string) (*CloneSource, error) {
	st, err := api.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	s := &CloneSource{Status: st}
	if s.Inactive, err = domainxml.UnmarshalDomain(st.XML); err != nil {
		return nil, fmt.Errorf("parse the definition of domain %s: %w", id, err)
	}
	if st.LiveXML != "" {
		s.Live = &libvirtxml.Domain{}
		if err := s.Live.Unmarshal(st.LiveXML); err != nil {
			return nil, fmt.Errorf("parse the live definition of domain %s: %w", id, err)
		}
	}
	if s.Disks, err = domainxml.SourceDisks(s.Inactive); err != nil {
		return nil, fmt.Errorf("source domain %s: %w", s.Inactive.Name, err)
	}
	if len(s.Disks) == 0 {
		return nil, fmt.Errorf("source domain %s has no disks to clone (only disks backed by files or pool volumes are cloned)", s.Inactive.Name)
	}
	return s, nil
}

// cloneRollback is what a failed clone create removes again: the domain (with its
// varstore, which UndefineDomain removes) and every disk made, newest first.
type cloneRollback struct {
	domain  string   // UUID, or the name while a define's outcome is unknown
	volumes []string // keys
}

// rollbackTimeout bounds a rollback: it runs after the create's own deadline may have
// passed (that may be what failed it), and must not hang on a daemon that went away.
var rollbackTimeout = 2 * time.Minute

func (rb *cloneRollback) run(ctx context.Context, api CloneAPI) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	var errs []error
	if rb.domain != "" {
		_, err := api.ShutdownDomain(ctx, rb.domain, 0)
		if err == nil {
			err = api.UndefineDomain(ctx, rb.domain)
		}
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, fmt.Errorf("remove the half-made domain %s: %w", rb.domain, err))
		}
	}
	for i := len(rb.volumes) - 1; i >= 0; i-- {
		if err := api.DeleteVolume(ctx, libvirt.VolumeRef{Key: rb.volumes[i]}); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, fmt.Errorf("delete the half-made disk %s: %w", rb.volumes[i], err))
		}
	}
	return errors.Join(errs...)
}

// Clone makes a clone of a domain: its disks (overlays or whole copies, a running
// source's through a live block copy), its own UEFI varstore, its domain, started when
// asked. When a step fails, everything made so far is removed again and the error says
// so (or names what could not be removed).
func Clone(ctx context.Context, api CloneAPI, req CloneRequest) (CloneResult, error) {
	rb := &cloneRollback{}
	res, err := clone(ctx, api, req, rb)
	if err == nil {
		return res, nil
	}
	if rerr := rb.run(ctx, api); rerr != nil {
		return res, fmt.Errorf("%w\n\nRolling back failed too, remove these by hand: %w", err, rerr)
	}
	if rb.domain != "" || len(rb.volumes) > 0 {
		return res, fmt.Errorf("%w\n\nEverything the create had made was removed again", err)
	}
	return res, err
}

// clone makes the clone; rb learns everything made, for Clone to undo on error.
func clone(ctx context.Context, api CloneAPI, req CloneRequest, rb *cloneRollback) (CloneResult, error) {
	var res CloneResult
	name, srcID, mode := req.Name, req.SourceID, req.Mode
	if _, err := api.LookupDomain(ctx, name); err == nil {
		return res, fmt.Errorf("a domain named %q already exists", name)
	} else if !errors.Is(err, libvirt.ErrNotFound) {
		return res, err
	}
	src, err := LookupCloneSource(ctx, api, srcID)
	if errors.Is(err, libvirt.ErrNotFound) {
		return res, fmt.Errorf("the source domain %q does not exist", srcID)
	}
	if err != nil {
		return res, err
	}
	srcName := src.Inactive.Name
	active := src.Status.Active

	vols := make([]*libvirt.DiskVolume, len(src.Disks))
	for i, sd := range src.Disks {
		v, err := api.DiskVolumeByPath(ctx, sd.Path, sd.Pool, sd.Volume)
		if errors.Is(err, libvirt.ErrNotFound) {
			return res, fmt.Errorf("disk %s of the source domain %s (%s) is in no libvirt storage pool: a clone copies disks through libvirt's "+
				"storage API, so define a pool for its directory", sd.Target, srcName, sd.Path+sd.Volume)
		}
		if err != nil {
			return res, fmt.Errorf("disk %s of the source domain %s: %w", sd.Target, srcName, err)
		}
		vols[i] = v
	}
	pool := req.Pool
	if pool == "" {
		pool = vols[0].Pool
	}
	if err := api.PoolExists(ctx, pool); errors.Is(err, libvirt.ErrNotFound) {
		return res, fmt.Errorf("the storage pool %q for the clone's disks does not exist", pool)
	} else if err != nil {
		return res, err
	}
	var ci *domainxml.CloudInit
	if req.CloudinitID != "" {
		p, _, err := api.DiskSource(ctx, req.CloudinitID, "")
		if err != nil {
			return res, fmt.Errorf("cloudinit_id: %w", err)
		}
		ci = &domainxml.CloudInit{ID: req.CloudinitID, Path: p}
	}

	spec, srcNVRAM := cloneSpec(req, src, pool, ci)
	// Check the definition before making anything (sizing, devices), with placeholder disks.
	dry := spec
	for _, sd := range src.Disks {
		dry.Disks = append(dry.Disks, domainxml.CloneDisk{Target: sd.Target, Path: "/dev/null", Format: "qcow2"})
	}
	if _, err := domainxml.DeriveClone(src.Inactive, dry); err != nil {
		return res, err
	}

	for i, sd := range src.Disks {
		cd, md, err := cloneDisk(ctx, api, req, src, sd, vols[i], pool, rb)
		if err != nil {
			return res, fmt.Errorf("disk %s: %w", sd.Target, err)
		}
		spec.Disks = append(spec.Disks, cd)
		spec.Meta.Disks = append(spec.Meta.Disks, md)
	}
	if !active && mode == domainxml.CloneLinked {
		res.Warnings = append(res.Warnings, fmt.Sprintf("Domain %s was shut off, so clone %s's disks are overlays directly on its disks. Keep %s shut off while "+
			"linked clones of it exist: writes to its disks would change what the clones read. Clone a running source, or "+
			"use mode = \"full\", for a source that keeps running.", srcName, name, srcName))
	}

	dom, err := domainxml.DeriveClone(src.Inactive, spec)
	if err != nil {
		return res, err
	}
	text, err := dom.Marshal()
	if err != nil {
		return res, fmt.Errorf("build the clone's XML: %w", err)
	}
	req.Log.log("defining clone", map[string]any{"name": name, "xml": domainxml.LogXML(dom)})
	// The define names the clone's UUID: it is re-sent after a lost answer, and what it may
	// have made is known by that UUID, so the rollback looks for it whatever the outcome.
	rb.domain = spec.UUID
	d, err := api.DefineDomain(ctx, name, text)
	if err != nil {
		return res, err
	}
	res.ID = libvirt.UUIDString(d)
	rb.domain = res.ID

	if spec.NVRAM != "" {
		if err := copyNVRAM(ctx, api, req.Log, src, srcNVRAM, spec.NVRAM); err != nil {
			return res, err
		}
	}
	if req.Running {
		if err := api.StartDomain(ctx, res.ID); err != nil {
			return res, err
		}
	}
	return res, nil
}

// cloneSpec is what the clone changes in its source's definition, but for its disks;
// and the source's varstore path (for a UEFI source).
func cloneSpec(req CloneRequest, src *CloneSource, pool string, ci *domainxml.CloudInit) (domainxml.CloneSpec, string) {
	var avoid []string
	nics := 0
	if src.Inactive.Devices != nil {
		nics = len(src.Inactive.Devices.Interfaces)
		for _, n := range src.Inactive.Devices.Interfaces {
			if n.MAC != nil {
				avoid = append(avoid, n.MAC.Address)
			}
		}
	}
	spec := domainxml.CloneSpec{
		Name: req.Name, UUID: uuid.NewString(), VCPU: req.VCPU, MemoryMiB: req.MemoryMiB,
		// One MAC per interface, none of the source's (an interface without a MAC in the
		// definition still gets one).
		MACs:      domainxml.CloneMACs(req.Name, nics, avoid),
		CloudInit: ci,
		Meta: domainxml.CloneMeta{SourceID: req.SourceID, SourceUUID: src.Inactive.UUID, Mode: req.Mode, Pool: pool,
			Running: src.Status.State},
	}
	if domainxml.Firmware(src.Inactive) != domainxml.FirmwareUEFI {
		return spec, ""
	}
	srcNVRAM := domainxml.NVRAMPath(src.Inactive)
	if srcNVRAM == "" && src.Live != nil {
		srcNVRAM = domainxml.NVRAMPath(src.Live)
	}
	if srcNVRAM == "" {
		// libvirt's own choice for a domain that names none: <nvram dir>/<name>_VARS.fd.
		srcNVRAM = domainxml.CloneNVRAMPath("", src.Inactive.Name)
	}
	spec.NVRAM = domainxml.CloneNVRAMPath(srcNVRAM, req.Name)
	return spec, srcNVRAM
}

// cloneDisk makes the clone's copy of one source disk: an overlay on the source's disk
// (linked, shut-off source), a whole copy (full, shut-off source), or, for a running
// source, a new image filled by a live block copy (shallow onto the source disk's own
// backing file for linked clones). What it makes goes into rb at once.
func cloneDisk(ctx context.Context, api CloneAPI, req CloneRequest, src *CloneSource, sd domainxml.SourceDisk, v *libvirt.DiskVolume,
	pool string, rb *cloneRollback) (domainxml.CloneDisk, domainxml.CloneMetaDisk, error) {
	vspec := libvirt.VolumeSpec{Pool: pool, Name: domainxml.CloneVolumeName(req.Name, sd.Target), Format: "qcow2"}
	var made *libvirt.VolumeInfo
	var err error
	backing := ""
	switch {
	case !src.Status.Active && req.Mode == domainxml.CloneLinked:
		backing = v.Path
		// The overlay names its backing file's format as the source domain's definition
		// does (the creator's word), else the volume's trusted one: never a probe of
		// bytes a guest wrote.
		bf := sd.Format
		if bf == "" {
			bf = v.Format
		}
		made, err = api.CreateVolumeOver(ctx, vspec, v.Capacity, v.Path, bf)
	case !src.Status.Active:
		made, err = api.CloneVolume(ctx, vspec, libvirt.VolumeRef{Key: v.Key})
	default:
		// Shallow onto the backing file only of a disk the source domain reads as qcow2
		// (a raw disk has none, whatever its bytes say).
		shallow := req.Mode == domainxml.CloneLinked && v.Backing != "" && (sd.Format == "" || sd.Format == "qcow2")
		if shallow {
			backing = v.Backing
			made, err = api.CreateVolumeOver(ctx, vspec, v.Capacity, v.Backing, v.BackingFormat)
		} else {
			made, err = api.CreateVolumeOver(ctx, vspec, v.Capacity, "", "")
		}
		if err != nil {
			break
		}
		rb.volumes = append(rb.volumes, made.Key)
		req.Log.log("copying a disk of a running source with a block copy", map[string]any{"source": src.Inactive.Name, "disk": sd.Target, "shallow": shallow})
		if err = api.CopyDiskLive(ctx, src.Status.Domain.Name, sd.Target, made.Path, "qcow2", shallow); err != nil {
			var running *libvirt.BlockJobRunningError
			if errors.As(err, &running) {
				// QEMU may still write into the new disk: it is kept (the error says how to end
				// the job, then remove it), never deleted under a running job.
				rb.volumes = rb.volumes[:len(rb.volumes)-1]
				if running.Cleanup == "" {
					running.Cleanup = fmt.Sprintf("virsh vol-delete --pool %s %s", pool, vspec.Name)
				}
			}
			return domainxml.CloneDisk{}, domainxml.CloneMetaDisk{}, err
		}
		key := made.Key
		if made, err = api.VolumeInfo(ctx, libvirt.VolumeRef{Key: key}); err != nil { // the size after the copy
			return domainxml.CloneDisk{}, domainxml.CloneMetaDisk{}, err
		}
		made.Backing = backing
	}
	if err != nil {
		return domainxml.CloneDisk{}, domainxml.CloneMetaDisk{}, err
	}
	if !src.Status.Active {
		rb.volumes = append(rb.volumes, made.Key)
	}
	return domainxml.CloneDisk{Target: sd.Target, Path: made.Path, Format: "qcow2", Key: made.Key},
		domainxml.CloneMetaDisk{Target: sd.Target, Key: made.Key, Pool: pool, Name: vspec.Name, Path: made.Path, Backing: backing}, nil
}

// copyNVRAM copies the source's varstore, with a running source paused for the copy
// (a few milliseconds for a 540 KiB file) and always resumed.
func copyNVRAM(ctx context.Context, api CloneAPI, log Logf, src *CloneSource, from, to string) (err error) {
	srcID := libvirt.UUIDString(src.Status.Domain)
	if src.Status.State == "running" {
		if err := api.SuspendDomain(ctx, srcID); err != nil {
			return fmt.Errorf("pause the source %s for the copy of its nvram: %w", src.Inactive.Name, err)
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if rerr := api.ResumeDomain(rctx, srcID); rerr != nil {
				err = errors.Join(err, fmt.Errorf("resume the source %s after the copy of its nvram (it is paused: `virsh resume %s`): %w",
					src.Inactive.Name, src.Inactive.Name, rerr))
			}
		}()
	}
	copied, err := api.CopyNVRAM(ctx, from, to)
	if err != nil {
		return err
	}
	if !copied {
		log.log("the source has no nvram varstore yet; libvirt makes the clone's from the firmware template", map[string]any{"source_nvram": from})
	}
	return nil
}
