package workflow

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

const machineUID = "7b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

func machineReq() MachineRequest {
	return MachineRequest{Namespace: "ns", Name: "m-0", UID: machineUID, Network: "lab", BasePool: "base", Image: "base.qcow2",
		DomainPool: "default", VCPU: 1, MemoryMiB: 256, DiskGiB: 1, UserData: "#!/bin/sh\necho hi\n", Running: true}
}

// machineFake is a host with the machine's network (10.7.0.0/24, range .100-.199, running).
func machineFake() *fake {
	f := newFake()
	f.addNetwork("lab", "10.7.0", true, 199)
	return f
}

// machineLeft lists what the fake host holds of any machine: domains, volumes, host entries.
func machineLeft(f *fake) []string {
	var out []string
	for u, n := range f.defined {
		out = append(out, "domain "+n+" ("+u+")")
	}
	for k := range f.volumes {
		out = append(out, "volume "+k)
	}
	for _, n := range f.networks {
		for _, h := range n.hosts {
			out = append(out, h.String())
		}
	}
	return out
}

const machineCalls = "HostInfo LookupDomain LookupDomain VolumeInfo VolumeInfo ReadNetworkDHCP " + // checks and leftovers
	"CreateOverlay UploadBytes ReadNetworkDHCP NetworkLeases UpdateNetwork DefineDomain SetDomainAutostart StartDomain"

// TestCreateMachine: the parts of a machine, made in order, with the names of the contract
// and the address capi chooses.
func TestCreateMachine(t *testing.T) {
	f := machineFake()
	res, err := CreateMachine(context.Background(), f, machineReq())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); got != machineCalls {
		t.Errorf("calls\n got %s\nwant %s", got, machineCalls)
	}
	p := machineReq().Parts()
	ss, _ := netaddr.Subnets(&f.networks["lab"].def)
	want, _ := capi.ChooseAddress(ss[0], p.Domain, nil)
	hosts := f.networks["lab"].hosts
	if res.IP != want.String() || len(hosts) != 1 || hosts[0] != (netaddr.DHCPHost{MAC: p.MAC, IP: want.String()}) {
		t.Errorf("reserved %s, host entries %v; want %s for %s", res.IP, hosts, want, p.MAC)
	}
	if f.defined[machineUID] != p.Domain || len(f.volumes) != 2 || f.volumes["/pool/"+p.Root] == nil || f.volumes["/pool/"+p.Seed] == nil {
		t.Errorf("host holds %v", machineLeft(f))
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %v", res.Warnings)
	}
	for _, part := range []string{"<name>" + p.Domain + "</name>", "<uuid>" + machineUID + "</uuid>", p.MAC, "/pool/" + p.Root, "/pool/" + p.Seed, "<vcpu placement=\"static\" current=\"1\">2</vcpu>"} {
		if !strings.Contains(f.definedXML[machineUID], part) {
			t.Errorf("domain XML lacks %s:\n%s", part, f.definedXML[machineUID])
		}
	}
	if err := DeleteMachine(context.Background(), f, p); err != nil || len(machineLeft(f)) != 0 {
		t.Errorf("delete: %v; left %v", err, machineLeft(f))
	}
	if err := DeleteMachine(context.Background(), f, p); err != nil {
		t.Errorf("delete of a machine already gone: %v", err)
	}
}

// machineSteps is the step a failed call belongs to, as the error names it, and the parts
// made before it (as the rollback names them); "" for the checks before anything is made.
var machineSteps = map[string]struct{ step, made string }{
	"CreateOverlay":      {"creating the root volume default/", ""},
	"UploadBytes":        {"creating the seed volume default/", "volume default/"},
	"UpdateNetwork":      {"reserving an address for ", "volume default/"},
	"DefineDomain":       {"defining domain ", "DHCP reservation of "},
	"SetDomainAutostart": {"setting autostart of domain ", "domain ns-m-0-"},
	"StartDomain":        {"starting domain ", "domain ns-m-0-"},
}

