package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// libvirt_node_devices over the host's real PCI devices: the same addresses and vendor
// ids the kernel lists in /sys/bus/pci/devices. The test host has no hwdb (names are
// empty) and no IOMMU (iommu_group is null), which the data source must allow.
func TestAccNodeDevices_pci(t *testing.T) {
	acctest.RequireAcc(t)
	sysfs := sysPCIDevices(t)
	groups, _ := os.ReadDir("/sys/kernel/iommu_groups")
	noIOMMU := len(groups) == 0
	config := func(filters string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
data "libvirt_node_devices" "these" {
  %s
}
`, filters)
	}
	const ds = "data.libvirt_node_devices.these"
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: config(`capability = "pci"`),
				Check: resource.ComposeTestCheckFunc(func(s *terraform.State) error {
					a := s.RootModule().Resources[ds].Primary.Attributes
					if n, _ := strconv.Atoi(a["devices.#"]); n != len(sysfs) {
						return fmt.Errorf("%d PCI devices, /sys/bus/pci/devices has %d: %v", n, len(sysfs), sysfs)
					}
					for i := range len(sysfs) {
						at := func(k string) string { return a[fmt.Sprintf("devices.%d.%s", i, k)] }
						addr := at("pci_address")
						vendor, ok := sysfs[addr]
						switch {
						case !ok:
							return fmt.Errorf("device %s: pci_address %q not in /sys/bus/pci/devices", at("name"), addr)
						case at("vendor_id") != vendor:
							return fmt.Errorf("device %s: vendor_id %q, sysfs says %q", addr, at("vendor_id"), vendor)
						case at("capability") != "pci" || at("parent") == "" || !strings.HasPrefix(at("name"), "pci_"):
							return fmt.Errorf("device %d: %v", i, a)
						}
						if _, set := a[fmt.Sprintf("devices.%d.iommu_group", i)]; set && noIOMMU {
							return fmt.Errorf("device %s has iommu_group %q on a host without IOMMU groups", addr, at("iommu_group"))
						}
					}
					return nil
				},
					// And the names libvirt lists when asked directly.
					nodeDevicesAsLibvirtLists(t, ds, "pci", "")),
			},
			{
				Config: config(`
  capability  = "pci"
  name_prefix = "pci_0000_00_00_"`),
				ConfigStateChecks: acctest.State(ds, "devices", acctest.ListSize(1), "devices.0.pci_address", "0000:00:00.0",
					"devices.0.virtual_functions", acctest.ListSize(0), "devices.0.mdev_types", acctest.ListSize(0)),
				Check: nodeDevicesAsLibvirtLists(t, ds, "pci", "pci_0000_00_00_"),
			},
		},
	})
}

// nodeDevicesAsLibvirtLists is a step check: the libvirt_node_devices data source ds
// lists, in order, the devices of capability whose names start with prefix that libvirt
// lists when asked directly (virsh nodedev-list --cap).
func nodeDevicesAsLibvirtLists(t *testing.T, ds, capability, prefix string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a, err := stateAttrs(s, ds)
		if err != nil {
			return err
		}
		var want []string
		for _, n := range acctest.NodeDeviceNames(t, capability) {
			if strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
		var got []string
		for i := range len(want) + 1 {
			if n, ok := a[fmt.Sprintf("devices.%d.name", i)]; ok {
				got = append(got, n)
			}
		}
		if a["devices.#"] != strconv.Itoa(len(want)) || !slices.Equal(got, want) {
			return fmt.Errorf("%s lists %s devices %v, libvirt lists %v", ds, a["devices.#"], got, want)
		}
		return nil
	}
}

// sysPCIDevices reads the kernel's PCI devices: address -> vendor id (0x8086).
func sysPCIDevices(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir("/sys/bus/pci/devices")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		v, err := os.ReadFile(filepath.Join("/sys/bus/pci/devices", e.Name(), "vendor"))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = strings.TrimSpace(string(v))
	}
	if len(out) == 0 {
		t.Skip("this host has no PCI devices")
	}
	return out
}

// hostdevConfig is a define-only domain with one hostdev of each kind. The PCI device is a
// real one of this host, found through libvirt_node_devices (the test host has no IOMMU, so
// it could never start); the USB, mdev and SCSI sources do not exist here, which a domain
// with running = false is allowed (libvirt checks sources only at start, and so does the
// plan). Ids are written in upper case and the USB address zero-padded: libvirt stores
// them otherwise, which must not show as a change.
func hostdevConfig(name string, usbAddress bool) string {
	usbAddr := ""
	if usbAddress {
		usbAddr = `
  hostdev {
    usb_address = "001:005"
    managed     = false
  }`
	}
	return acctest.ProviderBlock("") + fmt.Sprintf(`
data "libvirt_node_devices" "pci" {
  capability = "pci"
}

resource "libvirt_domain" "test" {
  name = %q
  %s
  hostdev {
    pci        = [for d in data.libvirt_node_devices.pci.devices : d.pci_address if d.vendor_id == "0x1af4"][0]
    boot_order = 1
    rom = {
      bar = false
    }
  }
  hostdev {
    usb = {
      vendor  = "0x046D"
      product = "C52B"
    }
  }%s
  hostdev {
    mdev = "C2177883-F1BB-47F0-914D-32A22E3A8804"
  }
  hostdev {
    scsi = {
      adapter = "scsi_host0"
      bus     = 0
      target  = 0
      unit    = 1
    }
  }
}
`, name, idleDomain, usbAddr)
}

func TestAccDomain_hostdevs(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("hostdev")
	hostdevs := func(want int, managed ...string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			hs := d.Inactive.Devices.Hostdevs
			if len(hs) != want {
				return fmt.Errorf("domain %s has %d hostdevs, want %d", name, len(hs), want)
			}
			for i, m := range managed {
				if hs[i].Managed != m {
					return fmt.Errorf("hostdev %d: managed=%q, want %q", i, hs[i].Managed, m)
				}
			}
			if hs[0].SubsysPCI == nil || hs[0].Boot == nil || hs[0].Boot.Order != 1 || hs[0].ROM == nil || hs[0].ROM.Bar != "off" ||
				d.Inactive.OS.BootDevices != nil {
				return fmt.Errorf("pci hostdev: %+v, os boot %+v", hs[0], d.Inactive.OS.BootDevices)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: hostdevConfig(name, true),
				Check:  hostdevs(5, "yes", "yes", "no", "yes", "yes"),
				ConfigStateChecks: acctest.State(domRes,
					"hostdev.1.usb.vendor", "0x046D",
					"hostdev.2.usb_address", "001:005",
					"hostdev.3.mdev", "C2177883-F1BB-47F0-914D-32A22E3A8804",
					"hostdev.3.mdev_model", nil,
					"hostdev.4.managed", true,
				),
			},
			{Config: hostdevConfig(name, true), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
			{
				// Removing one rewrites the definition (the domain is not running).
				Config:           hostdevConfig(name, false),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check:            hostdevs(4),
			},
			{Config: hostdevConfig(name, false), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
		},
	})
}

// A domain with hostdevs defined by virsh imports, verifies against its state, and the
// configuration -generate-config-out writes for it plans clean.
func TestAccDomain_hostdevsImport(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("hostdev")
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <hostdev mode='subsystem' type='pci' managed='yes'>
      <source><address domain='0x0000' bus='0x03' slot='0x00' function='0x0'/></source>
      <rom bar='off' file='/var/lib/libvirt/vbios.rom'/>
    </hostdev>
    <hostdev mode='subsystem' type='usb' managed='yes'>
      <source><vendor id='0x046d'/><product id='0xc52b'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='usb' managed='no'>
      <source><address bus='2' device='3'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source><address uuid='4b20d080-1b54-4048-85b3-a6a62d165c01'/></source>
    </hostdev>
    <hostdev mode='subsystem' type='scsi'>
      <source><adapter name='scsi_host2'/><address bus='0' target='1' unit='0'/></source>
    </hostdev>
  </devices>
</domain>`, name))
	acctest.RemoveDomainAtEnd(t, name)

	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf(`
import {
  to = libvirt_domain.imported
  id = %q
}
`, name))
	if out, code := w.run("plan", "-input=false", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("plan -generate-config-out (exit %d):\n%s", code, out)
	}
	generated, _ := os.ReadFile(w.path("generated.tf"))
	for _, want := range []string{`pci         = "0000:03:00.0"`, `usb_address = "2:3"`, `mdev_model  = "vfio-pci"`, `adapter = "scsi_host2"`} {
		if !strings.Contains(strings.Join(strings.Fields(string(generated)), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("generated.tf lacks %s:\n%s", want, generated)
		}
	}
	// The domain is stopped, but an imported domain's running is what libvirt says (false).
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "1 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated config (exit %d) did more than import:\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after importing with the generated config is not empty (exit %d):\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	w.run("state", "rm", "libvirt_domain.imported") // leave the domain to the test's cleanup
}

