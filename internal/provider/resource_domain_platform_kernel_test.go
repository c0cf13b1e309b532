package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// kernelFiles are the tiny guest's own uncompressed kernel, initramfs and command line
// (tools/guest-image/build.sh writes them beside tiny.qcow2, readable by all).
func kernelFiles(t *testing.T) (kernel, initrd, cmdline string) {
	t.Helper()
	img, err := filepath.EvalSymlinks(acctest.GuestImage(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(img)
	b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		t.Fatalf("the guest image has no cmdline (rebuild it with `make image`): %v", err)
	}
	return filepath.Join(dir, "vmlinux"), filepath.Join(dir, "initrd.img"), strings.TrimSpace(string(b))
}

// Direct kernel boot of the test guest's own kernel and initramfs, with no disk, to a
// DHCP lease: the guest runs with the command line given (a marker read through the
// agent in /proc/cmdline), the second plan is empty, and the import matches.
func TestAccDomainKernel_bootedNoDisk(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("kboot")
	kernel, initrd, cmdline := kernelFiles(t)
	cmdline += " kvmforge.kboot=" + name
	config := acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 256),
		`graphics = { type = "none" }`,
		fmt.Sprintf("os = {\n    kernel = {\n      path    = %q\n      initrd  = %q\n      cmdline = %q\n    }\n"+
			"    smbios = { system = { product = \"KF Appliance\", manufacturer = \"kvmforge\" } }\n"+
			"    fw_cfg = { \"opt/com.kvmforge/role\" = \"appliance\" }\n  }", kernel, initrd, cmdline),
		fmt.Sprintf("network_interface {\n    network = %q\n    wait_for_ip {\n      source  = \"lease\"\n      timeout = \"5m\"\n    }\n  }", acctest.Network()))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "state", "running", "os.kernel.path", kernel, "os.kernel.initrd", initrd,
					"os.kernel.cmdline", cmdline, "os.kernel.dtb", nil, "os.smbios.mode", nil, "os.arch", nil, "os.machine", nil, "os.fw_cfg", knownvalue.MapExact(map[string]knownvalue.Check{"opt/com.kvmforge/role": knownvalue.StringExact("appliance")}), "network_interface.0.addresses.0", acctest.NotNull),
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if len(d.Inactive.Devices.Disks) != 0 || d.Inactive.OS.Kernel != kernel {
						return fmt.Errorf("want a diskless domain booting %s, got disks %d kernel %q", kernel, len(d.Inactive.Devices.Disks), d.Inactive.OS.Kernel)
					}
					acctest.WaitForAgent(t, name)
					out, err := acctest.GuestExec(t, name, "/bin/cat", "/proc/cmdline")
					if err != nil {
						return err
					}
					if !strings.Contains(out, "kvmforge.kboot="+name) {
						return fmt.Errorf("the guest's /proc/cmdline is %q, want the marker kvmforge.kboot=%s", out, name)
					}
					// SMBIOS and the fw_cfg entry, both read inside the guest (its kernel has
					// qemu_fw_cfg, loaded at boot by the image's rcS).
					out, err = acctest.GuestExec(t, name, "/bin/sh", "-c", `cat /sys/class/dmi/id/product_name; `+
						`cat /sys/firmware/qemu_fw_cfg/by_name/opt/com.kvmforge/role/raw || echo no-fw-cfg-sysfs`)
					if err != nil {
						return err
					}
					lines := strings.Split(strings.TrimSpace(out), "\n")
					if len(lines) < 2 || lines[0] != "KF Appliance" {
						return fmt.Errorf("the guest's /sys/class/dmi/id/product_name is %q, want \"KF Appliance\"", out)
					}
					if lines[len(lines)-1] != "appliance" {
						return fmt.Errorf("the guest reads the fw_cfg entry opt/com.kvmforge/role as %q, want \"appliance\"", out)
					}
					return nil
				}),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
				ImportStateVerifyIgnore: []string{"timeouts", "update_method", "network_interface.0.wait_for_ip"}},
		},
	})
}

// Define-only: a virsh-defined domain with a kernel, initrd, command line and dtb
// imports, and what -generate-config-out writes for it plans clean; then removing os
// (the kernel) from the configuration takes it out of the definition.
func TestAccDomainKernel_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name := virshDefinedPlansClean(t, "kboot", `  <os><type arch='x86_64'>hvm</type><kernel>/var/lib/libvirt/boot/vmlinuz</kernel><initrd>/var/lib/libvirt/boot/initrd.img</initrd>
    <cmdline>console=ttyS0 root=/dev/vda</cmdline><dtb>/var/lib/libvirt/boot/x.dtb</dtb></os>`, "console=ttyS0 root=/dev/vda")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 64),
					attr("running", false), `os = { kernel = { path = "/var/lib/libvirt/boot/vmlinuz", initrd = "/var/lib/libvirt/boot/initrd.img", cmdline = "console=ttyS0 root=/dev/vda", dtb = "/var/lib/libvirt/boot/x.dtb" } }`),
				ImportState: true, ImportStateId: name, ResourceName: domRes, ImportStatePersist: true,
			},
			{
				Config: acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 64),
					attr("running", false)),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "os", nil),
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if d.Inactive.OS.Kernel != "" || d.Inactive.OS.Initrd != "" || d.Inactive.OS.Cmdline != "" {
						return fmt.Errorf("kernel still defined: %+v", d.Inactive.OS)
					}
					return nil
				}),
			},
		},
	})
}
