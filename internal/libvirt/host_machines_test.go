package libvirt

import (
	"slices"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// machines lists names and canonical names of the host arch's hvm guests, across domain
// types, and nothing of other arches.
func TestMachines(t *testing.T) {
	const caps = `<capabilities>
  <host><cpu><arch>x86_64</arch></cpu></host>
  <guest>
    <os_type>hvm</os_type>
    <arch name='x86_64'>
      <machine canonical='pc-i440fx-7.2' maxCpus='255'>pc</machine>
      <machine maxCpus='255'>pc-i440fx-7.2</machine>
      <machine canonical='pc-q35-7.2' maxCpus='288'>q35</machine>
      <domain type='qemu'/>
      <domain type='kvm'><machine>pc-q35-8.0</machine></domain>
    </arch>
  </guest>
  <guest>
    <os_type>hvm</os_type>
    <arch name='aarch64'>
      <machine>virt</machine>
      <domain type='qemu'/>
    </arch>
  </guest>
</capabilities>`
	var c libvirtxml.Caps
	if err := c.Unmarshal(caps); err != nil {
		t.Fatal(err)
	}
	got := machines(&c, "x86_64")
	want := []string{"pc", "pc-i440fx-7.2", "pc-q35-7.2", "pc-q35-8.0", "q35"}
	if !slices.Equal(got, want) {
		t.Errorf("machines = %v, want %v", got, want)
	}
}
