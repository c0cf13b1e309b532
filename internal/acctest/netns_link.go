package acctest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Links a test makes in the test host's network namespace, where libvirtd runs, for NICs
// that sit on a host link (direct, i.e. macvtap). The host kernel has no dummy link type,
// so the parent link is one end of a veth pair.

// tapMargin is how many links other tests may make (a vnet tap for each guest they start)
// between the veth pair and the macvtap link libvirt makes on it.
const tapMargin = 64

// Netns is the network namespace libvirtd runs in (tools/testhost.sh env).
func Netns() string {
	if ns := os.Getenv("KVMFORGE_NETNS"); ns != "" {
		return ns
	}
	return "kvmforge"
}

// NetnsIP runs ip(8) with args in the test host's network namespace (`ip -n`, so it is
// right whether or not the test process runs in there) and returns its output.
func NetnsIP(args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"-n", Netns()}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ip -n %s %s: %w: %s", Netns(), strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// VethPair makes a veth pair kvmt<hex>a / kvmt<hex>b in the test host's network
// namespace, both up, with address (CIDR, e.g. 192.0.2.1/24) on the b end, and removes it
// when the test ends, failed or not. The a end is the one to put a macvtap NIC on.
//
// libvirt opens /dev/tap<ifindex> of the macvtap link it makes, and libvirtd's private
// /dev has links for /dev/tap1..tapN only (N = LIBVIRT_TEST_TAP_LINKS). The ifindex in
// the namespace grows with every link ever made there, so a long-lived namespace can run
// past N: then the test fails (never skips) saying how to start afresh.
func VethPair(t testing.TB, address string) (a, b string) {
	t.Helper()
	RequireAcc(t)
	limit, err := strconv.Atoi(os.Getenv("LIBVIRT_TEST_TAP_LINKS"))
	if err != nil || limit <= 0 {
		t.Fatalf("LIBVIRT_TEST_TAP_LINKS is %q: eval \"$(tools/testhost.sh env)\" of a test host set up by "+
			"tools/testhost.sh v2 or later (libvirtd needs /dev/tapN links for a macvtap NIC)", os.Getenv("LIBVIRT_TEST_TAP_LINKS"))
	}
	base := fmt.Sprintf("kvmt%04x", rand.IntN(0x10000))
	a, b = base+"a", base+"b"
	if _, err := NetnsIP("link", "add", a, "type", "veth", "peer", "name", b); err != nil {
		t.Fatalf("veth pair for a macvtap NIC: %v", err)
	}
	t.Cleanup(func() {
		if _, err := NetnsIP("link", "del", a); err != nil { // takes b with it
			t.Errorf("remove the veth pair %s/%s: %v", a, b, err)
		}
	})
	for _, args := range [][]string{{"link", "set", a, "up"}, {"link", "set", b, "up"}, {"addr", "add", address, "dev", b}} {
		if _, err := NetnsIP(args...); err != nil {
			t.Fatalf("veth pair %s/%s: %v", a, b, err)
		}
	}
	index, err := LinkIndex(a)
	if err != nil {
		t.Fatal(err)
	}
	if index+tapMargin > limit {
		t.Fatalf("link %s has ifindex %d in network namespace %s; libvirtd's /dev has /dev/tap1..tap%d only "+
			"(a macvtap NIC on it would fail to open /dev/tap<ifindex>). The namespace has made too many links "+
			"since it was created: recreate it with tools/testhost.sh down && tools/testhost.sh up", a, index, Netns(), limit)
	}
	return a, b
}

// LinkIndex is the ifindex of link name in the test host's network namespace.
func LinkIndex(name string) (int, error) {
	out, err := NetnsIP("-o", "link", "show", "dev", name)
	if err != nil {
		return 0, err
	}
	index, _, _ := strings.Cut(out, ":")
	n, err := strconv.Atoi(strings.TrimSpace(index))
	if err != nil {
		return 0, fmt.Errorf("ifindex of %s in %q: %w", name, out, err)
	}
	return n, nil
}

// MacvtapOn is the `ip -d link` line of the macvtap link named dev whose lower link is
// parent in the test host's network namespace; an error when there is none.
func MacvtapOn(dev, parent string) (string, error) {
	out, err := NetnsIP("-o", "-d", "link", "show", "dev", dev)
	if err != nil {
		return "", err
	}
	if !strings.Contains(out, dev+"@"+parent+":") || !strings.Contains(out, "macvtap") {
		return "", fmt.Errorf("link %s is no macvtap on %s: %s", dev, parent, out)
	}
	return strings.TrimSpace(out), nil
}
