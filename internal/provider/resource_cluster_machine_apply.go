package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// machineParts names everything a cluster machine is made of on the host.
type machineParts struct {
	domain  string // domain name
	uid     string // domain UUID ("" when not known)
	mac     string
	network string
	pool    string // domain_pool
	root    string // root volume name
	seed    string // seed volume name
}

func newMachineParts(namespace, name, uid, network, pool string) machineParts {
	dn := capi.DomainName(namespace, name)
	return machineParts{domain: dn, uid: uid, mac: capi.MAC(dn), network: network, pool: pool,
		root: capi.RootVolumeName(dn), seed: capi.SeedVolumeName(dn)}
}

func machinePartsOf(m *clusterMachineModel) machineParts {
	p := newMachineParts(m.Namespace.ValueString(), m.Name.ValueString(), m.UID.ValueString(), m.Network.ValueString(), m.DomainPool.ValueString())
	if known(m.DomainName) && m.DomainName.ValueString() != "" {
		p.domain = m.DomainName.ValueString()
	}
	if known(m.MAC) && m.MAC.ValueString() != "" {
		p.mac = m.MAC.ValueString()
	}
	return p
}

// domainID is how the domain is looked up: by UUID when known (a domain of the same
// name that is not this machine's is never touched), else by name.
func (p machineParts) domainID() string {
	if p.uid != "" {
		return p.uid
	}
	return p.domain
}

type partSet int

const (
	partDomain partSet = 1 << iota
	partRoot
	partSeed
	partReservation
	partsAll = partDomain | partRoot | partSeed | partReservation
)

// removeParts removes the named parts in dependency order (domain, volumes, reservation);
// a part already gone counts as removed. It tries every part and reports every failure.
func (r *clusterMachineResource) removeParts(ctx context.Context, p machineParts, which partSet) error {
	var errs []error
	for _, f := range r.removeEach(ctx, p, which) {
		errs = append(errs, f.err)
	}
	return errors.Join(errs...)
}

// partFailure is a part that could not be removed, and why.
type partFailure struct {
	part partSet
	err  error
}

// removeEach is removeParts that reports each part it could not remove, in order.
func (r *clusterMachineResource) removeEach(ctx context.Context, p machineParts, which partSet) []partFailure {
	var out []partFailure
	gone := func(part partSet, what string, err error) {
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			out = append(out, partFailure{part, fmt.Errorf("%s: %w", what, err)})
		}
	}
	if which&partDomain != 0 {
		_, err := r.client.ShutdownDomain(ctx, p.domainID(), cmShutdownTimeout)
		if err == nil {
			err = r.client.UndefineDomain(ctx, p.domainID())
		}
		gone(partDomain, "remove domain "+p.domain, err)
	}
	if which&partRoot != 0 {
		gone(partRoot, "delete volume "+p.pool+"/"+p.root, r.client.DeleteVolume(ctx, libvirt.VolumeRef{Pool: p.pool, Name: p.root}))
	}
	if which&partSeed != 0 {
		gone(partSeed, "delete volume "+p.pool+"/"+p.seed, r.client.DeleteVolume(ctx, libvirt.VolumeRef{Pool: p.pool, Name: p.seed}))
	}
	if which&partReservation != 0 {
		gone(partReservation, "remove the DHCP reservation of "+p.mac+" in network "+p.network, r.client.ReleaseMachineAddress(ctx, p.network, p.mac))
	}
	return out
}

// rollbackBudget bounds a rollback, waits for the daemon included.
const rollbackBudget = 3 * time.Minute

// rollbackWaitMax is the longest pause between two rounds of a rollback that waits for
// the daemon to answer again.
const rollbackWaitMax = 5 * time.Second

// removeSettled is removeParts for a rollback: the parts whose removal failed on the
// connection (the daemon restarting, a dropped link: often what failed the create too)
// are tried again, with pauses, until ctx ends or stop closes. A rollback that gave up at
// once would leave exactly what it is there to remove. libvirt's own refusals are not
// retried.
func (r *clusterMachineResource) removeSettled(ctx context.Context, stop <-chan struct{}, p machineParts, which partSet) error {
	var final []error
	wait := 500 * time.Millisecond
	for {
		var retry partSet
		var last []error
		for _, f := range r.removeEach(ctx, p, which) {
			if libvirt.IsTransport(f.err) && ctx.Err() == nil {
				retry |= f.part
				last = append(last, f.err)
			} else {
				final = append(final, f.err)
			}
		}
		if retry == 0 {
			return errors.Join(final...)
		}
		tflog.Warn(ctx, "rollback: the daemon does not answer; trying again", map[string]any{"parts": partNames(p, retry), "wait": wait.String()})
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Join(append(final, last...)...)
		case <-stop:
			t.Stop()
			return errors.Join(append(final, last...)...)
		}
		which, wait = retry, min(2*wait, rollbackWaitMax)
	}
}

