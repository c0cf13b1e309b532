package libvirt

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The fixtures are in the shapes of libvirt's own nodedev test XML (tests/nodedevschemadata),
// written by hand because this test host has no IOMMU, SR-IOV, USB bus or mdev; host_virtio.xml
// is what the test host itself reports (no vendor names: it has no hwdb).
func TestParseNodeDevice(t *testing.T) {
	ip := func(n int) *int { return &n }
	cases := map[string]NodeDevice{
		"host_virtio.xml": {
			Name: "pci_0000_00_03_0", Parent: "computer", Driver: "virtio-pci", Capability: "pci",
			VendorID: "0x1af4", ProductID: "0x1041", PCIAddress: "0000:00:03.0",
		},
		"pci_sriov_pf.xml": {
			Name: "pci_0000_03_00_0", Parent: "pci_0000_00_01_0", Driver: "igb", Capability: "pci",
			VendorID: "0x8086", VendorName: "Intel Corporation", ProductID: "0x10c9", ProductName: "82576 Gigabit Network Connection",
			PCIAddress: "0000:03:00.0", IOMMUGroup: ip(12), VirtualFunctions: []string{"0000:03:10.0", "0000:03:10.2"},
		},
		"pci_gpu_mdev_types.xml": {
			Name: "pci_0000_3b_00_0", Parent: "pci_0000_3a_00_0", Driver: "nvidia", Capability: "pci",
			VendorID: "0x10de", VendorName: "NVIDIA Corporation", ProductID: "0x1eb8", ProductName: "TU104GL [Tesla T4]",
			PCIAddress: "0000:3b:00.0", IOMMUGroup: ip(27),
			MDevTypes: []MDevType{
				{ID: "nvidia-222", Name: "GRID T4-1B", DeviceAPI: "vfio-pci", AvailableInstances: 16},
				{ID: "nvidia-223", Name: "GRID T4-2B", DeviceAPI: "vfio-pci", AvailableInstances: 8},
			},
		},
		"usb_device.xml": {
			Name: "usb_1_5", Parent: "usb_usb1", Driver: "usb", Capability: "usb_device",
			VendorID: "0x046d", VendorName: "Logitech, Inc.", ProductID: "0xc52b", ProductName: "Unifying Receiver",
			USBBus: ip(1), USBDevice: ip(5),
		},
		"mdev.xml": {
			Name: "mdev_c2177883_f1bb_47f0_914d_32a22e3a8804_0000_3b_00_0", Parent: "pci_0000_3b_00_0", Driver: "vfio_mdev",
			Capability: "mdev", MDevUUID: "c2177883-f1bb-47f0-914d-32a22e3a8804", IOMMUGroup: ip(60),
		},
		"net.xml": {Name: "net_eth0_52_54_00_12_34_56", Parent: "pci_0000_00_03_0", Capability: "net", Interface: "eth0", MAC: "52:54:00:12:34:56"},
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "nodedev", file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseNodeDevice(string(text))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

// An mdev of libvirt before 7.3 has no <uuid>: it is read from the name.
func TestParseNodeDevice_mdevUUIDFromName(t *testing.T) {
	got, err := ParseNodeDevice(`<device><name>mdev_4b20d080_1b54_4048_85b3_a6a62d165c01</name><parent>pci_0000_00_02_0</parent>` +
		`<capability type='mdev'><type id='i915-GVTg_V5_8'/><iommuGroup number='0'/></capability></device>`)
	if err != nil {
		t.Fatal(err)
	}
	if got.MDevUUID != "4b20d080-1b54-4048-85b3-a6a62d165c01" || got.IOMMUGroup == nil || *got.IOMMUGroup != 0 {
		t.Errorf("got %+v", got)
	}
}

func TestNodeDeviceCapabilities(t *testing.T) {
	caps := NodeDeviceCapabilities()
	for _, want := range []string{"pci", "usb_device", "net", "scsi", "scsi_host", "mdev_types", "mdev"} {
		if _, ok := nodeDeviceCaps[want]; !ok {
			t.Errorf("%s missing from %v", want, caps)
		}
	}
}
