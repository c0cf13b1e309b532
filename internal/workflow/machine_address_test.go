package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// TestReserveAddressConcurrent: two machines whose names choose the same address reserve
// on one network at once (each read of the network takes a while, so both would read
// before either writes): the network's lock makes the second see the first's entry, and
// they get different addresses.
func TestReserveAddressConcurrent(t *testing.T) {
	f := newFake()
	f.addNetwork("race", "10.8.0", true, 101) // two candidates
	f.readWait = 30 * time.Millisecond
	ss, _ := netaddr.Subnets(&f.networks["race"].def)
	var names []string
	first, _ := capi.ChooseAddress(ss[0], "m-0", nil)
	for i := 1; len(names) < 1; i++ {
		if a, _ := capi.ChooseAddress(ss[0], fmt.Sprintf("m-%d", i), nil); a == first {
			names = append(names, fmt.Sprintf("m-%d", i))
		}
	}
	names = append(names, "m-0")
	var wg sync.WaitGroup
	got := make([]netaddr.DHCPHost, len(names))
	errs := make([]error, len(names))
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = ReserveAddress(context.Background(), f, "race", name, capi.MAC(name))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("reservations: %v", err)
	}
	if got[0].IP == got[1].IP || len(f.networks["race"].hosts) != 2 {
		t.Errorf("both machines got %s / %s; host entries %v", got[0].IP, got[1].IP, f.networks["race"].hosts)
	}
}

// TestReserveAddress: what is taken (entries, leases of other MACs) is skipped; an entry
// of the machine's own MAC is refused; the release removes the entry, and a second
// release finds nothing.
func TestReserveAddress(t *testing.T) {
	f := newFake()
	n := f.addNetwork("lab", "10.9.0", true, 102)
	n.hosts = []netaddr.DHCPHost{{MAC: "52:54:00:00:00:01", IP: "10.9.0.100"}}
	n.leases["52:54:00:00:00:02"] = []libvirt.Lease{{IP: "10.9.0.101"}}
	h, err := ReserveAddress(context.Background(), f, "lab", "x", "52:54:00:00:00:0A")
	if err != nil || h != (netaddr.DHCPHost{MAC: "52:54:00:00:00:0a", IP: "10.9.0.102"}) {
		t.Fatalf("reserved %v, %v; want the one free address for the lower-case MAC", h, err)
	}
	if _, err := ReserveAddress(context.Background(), f, "lab", "x", "52:54:00:00:00:0a"); err == nil || !strings.Contains(err.Error(), "already has a DHCP host entry for MAC 52:54:00:00:00:0a (ip 10.9.0.102)") {
		t.Errorf("second reservation of one MAC: %v", err)
	}
	if got, err := MachineReservation(context.Background(), f, "lab", "52:54:00:00:00:0A"); err != nil || got == nil || *got != h {
		t.Errorf("MachineReservation = %v, %v", got, err)
	}
	if err := ReleaseAddress(context.Background(), f, "lab", h.MAC); err != nil || len(n.hosts) != 1 {
		t.Errorf("release: %v; entries %v", err, n.hosts)
	}
	if err := ReleaseAddress(context.Background(), f, "lab", h.MAC); !errors.Is(err, libvirt.ErrNotFound) {
		t.Errorf("release of an entry gone: %v, want ErrNotFound", err)
	}
	idle := f.addNetwork("idle", "10.9.1", false, 102)
	idle.leases["52:54:00:00:00:02"] = []libvirt.Lease{{IP: "10.9.1.100"}} // left from when it ran: not read
	before := len(f.calls)
	if h, err := ReserveAddress(context.Background(), f, "idle", "x", "52:54:00:00:00:0b"); err != nil || h.IP == "" ||
		strings.Contains(strings.Join(f.called()[before:], " "), "NetworkLeases") {
		t.Errorf("inactive network: %v, %v; calls %v", h, err, f.calls[before:])
	}
	if _, err := ReserveAddress(context.Background(), f, "nope", "x", h.MAC); !errors.Is(err, libvirt.ErrNotFound) {
		t.Errorf("missing network: %v", err)
	}
	f.networks["v6"] = &fakeNetwork{}
	if _, err := ReserveAddress(context.Background(), f, "v6", "x", h.MAC); err == nil || !strings.Contains(err.Error(), "no IPv4 subnet") {
		t.Errorf("network without IPv4: %v", err)
	}
}