// The plan-time check passes a domain that is to run with a PCI device the host has (it
// could not start here, without an IOMMU: the plan is all this proves).
func TestAccDomain_hostdevCheckKnownDevice(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("hostdev")
	// The plan passes a device libvirt lists, and makes nothing.
	known := func(plan *tfjson.Plan) error {
		var planned []any
		for _, rc := range plan.ResourceChanges {
			if rc.Address == "libvirt_domain.test" && rc.Change != nil {
				if after, ok := rc.Change.After.(map[string]any); ok {
					planned, _ = after["hostdev"].([]any)
				}
			}
		}
		if len(planned) != 1 {
			return fmt.Errorf("the plan has hostdevs %v, want one", planned)
		}
		addr, _ := planned[0].(map[string]any)["pci"].(string)
		dev := "pci_" + strings.NewReplacer(":", "_", ".", "_").Replace(addr)
		if !slices.Contains(acctest.NodeDeviceNames(t, "pci"), dev) {
			return fmt.Errorf("the plan passed PCI device %q, which libvirt does not list (no %s)", addr, dev)
		}
		return acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})(nil)
	}
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + fmt.Sprintf(`
data "libvirt_node_devices" "pci" {
  capability = "pci"
}

resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 1
  memory_mib = 128
  hostdev {
    pci = data.libvirt_node_devices.pci.devices[0].pci_address
  }
}
`, name),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks:   afterPlan(known),
		}},
	})
}

func TestNodeDevicesDataSource_validation(t *testing.T) {
	acctest.RunUnit(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `
data "libvirt_node_devices" "these" {
  capability = "gpu"
}
`,
			PlanOnly:    true,
			ExpectError: acctest.ErrorText("value must be one of"),
		}},
	})
}
