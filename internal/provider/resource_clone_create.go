package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Creating a clone: its disks, its varstore, its domain — and undoing all of it when a
// later step fails.

// rollback undoes a failed create: the domain (with its varstore) and every disk made.
type rollback struct {
	client  *libvirt.Client
	domain  string
	volumes []string // keys
}

func (rb *rollback) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	var errs []error
	if rb.domain != "" {
		_, err := rb.client.ShutdownDomain(ctx, rb.domain, 0)
		if err == nil {
			err = rb.client.UndefineDomain(ctx, rb.domain)
		}
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, fmt.Errorf("remove the half-made domain %s: %w", rb.domain, err))
		}
	}
	for i := len(rb.volumes) - 1; i >= 0; i-- {
		if err := rb.client.DeleteVolume(ctx, libvirt.VolumeRef{Key: rb.volumes[i]}); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, fmt.Errorf("delete the half-made disk %s: %w", rb.volumes[i], err))
		}
	}
	return errors.Join(errs...)
}

func (r *cloneResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan cloneModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 30*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := plan.Name.ValueString()
	summary := "Unable to create libvirt clone " + name
	rb := &rollback{client: r.client}
	id, err := r.create(ctx, &plan, rb, &resp.Diagnostics)
	if err != nil {
		if rerr := rb.run(ctx); rerr != nil {
			err = fmt.Errorf("%w\n\nRolling back failed too, remove these by hand: %v", err, rerr)
		} else if rb.domain != "" || len(rb.volumes) > 0 {
			err = fmt.Errorf("%w\n\nEverything the create had made was removed again", err)
		}
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer rcancel()
	got, err := r.read(rctx, id, &plan)
	if err != nil {
		// The clone exists and is complete: keep it tracked, report the failed read.
		plan.ID = types.StringValue(id)
		fillCloneUnknowns(&plan)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		resp.Diagnostics.AddError(summary, "read the clone back: "+err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, got)...)
}

// create makes the clone; rb learns everything made, for the caller to undo on error.
func (r *cloneResource) create(ctx context.Context, plan *cloneModel, rb *rollback, diags interface{ AddWarning(string, string) }) (string, error) {
	name := plan.Name.ValueString()
	srcID := plan.SourceDomainID.ValueString()
	mode := plan.Mode.ValueString()
	if _, err := r.client.LookupDomain(ctx, name); err == nil {
		return "", fmt.Errorf("a domain named %q already exists on %s", name, r.client.URI())
	} else if !errors.Is(err, libvirt.ErrNotFound) {
		return "", err
	}
	src, err := r.source(ctx, srcID)
	if errors.Is(err, libvirt.ErrNotFound) {
		return "", fmt.Errorf("the source domain %q does not exist on %s", srcID, r.client.URI())
	}
	if err != nil {
		return "", err
	}
	srcName := src.inactive.Name
	active := src.status.Active

	vols := make([]*libvirt.DiskVolume, len(src.disks))
	for i, sd := range src.disks {
		v, err := r.client.DiskVolumeByPath(ctx, sd.Path, sd.Pool, sd.Volume)
		if errors.Is(err, libvirt.ErrNotFound) {
			return "", fmt.Errorf("disk %s of the source domain %s (%s) is in no libvirt storage pool: a clone copies disks through libvirt's "+
				"storage API, so define a pool for its directory", sd.Target, srcName, sd.Path+sd.Volume)
		}
		if err != nil {
			return "", fmt.Errorf("disk %s of the source domain %s: %w", sd.Target, srcName, err)
		}
		vols[i] = v
	}
	pool := plan.Pool.ValueString()
	if !known(plan.Pool) {
		pool = vols[0].Pool
	}
	if err := r.client.PoolExists(ctx, pool); errors.Is(err, libvirt.ErrNotFound) {
		return "", fmt.Errorf("the storage pool %q for the clone's disks does not exist on %s", pool, r.client.URI())
	} else if err != nil {
		return "", err
	}
	var ci *domainxml.CloudInit
	if known(plan.CloudinitID) {
		p, _, err := r.client.DiskSource(ctx, plan.CloudinitID.ValueString(), "")
		if err != nil {
			return "", fmt.Errorf("cloudinit_id: %w", err)
		}
		ci = &domainxml.CloudInit{ID: plan.CloudinitID.ValueString(), Path: p}
	}

	var avoid []string
	if src.inactive.Devices != nil {
		for _, n := range src.inactive.Devices.Interfaces {
			if n.MAC != nil {
				avoid = append(avoid, n.MAC.Address)
			}
		}
	}
	spec := domainxml.CloneSpec{
		Name:      name,
		UUID:      uuid.NewString(),
		VCPU:      uint(plan.VCPU.ValueInt64()),
		MemoryMiB: uint64(plan.MemoryMiB.ValueInt64()),
		MACs:      domainxml.CloneMACs(name, len(avoid), avoid),
		CloudInit: ci,
		Meta: domainxml.CloneMeta{SourceID: srcID, SourceUUID: src.inactive.UUID, Mode: mode, Pool: pool,
			Running: src.status.State},
	}
	if src.inactive.Devices != nil && len(spec.MACs) != len(src.inactive.Devices.Interfaces) {
		// An interface without a MAC in the definition (libvirt always writes one).
		spec.MACs = domainxml.CloneMACs(name, len(src.inactive.Devices.Interfaces), avoid)
	}
	uefi := domainxml.Firmware(src.inactive) == domainxml.FirmwareUEFI
	srcNVRAM := ""
	if uefi {
		srcNVRAM = domainxml.NVRAMPath(src.inactive)
		if srcNVRAM == "" && src.live != nil {
			srcNVRAM = domainxml.NVRAMPath(src.live)
		}
		if srcNVRAM == "" {
			// libvirt's own choice for a domain that names none: <nvram dir>/<name>_VARS.fd.
			srcNVRAM = domainxml.CloneNVRAMPath("", srcName)
		}
		spec.NVRAM = domainxml.CloneNVRAMPath(srcNVRAM, name)
	}
	// Check the definition before making anything (sizing, devices), with placeholder disks.
	dry := spec
	for _, sd := range src.disks {
		dry.Disks = append(dry.Disks, domainxml.CloneDisk{Target: sd.Target, Path: "/dev/null", Format: "qcow2"})
	}
	if _, err := domainxml.DeriveClone(src.inactive, dry); err != nil {
		return "", err
	}

	// The disks.
	for i, sd := range src.disks {
		v := vols[i]
		vspec := libvirt.VolumeSpec{Pool: pool, Name: domainxml.CloneVolumeName(name, sd.Target), Format: "qcow2"}
		var made *libvirt.VolumeInfo
		backing := ""
		switch {
		case !active && mode == domainxml.CloneLinked:
			backing = v.Path
			made, err = r.client.CreateVolumeOver(ctx, vspec, v.Capacity, v.Path, v.Format)
		case !active:
			made, err = r.client.CloneVolume(ctx, vspec, libvirt.VolumeRef{Key: v.Key})
		default:
			shallow := mode == domainxml.CloneLinked && v.Backing != ""
			if shallow {
				backing = v.Backing
				made, err = r.client.CreateVolumeOver(ctx, vspec, v.Capacity, v.Backing, v.BackingFormat)
			} else {
				made, err = r.client.CreateVolumeOver(ctx, vspec, v.Capacity, "", "")
			}
			if err == nil {
				rb.volumes = append(rb.volumes, made.Key)
				tflog.Info(ctx, "copying a disk of a running source with a block copy", map[string]any{"source": srcName, "disk": sd.Target, "shallow": shallow})
				err = r.client.CopyDiskLive(ctx, src.status.Domain.Name, sd.Target, made.Path, "qcow2", shallow)
				if err == nil {
					made, err = r.client.VolumeInfo(ctx, libvirt.VolumeRef{Key: made.Key}) // the size after the copy
				}
				if err != nil {
					return "", fmt.Errorf("disk %s: %w", sd.Target, err)
				}
				made.Backing = backing
			}
		}
		if err != nil {
			return "", fmt.Errorf("disk %s: %w", sd.Target, err)
		}
		if !active {
			rb.volumes = append(rb.volumes, made.Key)
		}
		spec.Disks = append(spec.Disks, domainxml.CloneDisk{Target: sd.Target, Path: made.Path, Format: "qcow2", Key: made.Key})
		spec.Meta.Disks = append(spec.Meta.Disks, domainxml.CloneMetaDisk{Target: sd.Target, Key: made.Key, Pool: pool,
			Name: vspec.Name, Path: made.Path, Backing: backing})
	}
	if !active && mode == domainxml.CloneLinked {
		diags.AddWarning("The source of linked clone "+name+" is now its backing image",
			fmt.Sprintf("Domain %s was shut off, so clone %s's disks are overlays directly on its disks. Keep %s shut off while "+
				"linked clones of it exist: writes to its disks would change what the clones read. Clone a running source, or "+
				"use mode = \"full\", for a source that keeps running.", srcName, name, srcName))
	}

	dom, err := domainxml.DeriveClone(src.inactive, spec)
	if err != nil {
		return "", err
	}
	text, err := dom.Marshal()
	if err != nil {
		return "", fmt.Errorf("build the clone's XML: %w", err)
	}
	tflog.Debug(ctx, "defining clone", map[string]any{"name": name, "xml": text})
	d, err := r.client.DefineDomain(ctx, name, text)
	if err != nil {
		if libvirt.IsTransport(err) {
			rb.domain = name // it may have been defined: the rollback looks
		}
		return "", err
	}
	id := libvirt.UUIDString(d)
	rb.domain = id

	if uefi {
		if err := r.copyNVRAM(ctx, src, srcNVRAM, spec.NVRAM); err != nil {
			return "", err
		}
	}
	if plan.Running.ValueBool() {
		if err := r.client.StartDomain(ctx, id); err != nil {
			return "", err
		}
	}
	return id, nil
}

// copyNVRAM copies the source's varstore, with a running source paused for the copy
// (a few milliseconds for a 540 KiB file) and always resumed.
func (r *cloneResource) copyNVRAM(ctx context.Context, src *cloneSource, from, to string) (err error) {
	srcID := libvirt.UUIDString(src.status.Domain)
	if src.status.State == "running" {
		if err := r.client.SuspendDomain(ctx, srcID); err != nil {
			return fmt.Errorf("pause the source %s for the copy of its nvram: %w", src.inactive.Name, err)
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if rerr := r.client.ResumeDomain(rctx, srcID); rerr != nil {
				err = errors.Join(err, fmt.Errorf("resume the source %s after the copy of its nvram (it is paused: `virsh resume %s`): %w",
					src.inactive.Name, src.inactive.Name, rerr))
			}
		}()
	}
	copied, err := r.client.CopyNVRAM(ctx, from, to)
	if err != nil {
		return err
	}
	if !copied {
		tflog.Info(ctx, "the source has no nvram varstore yet; libvirt makes the clone's from the firmware template", map[string]any{"source_nvram": from})
	}
	return nil
}
