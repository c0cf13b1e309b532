package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// fake is a client that records every call, in order, as "Method arg ...", and fails the
// calls a test names: fail["DefineDomain"] = err fails every DefineDomain, failAt[3] the
// fourth call whatever it is. It implements every API of this package; what it returns
// comes from the fields a test sets.
type fake struct {
	mu     sync.Mutex
	calls  []string
	fail   map[string]error
	failAt map[int]error

	status *libvirt.DomainStatus // what GetDomainStatus returns (a copy)
	forced bool                  // what ShutdownDomain reports
	// releasedLive is the live XML once a DetachDeviceLive went through (the guest let
	// the device go); empty: the guest keeps it.
	releasedLive string

	// The host as a clone or machine test sees it: a source domain, the domains defined
	// (UUID -> name) and the volumes made (key -> volume), which the rollback must empty.
	source  *libvirt.DomainStatus
	defined map[string]string
	// definedXML is the definition of each domain in defined.
	definedXML map[string]string
	volumes    map[string]*libvirt.VolumeInfo
	pools      map[string]bool
	// overlays are the backing files of the overlays CreateVolumeOver made, each
	// "<path> as <format>".
	overlays []string

	// The networks of a machine test (name -> network), with their host entries and
	// leases; content holds what UploadBytes wrote (volume key -> bytes).
	networks map[string]*fakeNetwork
	content  map[string][]byte
	readWait time.Duration // how long ReadNetworkDHCP takes (a race needs two reads in flight)
}

// fakeNetwork is a network of the fake host: one list of DHCP host entries (the fake
// does not tell the persistent from the live definition) and the leases by MAC.
type fakeNetwork struct {
	def    libvirtxml.Network // its <ip> elements
	active bool
	hosts  []netaddr.DHCPHost
	leases map[string][]libvirt.Lease
}

func newFake() *fake {
	return &fake{fail: map[string]error{}, failAt: map[int]error{}, defined: map[string]string{}, definedXML: map[string]string{},
		volumes: map[string]*libvirt.VolumeInfo{}, pools: map[string]bool{"default": true},
		networks: map[string]*fakeNetwork{}, content: map[string][]byte{}}
}

var errInjected = errors.New("injected failure")

// record notes a call and returns the failure injected for it, if any.
func (f *fake) record(method string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := []string{method}
	for _, a := range args {
		parts = append(parts, fmt.Sprint(a))
	}
	f.calls = append(f.calls, strings.Join(parts, " "))
	if err, ok := f.failAt[len(f.calls)-1]; ok {
		return err
	}
	return f.fail[method]
}

// called lists the calls made, method names only.
func (f *fake) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.calls))
	for i, c := range f.calls {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}

func (f *fake) GetDomainStatus(_ context.Context, id string) (*libvirt.DomainStatus, error) {
	if err := f.record("GetDomainStatus", id); err != nil {
		return nil, err
	}
	if f.source != nil && (id == f.source.Domain.Name || id == libvirt.UUIDString(f.source.Domain)) {
		st := *f.source
		return &st, nil
	}
	if f.status == nil {
		return nil, fmt.Errorf("domain %s: %w", id, libvirt.ErrNotFound)
	}
	st := *f.status
	return &st, nil
}

func (f *fake) DefineDomain(_ context.Context, name, xml string) (libvirt.Domain, error) {
	err := f.record("DefineDomain", name)
	var d libvirtxml.Domain
	if perr := d.Unmarshal(xml); perr != nil {
		return libvirt.Domain{}, perr
	}
	u, _ := uuid.Parse(d.UUID)
	dom := libvirt.Domain{Name: name, UUID: golibvirt.UUID(u)}
	if err == nil || errors.Is(err, errLost) {
		if f.status != nil {
			f.status.XML = xml
		} else {
			f.defined[d.UUID] = name
			f.definedXML[d.UUID] = xml
		}
	}
	return dom, err
}

// errLost is a transport error after the call got through: what it did stands, its
// answer is lost (a write whose outcome is unknown).
var errLost = &libvirt.TransportError{Op: "injected", URI: "fake://", Err: io.ErrUnexpectedEOF}

