package provider_test

import (
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A virsh-defined domain with SMBIOS tables, <os><smbios mode="sysinfo">, and fw_cfg
// entries (a value one and a file one) imports, and what -generate-config-out writes
// for it plans clean.
func TestAccDomainSMBIOS_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "smbios", `  <sysinfo type='smbios'>
    <bios><entry name='vendor'>kvmforge</entry></bios>
    <system><entry name='manufacturer'>kvmforge</entry><entry name='product'>Appliance</entry></system>
    <baseBoard><entry name='serial'>42</entry></baseBoard>
  </sysinfo>
  <sysinfo type='fwcfg'>
    <entry name='opt/com.example/role'>db</entry>
  </sysinfo>
  <os><type arch='x86_64'>hvm</type><smbios mode='sysinfo'/></os>`, `"Appliance"`, `"opt/com.example/role"`, `serial = "42"`)
}