// unknownOutcome reports whether a write that failed with err may have been carried out
// all the same: the connection broke under it (the daemon may have done it and lost the
// answer), or the create's context ended while it was in flight. What such a step makes
// goes into the rollback, which takes a part that is not there as removed.
func unknownOutcome(ctx context.Context, err error) bool {
	return libvirt.IsTransport(err) || ctx.Err() != nil
}

// rollback removes what a failed create made (made) or may have made (unsure: the
// step whose answer was lost), on a deadline of its own (the create's may be what ran
// out), and returns the error to report: the failed step, then what was removed or what
// could not be. After Ctrl-C (ctx cancelled, not timed out) it makes one round and does
// not wait for an unreachable daemon.
func (r *clusterMachineResource) rollback(ctx context.Context, p machineParts, made, unsure partSet, step string, cause error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackBudget)
	defer cancel()
	stop := make(chan struct{})
	defer context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			close(stop)
		}
	})()
	unsure &^= made
	if made|unsure == 0 {
		return fmt.Errorf("%s failed: %w. Nothing was left on the host", step, cause)
	}
	var what []string
	if made != 0 {
		what = append(what, "what this create had made: "+partNames(p, made))
	}
	if unsure != 0 {
		what = append(what, "what it may have made (the answer to that step was lost): "+partNames(p, unsure))
	}
	names := strings.Join(what, "; ")
	if err := r.removeSettled(rctx, stop, p, made|unsure); err != nil {
		return fmt.Errorf("%s failed: %w. Rolling back failed too (it was removing %s); remove what is left by hand: %w", step, cause, names, err)
	}
	return fmt.Errorf("%s failed: %w. Rolled back %s", step, cause, names)
}

func partNames(p machineParts, s partSet) string {
	var out []string
	if s&partRoot != 0 {
		out = append(out, "volume "+p.pool+"/"+p.root)
	}
	if s&partSeed != 0 {
		out = append(out, "volume "+p.pool+"/"+p.seed)
	}
	if s&partReservation != 0 {
		out = append(out, "DHCP reservation of "+p.mac+" in network "+p.network)
	}
	if s&partDomain != 0 {
		out = append(out, "domain "+p.domain)
	}
	return strings.Join(out, ", ")
}

// leftovers finds parts of a machine with these names that exist without its domain.
// A domain of that name is an error: it is another machine (or this one, untracked).
func (r *clusterMachineResource) leftovers(ctx context.Context, p machineParts) (partSet, error) {
	_, err := r.client.LookupDomain(ctx, p.domain)
	switch {
	case err == nil:
		return 0, fmt.Errorf("a domain named %s already exists on the host: it is a machine with the same namespace and name "+
			"(import it: terraform import <address> %s), or another object to rename", p.domain, p.domain)
	case !errors.Is(err, libvirt.ErrNotFound):
		return 0, err
	}
	if p.uid != "" {
		if _, err := r.client.LookupDomain(ctx, p.uid); err == nil {
			return 0, fmt.Errorf("a domain with UUID %s already exists on the host: choose another uid", p.uid)
		} else if !errors.Is(err, libvirt.ErrNotFound) {
			return 0, err
		}
	}
	var found partSet
	for _, v := range []struct {
		name string
		part partSet
	}{{p.root, partRoot}, {p.seed, partSeed}} {
		_, err := r.client.VolumeInfo(ctx, libvirt.VolumeRef{Pool: p.pool, Name: v.name})
		switch {
		case err == nil:
			found |= v.part
		case !errors.Is(err, libvirt.ErrNotFound):
			return 0, err
		}
	}
	h, err := r.client.MachineReservation(ctx, p.network, p.mac)
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		return 0, err
	}
	if h != nil {
		found |= partReservation
	}
	return found, nil
}