// TestCreateMachineRollback fails every call of a machine's create in turn, with a plain
// failure and with a lost answer (the write was done): whatever had been made, or may have
// been, is removed again — the fake host holds no domain, volume or host entry — and the
// error names the failed step and what was rolled back. A rollback step left out leaves
// something on the fake host, and this test fails.
func TestCreateMachineRollback(t *testing.T) {
	n := len(strings.Fields(machineCalls))
	for i := range n {
		for _, inject := range []error{errInjected, errLost} {
			f := machineFake()
			f.failAt[i] = inject
			_, err := CreateMachine(context.Background(), f, machineReq())
			method := f.called()[i]
			if err == nil {
				t.Errorf("failure of call %d (%s, %v) not reported", i, method, inject)
				continue
			}
			if left := machineLeft(f); len(left) > 0 {
				t.Errorf("after a failed %s (%v), the host still holds %v; calls %v", method, inject, left, f.calls)
			}
			if !errors.Is(err, inject) {
				t.Errorf("failed %s: the error does not carry the failure: %v", method, err)
			}
			step, ok := machineSteps[method]
			if i >= 8 && i <= 10 { // the reservation: read, leases, write
				step, ok = machineSteps["UpdateNetwork"]
			}
			if !ok {
				if i >= 6 {
					t.Errorf("call %d (%s) is not a step of the test's table", i, method)
				}
				if strings.Contains(strings.Join(f.called()[i+1:], " "), "Delete") {
					t.Errorf("failed check %s removed something: %v", method, f.calls)
				}
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, step.step) || !strings.Contains(msg, " failed: ") {
				t.Errorf("failed %s: the error does not name the step %q: %v", method, step.step, err)
			}
			switch {
			case step.made == "" && errors.Is(inject, errInjected):
				if !strings.Contains(msg, "Nothing was left on the host") {
					t.Errorf("failed %s: %v", method, err)
				}
			case step.made != "" && !strings.Contains(msg, "Rolled back what this create had made: ") || !strings.Contains(msg, step.made):
				t.Errorf("failed %s: the error does not say what was rolled back (%q): %v", method, step.made, err)
			}
			if errors.Is(inject, errLost) && !strings.Contains(msg, "what it may have made (the answer to that step was lost)") &&
				(method == "CreateOverlay" || method == "UploadBytes" || method == "UpdateNetwork" || method == "DefineDomain") {
				t.Errorf("lost answer to %s: the rollback does not name what the step may have made: %v", method, err)
			}
		}
	}
}

// errAway is the daemon not answering: the call did not get through.
var errAway = &libvirt.TransportError{Op: "injected", URI: "fake://", Err: io.EOF}

// TestCreateMachineRollbackWaitsForDaemon: a removal of the rollback that fails on the
// connection is tried again, and the host ends up empty.
func TestCreateMachineRollbackWaitsForDaemon(t *testing.T) {
	probe := machineFake()
	probe.fail["StartDomain"] = errInjected
	if _, err := CreateMachine(context.Background(), probe, machineReq()); err == nil {
		t.Fatal("StartDomain failure not reported")
	}
	first := -1
	for i, c := range probe.called() {
		if c == "DeleteVolume" {
			first = i
			break
		}
	}
	f := machineFake()
	f.fail["StartDomain"] = errInjected
	f.failAt[first] = errAway
	_, err := CreateMachine(context.Background(), f, machineReq())
	if err == nil || !strings.Contains(err.Error(), "Rolled back") {
		t.Errorf("error %v, want one saying what was rolled back", err)
	}
	if left := machineLeft(f); len(left) > 0 {
		t.Errorf("the rollback gave up on a removal while the daemon was away: host holds %v; calls %v", left, f.calls)
	}
	if strings.Count(strings.Join(f.called(), " "), "DeleteVolume") != strings.Count(strings.Join(probe.called(), " "), "DeleteVolume")+1 {
		t.Errorf("the failed removal was not tried again: %v", f.calls)
	}
}