func (f *fake) LookupDomain(_ context.Context, id string) (libvirt.Domain, error) {
	if err := f.record("LookupDomain", id); err != nil {
		return libvirt.Domain{}, err
	}
	for u, n := range f.defined {
		if id == u || id == n {
			return libvirt.Domain{Name: n}, nil
		}
	}
	return libvirt.Domain{}, fmt.Errorf("domain %s: %w", id, libvirt.ErrNotFound)
}

func (f *fake) UndefineDomain(_ context.Context, id string) error {
	if err := f.record("UndefineDomain", id); err != nil {
		return err
	}
	for u, n := range f.defined {
		if id == u || id == n {
			delete(f.defined, u)
			return nil
		}
	}
	return fmt.Errorf("domain %s: %w", id, libvirt.ErrNotFound)
}

func (f *fake) DiskVolumeByPath(_ context.Context, path, pool, volume string) (*libvirt.DiskVolume, error) {
	if err := f.record("DiskVolumeByPath", path); err != nil {
		return nil, err
	}
	return &libvirt.DiskVolume{Key: path, Name: "web.qcow2", Pool: "default", Path: path, Format: "qcow2", Capacity: 1 << 30,
		Backing: "/pool/base.qcow2", BackingFormat: "qcow2"}, nil
}

func (f *fake) PoolExists(_ context.Context, name string) error {
	if err := f.record("PoolExists", name); err != nil {
		return err
	}
	if !f.pools[name] {
		return fmt.Errorf("pool %s: %w", name, libvirt.ErrNotFound)
	}
	return nil
}

func (f *fake) DiskSource(_ context.Context, volumeID, path string) (string, string, error) {
	return "/pool/" + volumeID, "raw", f.record("DiskSource", volumeID)
}

// makeVolume records a volume made by a create. A create that fails leaves nothing,
// also when its answer was lost: that is the client's own contract (createVolume
// removes what a create whose answer was lost made, or says it could not).
func (f *fake) makeVolume(method string, spec libvirt.VolumeSpec) (*libvirt.VolumeInfo, error) {
	if err := f.record(method, spec); err != nil {
		return nil, err
	}
	v := &libvirt.VolumeInfo{Key: "/pool/" + spec.Name, Name: spec.Name, Pool: spec.Pool, Path: "/pool/" + spec.Name, Format: spec.Format, Capacity: 1 << 30}
	if spec.Capacity != 0 {
		v.Capacity = spec.Capacity
	}
	f.mu.Lock()
	f.volumes[v.Key] = v
	f.mu.Unlock()
	return v, nil
}

func (f *fake) CreateVolumeOver(_ context.Context, spec libvirt.VolumeSpec, _ uint64, backing, backingFormat string) (*libvirt.VolumeInfo, error) {
	f.mu.Lock()
	if backing != "" {
		f.overlays = append(f.overlays, backing+" as "+backingFormat)
	}
	f.mu.Unlock()
	return f.makeVolume("CreateVolumeOver", spec)
}

func (f *fake) CloneVolume(_ context.Context, spec libvirt.VolumeSpec, _ libvirt.VolumeRef) (*libvirt.VolumeInfo, error) {
	return f.makeVolume("CloneVolume", spec)
}

// volume finds a volume by key, or by pool and name.
func (f *fake) volume(ref libvirt.VolumeRef) (*libvirt.VolumeInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range f.volumes {
		if k == ref.Key || ref.Key == "" && v.Pool == ref.Pool && v.Name == ref.Name {
			return v, true
		}
	}
	return nil, false
}

func (f *fake) VolumeInfo(_ context.Context, ref libvirt.VolumeRef) (*libvirt.VolumeInfo, error) {
	if err := f.record("VolumeInfo", ref); err != nil {
		return nil, err
	}
	if v, ok := f.volume(ref); ok {
		c := *v
		return &c, nil
	}
	return nil, fmt.Errorf("volume %s: %w", ref, libvirt.ErrNotFound)
}

