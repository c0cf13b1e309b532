package libvirt

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

// The test host's own capabilities (libvirt 9.0, QEMU 7.2 with qemu-system-arm and
// qemu-system-aarch64; no kvm): every hvm guest arch with its emulator and machines.
func TestParseCapabilities_testHost(t *testing.T) {
	text, err := os.ReadFile("testdata/caps/capabilities.xml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCapabilities(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if c.HostArch != "x86_64" || !slices.Equal(c.Arches(), []string{"aarch64", "armv6l", "armv7l", "i686", "x86_64"}) {
		t.Errorf("host %s, arches %v", c.HostArch, c.Arches())
	}
	a, ok := c.Guest("aarch64")
	if !ok || a.Emulator != "/usr/bin/qemu-system-aarch64" || !slices.Equal(a.DomainTypes, []string{"qemu"}) ||
		!slices.Contains(a.Machines, "virt") || !slices.Contains(a.Machines, "virt-7.2") || slices.Contains(a.Machines, "q35") {
		t.Errorf("aarch64: %+v", a)
	}
	if x, _ := c.Guest("x86_64"); x.Emulator != "/usr/bin/qemu-system-x86_64" || !slices.Contains(x.Machines, "q35") {
		t.Errorf("x86_64: %+v", x)
	}
	if _, ok := c.Guest("s390x"); ok {
		t.Error("s390x offered")
	}
	// libvirt's test driver: no hvm guests.
	if c, err := ParseCapabilities(`<capabilities><host><cpu><arch>i686</arch></cpu></host></capabilities>`); err != nil || len(c.Guests) != 0 {
		t.Errorf("test driver: %+v %v", c, err)
	}
}

// virsh domcapabilities --arch aarch64 --virttype qemu --machine virt on the test host:
// the binary, the expanded machine and the UEFI firmware qemu-efi-aarch64 installs.
func TestParseDomainCapabilities_aarch64(t *testing.T) {
	text, err := os.ReadFile("testdata/caps/domcaps-aarch64-virt.xml")
	if err != nil {
		t.Fatal(err)
	}
	dc, err := ParseDomainCapabilities(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if dc.Emulator != "/usr/bin/qemu-system-aarch64" || dc.Arch != "aarch64" || dc.Machine != "virt-7.2" ||
		!slices.Equal(dc.FirmwareTypes, []string{"efi"}) || !slices.Contains(dc.FirmwarePaths, "/usr/share/AAVMF/AAVMF_CODE.fd") {
		t.Errorf("%+v", dc)
	}
	if len(dc.CPUModels) != 42 || dc.CPUModels["cortex-a15"] != "unknown" {
		t.Errorf("custom CPU models: %d, cortex-a15 %q", len(dc.CPUModels), dc.CPUModels["cortex-a15"])
	}
}

// ttlCache asks once per key while fresh, again when stale, and keeps no failure.
func TestTTLCache(t *testing.T) {
	var c ttlCache[string, int]
	calls := 0
	fetch := func() (int, error) { calls++; return calls, nil }
	for range 3 {
		if v, _ := c.get("a", time.Minute, fetch); v != 1 {
			t.Fatalf("cached value %d", v)
		}
	}
	if v, _ := c.get("b", time.Minute, fetch); v != 2 {
		t.Errorf("second key %d", v)
	}
	if v, _ := c.get("a", 0, fetch); v != 3 {
		t.Errorf("stale %d", v)
	}
	boom := errors.New("boom")
	if _, err := c.get("c", time.Minute, func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
	if v, _ := c.get("c", time.Minute, fetch); v != 4 {
		t.Errorf("failure kept: %d", v)
	}
}