func (r *clusterMachineResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterMachineModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 20*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if !known(plan.UID) || plan.UID.ValueString() == "" {
		plan.UID = types.StringValue(uuid.NewString())
	}
	ns, name, uid := plan.Namespace.ValueString(), plan.Name.ValueString(), plan.UID.ValueString()
	p := newMachineParts(ns, name, uid, plan.Network.ValueString(), plan.DomainPool.ValueString())
	summary := fmt.Sprintf("Unable to create libvirt cluster machine %s/%s (domain %s)", ns, name, p.domain)
	vcpu, mem := uint(plan.VCPU.ValueInt64()), uint64(plan.MemoryMiB.ValueInt64())

	// Checks before anything is made.
	meta, err := cloudinit.MetaData(uid, name)
	if err != nil {
		resp.Diagnostics.AddError(summary, "render meta-data: "+err.Error())
		return
	}
	iso, _, err := cloudinit.BuildISO(cloudinit.Seed{UserData: plan.UserData.ValueString(), MetaData: meta})
	if err != nil {
		resp.Diagnostics.AddError(summary, "build the cloud-init seed: "+err.Error())
		return
	}
	host, err := r.client.HostInfo(ctx)
	if err != nil {
		resp.Diagnostics.AddError(summary, "read the host's capabilities: "+err.Error())
		return
	}
	if host.DefaultDomainType == "" {
		resp.Diagnostics.AddError(summary, "The host offers neither kvm nor qemu domains for its architecture.")
		return
	}
	old, err := r.leftovers(ctx, p)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if old != 0 {
		if err := r.removeParts(ctx, p, old); err != nil {
			resp.Diagnostics.AddError(summary, fmt.Sprintf("remove what an earlier machine %s/%s left without its domain (%s): %v", ns, name, partNames(p, old), err))
			return
		}
		resp.Diagnostics.AddWarning("Removed leftovers of cluster machine "+p.domain,
			fmt.Sprintf("The host held %s for machine %s/%s without its domain (the domain was removed outside Terraform, or an "+
				"earlier run was interrupted). They were removed and are made afresh.", partNames(p, old), ns, name))
	}

	// made: what this create has made. A step whose outcome is unknown (unknownOutcome)
	// names its part when it fails, and the rollback removes that too: a define or a
	// reservation whose answer was lost may well have been carried out.
	var made partSet
	fail := func(step string, err error, part partSet) {
		var unsure partSet
		if unknownOutcome(ctx, err) {
			unsure = part
		}
		resp.Diagnostics.AddError(summary, r.rollback(ctx, p, made, unsure, step, err).Error())
	}

	// 1. The root disk: a qcow2 overlay on the image.
	rootInfo, err := r.client.CreateOverlay(ctx,
		libvirt.VolumeSpec{Pool: p.pool, Name: p.root, Format: "qcow2", Capacity: uint64(plan.DiskGiB.ValueInt64()) << 30},
		libvirt.VolumeRef{Pool: plan.BasePool.ValueString(), Name: plan.Image.ValueString()})
	if err != nil {
		fail("creating the root volume "+p.pool+"/"+p.root+" on image "+plan.BasePool.ValueString()+"/"+plan.Image.ValueString(), err, partRoot)
		return
	}
	made |= partRoot

	// 2. The seed.
	seedInfo, err := r.client.UploadBytes(ctx, libvirt.VolumeSpec{Pool: p.pool, Name: p.seed, Format: "raw"}, "the cloud-init seed", iso)
	if err != nil {
		fail("creating the seed volume "+p.pool+"/"+p.seed, err, partSeed)
		return
	}
	made |= partSeed

	// 3. The address.
	h, err := r.client.ReserveMachineAddress(ctx, p.network, p.domain, p.mac)
	if err != nil {
		fail("reserving an address for "+p.mac+" in network "+p.network, err, partReservation)
		return
	}
	made |= partReservation
	tflog.Info(ctx, "reserved machine address", map[string]any{"domain": p.domain, "mac": p.mac, "ip": h.IP})

	// 4. The domain.
	text, err := machineDomainXML(p, &plan, host.DefaultDomainType, rootInfo, seedInfo, vcpu, mem)
	if err != nil {
		fail("building the domain definition of "+p.domain, err, 0)
		return
	}
	tflog.Debug(ctx, "defining cluster machine domain", map[string]any{"name": p.domain, "xml": text})
	if _, err := r.client.DefineDomain(ctx, p.domain, text); err != nil {
		fail("defining domain "+p.domain, err, partDomain)
		return
	}
	made |= partDomain
	running := plan.Running.ValueBool()
	if err := r.client.SetDomainAutostart(ctx, uid, running); err != nil {
		fail("setting autostart of domain "+p.domain, err, 0)
		return
	}
	if running {
		if err := r.client.StartDomain(ctx, uid); err != nil {
			fail("starting domain "+p.domain, err, 0)
			return
		}
	}
	plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	plan.ID = plan.UID

	// Everything is made: from here on the machine is in state, whatever happens.
	var waitErr error
	if running {
		_, waitErr = r.client.WaitForLease(ctx, p.network, p.mac, h.IP, leaseTimeout(&plan))
		if waitErr != nil {
			waitErr = fmt.Errorf("machine %s was created and stays in state (tainted: the next apply replaces it), but the guest "+
				"took no lease of its reserved address %s: %w. Check that the image boots and runs DHCP on its NIC, or raise lease_timeout",
				p.domain, h.IP, waitErr)
		}
	}
	r.finish(ctx, &plan, &resp.State, &resp.Diagnostics, summary, waitErr)
}