// TestCreateMachineRemovesLeftovers: volumes and a host entry of a machine of the same
// names, without its domain, are removed first (with a warning), then made afresh.
func TestCreateMachineRemovesLeftovers(t *testing.T) {
	f := machineFake()
	p := machineReq().Parts()
	for _, name := range []string{p.Root, p.Seed} {
		f.volumes["/old/"+name] = &libvirt.VolumeInfo{Key: "/old/" + name, Name: name, Pool: p.Pool}
	}
	f.networks["lab"].hosts = []netaddr.DHCPHost{{MAC: p.MAC, IP: "10.7.0.150"}, {MAC: "52:54:00:00:00:99", IP: "10.7.0.151"}}
	res, err := CreateMachine(context.Background(), f, machineReq())
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Join(f.called(), " ")
	if want := "ReadNetworkDHCP DeleteVolume DeleteVolume ReadNetworkDHCP UpdateNetwork CreateOverlay"; !strings.Contains(calls, want) {
		t.Errorf("calls %s\nwant the leftovers removed before the create: %s", calls, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Detail, "volume default/"+p.Root+", volume default/"+p.Seed+", DHCP reservation of "+p.MAC) {
		t.Errorf("warnings %+v", res.Warnings)
	}
	if f.volumes["/old/"+p.Root] != nil || len(f.volumes) != 2 || len(f.networks["lab"].hosts) != 2 {
		t.Errorf("host holds %v", machineLeft(f))
	}
}

// TestCreateMachineRefusesDomain: a domain with the machine's name or UUID is another
// machine's (or an untracked one): refused before anything is made.
func TestCreateMachineRefusesDomain(t *testing.T) {
	p := machineReq().Parts()
	for key, name := range map[string]string{"0b6f0c4e-9a1d-4d2e-8c3b-5e7f9a1b2c3d": p.Domain, machineUID: "other"} {
		f := machineFake()
		f.defined[key] = name
		_, err := CreateMachine(context.Background(), f, machineReq())
		if err == nil || !strings.Contains(err.Error(), "already exists on the host") {
			t.Errorf("domain %s (%s): error %v", name, key, err)
		}
		for _, c := range f.called() {
			if c != "HostInfo" && c != "LookupDomain" {
				t.Errorf("domain %s (%s): %s called after the refusal: %v", name, key, c, f.calls)
			}
		}
	}
}

// TestCreateMachineCancelled: Ctrl-C during the seed's upload (whose outcome is then
// unknown): the rollback still removes what was made, on a context of its own.
func TestCreateMachineCancelled(t *testing.T) {
	f := machineFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := CreateMachine(ctx, &cancelledUpload{fake: f, cancel: cancel}, machineReq())
	if err == nil || !strings.Contains(err.Error(), "creating the seed volume") || !strings.Contains(err.Error(), "Rolled back") ||
		!errors.Is(err, context.Canceled) {
		t.Errorf("error %v", err)
	}
	if left := machineLeft(f); len(left) > 0 {
		t.Errorf("host holds %v", left)
	}
}

// cancelledUpload is the fake whose UploadBytes is interrupted by Ctrl-C.
type cancelledUpload struct {
	*fake
	cancel context.CancelFunc
}

func (c *cancelledUpload) UploadBytes(ctx context.Context, _ libvirt.VolumeSpec, _ string, _ []byte) (*libvirt.VolumeInfo, error) {
	c.cancel()
	return nil, ctx.Err()
}

// TestReadMachine: a machine read back, and imported (its place and user-data from its
// metadata and seed).
func TestReadMachine(t *testing.T) {
	f := machineFake()
	res, err := CreateMachine(context.Background(), f, machineReq())
	if err != nil {
		t.Fatal(err)
	}
	p := machineReq().Parts()
	f.status = &libvirt.DomainStatus{XML: f.definedXML[machineUID], Active: true, State: "running"}
	f.networks["lab"].leases[p.MAC] = []libvirt.Lease{{MAC: p.MAC, IP: res.IP}, {MAC: p.MAC, IP: "fe80::1"}}
	for _, place := range []*MachinePlace{{Network: "lab", Pool: "default"}, nil} {
		m, err := ReadMachine(context.Background(), f, machineUID, place, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Domain != p.Domain || m.UID != machineUID || m.MAC != p.MAC || m.Spec.VCPU != 1 || m.Spec.EffectiveMaxVCPU() != 2 ||
			!m.HasDisk || m.DiskBytes != 1<<30 || m.IP != res.IP || strings.Join(m.Addresses, " ") != res.IP {
			t.Errorf("place %+v: read %+v", place, m)
		}
		if place == nil && (m.Meta == nil || m.Meta.Network != "lab" || m.Meta.Image != "base.qcow2" || m.UserData == nil || *m.UserData != machineReq().UserData) {
			t.Errorf("import: meta %+v user-data %v", m.Meta, m.UserData)
		}
	}
	f.status.Active = false
	delete(f.volumes, "/pool/"+p.Root)
	m, err := ReadMachine(context.Background(), f, machineUID, &MachinePlace{Network: "lab", Pool: "default"}, nil)
	if err != nil || m.HasDisk || m.Addresses != nil {
		t.Errorf("stopped machine without its root volume: %+v %v", m, err)
	}
}