func (f *fake) DeleteVolume(_ context.Context, ref libvirt.VolumeRef) error {
	if err := f.record("DeleteVolume", ref); err != nil {
		return err
	}
	v, ok := f.volume(ref)
	if !ok {
		return fmt.Errorf("volume %s: %w", ref, libvirt.ErrNotFound)
	}
	f.mu.Lock()
	delete(f.volumes, v.Key)
	f.mu.Unlock()
	return nil
}

func (f *fake) CopyDiskLive(_ context.Context, domain, target, dest, _ string, shallow bool) error {
	return f.record("CopyDiskLive", domain, target, dest, shallow)
}

func (f *fake) SuspendDomain(_ context.Context, id string) error {
	return f.record("SuspendDomain", id)
}
func (f *fake) ResumeDomain(_ context.Context, id string) error { return f.record("ResumeDomain", id) }

func (f *fake) CopyNVRAM(_ context.Context, src, dst string) (bool, error) {
	return true, f.record("CopyNVRAM", src, dst)
}

func (f *fake) SetDomainSizing(_ context.Context, id string, vcpu uint, kib uint64, live bool) error {
	return f.record("SetDomainSizing", id, vcpu, kib, live)
}

// SetBlockIOTune records the typed parameters the client would send, name=value each.
func (f *fake) SetBlockIOTune(_ context.Context, id, target string, t libvirt.BlockIOTune) error {
	var params []string
	for _, p := range t.Params() {
		params = append(params, fmt.Sprintf("%s=%v", p.Field, p.Value.I))
	}
	return f.record("SetBlockIOTune", id, target, strings.Join(params, ","))
}

func (f *fake) UpdateDevice(_ context.Context, id, xml string, force bool) error {
	return f.record("UpdateDevice", id, force, xml)
}

func (f *fake) SetDomainMetadata(_ context.Context, id, what, value string) error {
	return f.record("SetDomainMetadata", id, what, value)
}

// SetInterfaceBandwidth records the typed parameters the client would send.
func (f *fake) SetInterfaceBandwidth(_ context.Context, id, device string, b libvirt.InterfaceBandwidth) error {
	var params []string
	for _, p := range b.Params() {
		params = append(params, fmt.Sprintf("%s=%v", p.Field, p.Value.I))
	}
	return f.record("SetInterfaceBandwidth", id, device, strings.Join(params, ","))
}

func (f *fake) AttachDevice(_ context.Context, id, xml string) error {
	return f.record("AttachDevice", id, xml)
}

func (f *fake) DetachDeviceLive(_ context.Context, id, alias, xml string) error {
	err := f.record("DetachDeviceLive", id, alias)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && f.releasedLive != "" && f.status != nil {
		f.status.LiveXML = f.releasedLive
	}
	return err
}

func (f *fake) DetachDeviceConfig(_ context.Context, id, xml string) error {
	return f.record("DetachDeviceConfig", id, xml)
}

func (f *fake) SetDomainAutostart(_ context.Context, id string, on bool) error {
	return f.record("SetDomainAutostart", id, on)
}

func (f *fake) StartDomain(_ context.Context, id string) error {
	err := f.record("StartDomain", id)
	if err == nil && f.status != nil {
		f.status.Active, f.status.State = true, "running"
	}
	return err
}

func (f *fake) ShutdownDomain(_ context.Context, id string, timeout time.Duration) (bool, error) {
	err := f.record("ShutdownDomain", id, timeout)
	if err == nil && f.status != nil {
		f.status.Active, f.status.State = false, "shutoff"
	}
	return f.forced && err == nil, err
}

// The calls of a cluster machine: its host, volumes, network and leases.

func (f *fake) URI() *libvirt.URI {
	u, err := libvirt.ParseURI("test:///default")
	if err != nil {
		panic(err)
	}
	return u
}

func (f *fake) HostInfo(context.Context) (*libvirt.HostInfo, error) {
	if err := f.record("HostInfo"); err != nil {
		return nil, err
	}
	return &libvirt.HostInfo{DefaultDomainType: "qemu"}, nil
}

func (f *fake) CreateOverlay(_ context.Context, spec libvirt.VolumeSpec, _ libvirt.VolumeRef) (*libvirt.VolumeInfo, error) {
	return f.makeVolume("CreateOverlay", spec)
}