// finish reads the machine back into state after create or update and reports err.
func (r *clusterMachineResource) finish(ctx context.Context, plan *clusterMachineModel, state stateSetter, d *diag.Diagnostics, summary string, err error) {
	got, rerr := readBack(ctx, func(ctx context.Context) (*clusterMachineModel, error) {
		return r.read(ctx, plan.UID.ValueString(), plan)
	})
	if rerr != nil {
		if err == nil {
			err = rerr
		}
		got = plan
		if !known(got.IP) {
			got.IP = types.StringValue("")
		}
		if !known(got.Addresses) {
			got.Addresses = stringList(nil)
		}
		fillMachineComputed(got)
	}
	d.Append(state.Set(ctx, got)...)
	if err != nil {
		d.AddError(summary, err.Error())
	}
}

// fillMachineComputed sets computed values that only depend on inputs.
func fillMachineComputed(m *clusterMachineModel) {
	p := machinePartsOf(m)
	if !known(m.ID) {
		m.ID = m.UID
	}
	m.ProviderID = types.StringValue(capi.ProviderID(m.UID.ValueString()))
	m.DomainName = types.StringValue(p.domain)
	m.MAC = types.StringValue(p.mac)
	if !known(m.MaxVCPU) {
		m.MaxVCPU = types.Int64Value(m.VCPU.ValueInt64() * cmHeadroom)
	}
	if !known(m.MaxMemoryMiB) {
		m.MaxMemoryMiB = types.Int64Value(m.MemoryMiB.ValueInt64() * cmHeadroom)
	}
	if !known(m.UpdateMethod) {
		m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	}
}

// machineDomainXML is the machine's domain: the overlay as a virtio disk, the seed as a
// cdrom, one virtio NIC with the derived MAC, the guest-agent channel, VNC on
// 127.0.0.1, and 2x headroom for vcpu and memory.
func machineDomainXML(p machineParts, m *clusterMachineModel, domType string, root, seed *libvirt.VolumeInfo, vcpu uint, mem uint64) (string, error) {
	spec := domainxml.Spec{
		Name: p.domain, UUID: p.uid, Type: domType,
		VCPU: vcpu, MaxVCPU: vcpu * cmHeadroom, MemoryMiB: mem, MaxMemoryMiB: mem * cmHeadroom,
		Disks: []domainxml.Disk{{VolumeID: p.pool + "/" + p.root, Path: root.Path, Device: domainxml.DeviceDisk,
			Bus: "virtio", Target: "vda", Format: "qcow2"}},
		CloudInit:  &domainxml.CloudInit{ID: p.pool + "/" + p.seed, Path: seed.Path},
		Interfaces: []domainxml.Interface{{Network: p.network, MAC: p.mac, Model: domainxml.DefaultNIC}},
		Graphics:   domainxml.Graphics{Type: domainxml.GraphicsVNC, Listen: domainxml.DefaultListen},
		QemuAgent:  true,
	}
	d, err := domainxml.Build(nil, spec)
	if err != nil {
		return "", err
	}
	err = domainxml.SetMachineMeta(d, domainxml.MachineMeta{Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(),
		Network: p.network, BasePool: m.BasePool.ValueString(), DomainPool: p.pool, Image: m.Image.ValueString()})
	if err != nil {
		return "", err
	}
	return d.Marshal()
}