// TestWaitForLease: a lease of the reserved address ends the wait; one of another address
// is named when the wait times out; a daemon that does not answer is waited for.
func TestWaitForLease(t *testing.T) {
	f := newFake()
	n := f.addNetwork("lab", "10.9.0", true, 102)
	mac := "52:54:00:00:00:0a"
	n.leases[mac] = []libvirt.Lease{{MAC: mac, IP: "fe80::1"}, {MAC: mac, IP: "10.9.0.101"}}
	f.failAt[0] = errAway
	ls, err := WaitForLease(context.Background(), f, "lab", "52:54:00:00:00:0A", "10.9.0.101", time.Minute)
	if err != nil || len(ls) != 1 || ls[0].IP != "10.9.0.101" || len(f.calls) != 2 {
		t.Errorf("WaitForLease = %v, %v after %v", ls, err, f.calls)
	}
	_, err = WaitForLease(context.Background(), f, "lab", mac, "10.9.0.100", 1500*time.Millisecond)
	var lw *LeaseWaitError
	if !errors.As(err, &lw) || !strings.Contains(err.Error(), "within 1.5s (leases of other addresses seen: 10.9.0.101)") {
		t.Errorf("wrong address: %v", err)
	}
	if _, err := WaitForLease(context.Background(), f, "nope", mac, "", time.Minute); !errors.Is(err, libvirt.ErrNotFound) {
		t.Errorf("missing network: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WaitForLease(ctx, f, "lab", mac, "10.9.0.100", time.Minute); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for a DHCP lease of MAC") {
		t.Errorf("cancelled: %v", err)
	}
}

// TestCheckInfrastructure: missing wins over inactive in the reason; the message names
// every problem; a transport error is an error.
func TestCheckInfrastructure(t *testing.T) {
	api := infraFake{"net": true, "idle-net": false, "pool": true, "idle-pool": false}
	cases := []struct {
		network string
		pools   []string
		ready   bool
		reason  string
		message string
	}{
		{"net", []string{"pool", "pool"}, true, "", `network "net" and storage pools ["pool" "pool"] are active`},
		{"net", []string{"pool", "gone"}, false, ReasonInfrastructureMissing, `storage pool "gone" does not exist`},
		{"idle-net", []string{"idle-pool"}, false, ReasonInfrastructureInactive,
			`network "idle-net" is inactive (start it: virsh net-start idle-net); storage pool "idle-pool" is inactive (start it: virsh pool-start idle-pool)`},
		{"idle-net", []string{"gone"}, false, ReasonInfrastructureMissing, `storage pool "gone" does not exist; network "idle-net" is inactive`},
	}
	for _, c := range cases {
		r, err := CheckInfrastructure(context.Background(), api, c.network, c.pools...)
		if err != nil || r.Ready != c.ready || r.Reason != c.reason || !strings.HasPrefix(r.Message, c.message) {
			t.Errorf("%s %v: %+v, %v; want %t %q %q", c.network, c.pools, r, err, c.ready, c.reason, c.message)
		}
	}
	if _, err := CheckInfrastructure(context.Background(), api, "away"); !libvirt.IsTransport(err) {
		t.Errorf("transport error: %v", err)
	}
}

// infraFake says which objects exist and run; "away" is a daemon that does not answer.
type infraFake map[string]bool

func (f infraFake) active(name string) (bool, error) {
	if name == "away" {
		return false, errAway
	}
	on, ok := f[name]
	if !ok {
		return false, fmt.Errorf("%s: %w", name, libvirt.ErrNotFound)
	}
	return on, nil
}

func (f infraFake) NetworkActive(_ context.Context, name string) (bool, error) { return f.active(name) }
func (f infraFake) PoolActive(_ context.Context, name string) (bool, error)    { return f.active(name) }