func (f *fake) UploadBytes(_ context.Context, spec libvirt.VolumeSpec, _ string, b []byte) (*libvirt.VolumeInfo, error) {
	v, err := f.makeVolume("UploadBytes", spec)
	if err == nil {
		f.mu.Lock()
		f.content[v.Key] = b
		f.mu.Unlock()
	}
	return v, err
}

func (f *fake) DownloadVolume(_ context.Context, ref libvirt.VolumeRef, w io.Writer) error {
	if err := f.record("DownloadVolume", ref); err != nil {
		return err
	}
	v, ok := f.volume(ref)
	if !ok {
		return fmt.Errorf("volume %s: %w", ref, libvirt.ErrNotFound)
	}
	f.mu.Lock()
	b := f.content[v.Key]
	f.mu.Unlock()
	_, err := w.Write(b)
	return err
}

// addNetwork puts a network on the fake host: an IPv4 /24 (host .1) with the DHCP range
// .100 - .last.
func (f *fake) addNetwork(name, prefix string, active bool, last int) *fakeNetwork {
	n := &fakeNetwork{active: active, leases: map[string][]libvirt.Lease{}, def: libvirtxml.Network{Name: name, IPs: []libvirtxml.NetworkIP{{
		Address: prefix + ".1", Prefix: 24, DHCP: &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{
			{Start: prefix + ".100", End: fmt.Sprintf("%s.%d", prefix, last)}}},
	}}}}
	f.networks[name] = n
	return n
}

func (f *fake) network(name string) (*fakeNetwork, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.networks[name]
	if !ok {
		return nil, fmt.Errorf("network %s: %w", name, libvirt.ErrNotFound)
	}
	return n, nil
}

func (f *fake) ReadNetworkDHCP(_ context.Context, name string) (*netaddr.Network, error) {
	if err := f.record("ReadNetworkDHCP", name); err != nil {
		return nil, err
	}
	n, err := f.network(name)
	if err != nil {
		return nil, err
	}
	ss, err := netaddr.Subnets(&n.def)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	out := &netaddr.Network{Name: name, Active: n.active, Subnets: ss, Hosts: slices.Clone(n.hosts)}
	if n.active {
		out.Live = slices.Clone(n.hosts)
	}
	f.mu.Unlock()
	time.Sleep(f.readWait)
	return out, nil
}

func (f *fake) NetworkLeases(_ context.Context, name string) (map[string][]libvirt.Lease, error) {
	if err := f.record("NetworkLeases", name); err != nil {
		return nil, err
	}
	n, err := f.network(name)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(n.leases), nil
}

// UpdateNetwork applies DHCP host changes as libvirt does: an entry whose MAC or IP
// another entry has is refused, so is the removal of an entry that is not there. With
// errLost the changes are made and the answer is lost.
func (f *fake) UpdateNetwork(_ context.Context, name string, changes []netaddr.HostChange) error {
	err := f.record("UpdateNetwork", name, changes)
	if err != nil && !errors.Is(err, errLost) {
		return err
	}
	n, nerr := f.network(name)
	if nerr != nil {
		return nerr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range changes {
		if c.DHCP == nil {
			return fmt.Errorf("the fake keeps DHCP host entries only: %v", c)
		}
		h := *c.DHCP
		i := slices.IndexFunc(n.hosts, func(e netaddr.DHCPHost) bool { return e.MAC == h.MAC })
		switch {
		case c.Op == netaddr.Add && slices.ContainsFunc(n.hosts, func(e netaddr.DHCPHost) bool { return e.MAC == h.MAC || e.IP == h.IP }):
			return fmt.Errorf("there is an existing dhcp host entry in network %s that matches %v", name, h)
		case c.Op == netaddr.Add:
			n.hosts = append(n.hosts, h)
		case i < 0:
			return fmt.Errorf("couldn't locate a matching dhcp host entry in network %s for %v", name, h)
		case c.Op == netaddr.Delete:
			n.hosts = slices.Delete(n.hosts, i, i+1)
		default:
			n.hosts[i] = h
		}
	}
	return err
}