// read builds the model from the host: the domain (sizing, state, metadata), the root
// volume (disk_gib), the reservation (ip) and one look at the leases (addresses). It
// never waits. prior supplies what the host does not keep; an imported machine (prior
// without namespace) is filled from the domain's metadata and its seed.
func (r *clusterMachineResource) read(ctx context.Context, id string, prior *clusterMachineModel) (*clusterMachineModel, error) {
	st, err := r.client.GetDomainStatus(ctx, id)
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
	spec := parsed.Spec
	m := *prior
	if !known(m.Namespace) || m.Namespace.ValueString() == "" {
		if err := r.readImported(ctx, &def, &m); err != nil {
			return nil, err
		}
	}
	uid := strings.ToLower(def.UUID)
	m.UID, m.ID = types.StringValue(uid), types.StringValue(uid)
	m.ProviderID = types.StringValue(capi.ProviderID(uid))
	m.DomainName = types.StringValue(def.Name)
	mac := capi.MAC(def.Name)
	if len(spec.Interfaces) > 0 && spec.Interfaces[0].MAC != "" {
		mac = spec.Interfaces[0].MAC
	}
	m.MAC = types.StringValue(mac)
	m.VCPU = types.Int64Value(int64(spec.VCPU))
	m.MaxVCPU = types.Int64Value(int64(spec.EffectiveMaxVCPU()))
	m.MemoryMiB = types.Int64Value(int64(spec.MemoryMiB))
	m.MaxMemoryMiB = types.Int64Value(int64(spec.EffectiveMaxMemoryMiB()))
	m.Running = types.BoolValue(st.Active)
	if !known(m.UpdateMethod) {
		m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	}
	if !known(m.LeaseTimeout) {
		m.LeaseTimeout = types.StringValue(cmDefaultLeaseTimeout)
	}

	p := machinePartsOf(&m)
	info, err := r.client.VolumeInfo(ctx, libvirt.VolumeRef{Pool: p.pool, Name: p.root})
	switch {
	case err == nil:
		m.DiskGiB = types.Int64Value(int64(info.Capacity >> 30))
	case errors.Is(err, libvirt.ErrNotFound):
		tflog.Warn(ctx, "the root volume of a cluster machine is gone", map[string]any{"domain": p.domain, "volume": p.pool + "/" + p.root})
	default:
		return nil, err
	}

	h, err := r.client.MachineReservation(ctx, p.network, mac)
	switch {
	case err == nil && h != nil:
		m.IP = types.StringValue(h.IP)
	case err == nil || errors.Is(err, libvirt.ErrNotFound):
		m.IP = types.StringValue("")
	default:
		return nil, err
	}

	var addrs []string
	if st.Active {
		leases, err := r.client.NetworkLeases(ctx, p.network)
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			return nil, err
		}
		for _, l := range leases[mac] {
			if libvirt.UsableAddress(l.IP) {
				addrs = append(addrs, l.IP)
			}
		}
		sort.Strings(addrs)
		if len(addrs) == 0 && known(prior.Addresses) {
			m.Addresses = prior.Addresses // a lease may be renewing: keep the last known
		} else {
			m.Addresses = stringList(addrs)
		}
	} else {
		m.Addresses = stringList(nil)
	}
	return &m, nil
}

// readImported fills the inputs of an imported machine from its domain's metadata and
// its seed volume (user-data).
func (r *clusterMachineResource) readImported(ctx context.Context, def *libvirtxml.Domain, m *clusterMachineModel) error {
	meta, ok := domainxml.ParseMachineMeta(def)
	if !ok {
		return fmt.Errorf("domain %s was not made by libvirt_cluster_machine (its metadata has no %s element): import it as a libvirt_domain instead", def.Name, domainxml.MachineMetadataNS)
	}
	m.Namespace, m.Name = types.StringValue(meta.Namespace), types.StringValue(meta.Name)
	m.Network, m.BasePool = types.StringValue(meta.Network), types.StringValue(meta.BasePool)
	m.DomainPool, m.Image = types.StringValue(meta.DomainPool), types.StringValue(meta.Image)
	m.LeaseTimeout = types.StringValue(cmDefaultLeaseTimeout)
	m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	m.UserData = types.StringNull()
	seed := capi.SeedVolumeName(def.Name)
	var files map[string][]byte
	// A download that comes back garbled (seen about once in a few dozen runs under load:
	// the image then does not parse) is tried again; the seed is a few KiB.
	for attempt := 1; ; attempt++ {
		var buf bytes.Buffer
		if err := r.client.DownloadVolume(ctx, libvirt.VolumeRef{Pool: meta.DomainPool, Name: seed}, &buf); err != nil {
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
		tflog.Warn(ctx, "the downloaded seed does not parse; downloading it again", map[string]any{"volume": meta.DomainPool + "/" + seed, "bytes": buf.Len(), "error": err.Error()})
	}
	if ud := files[cloudinit.UserDataFile]; len(ud) > 0 {
		m.UserData = types.StringValue(string(ud))
	}
	return nil
}
