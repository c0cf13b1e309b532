package acctest

import (
	"slices"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Host facts asked of libvirt directly, as virsh would print them: what libvirt_host and
// libvirt_node_devices are checked against (besides the kernel's own /proc and /sys).

// NodeInfo is `virsh nodeinfo`.
type NodeInfo struct {
	MemoryKiB                            uint64
	CPUs, Nodes, Sockets, Cores, Threads int
}

// HostNodeInfo reads virNodeGetInfo.
func HostNodeInfo(t testing.TB) NodeInfo {
	t.Helper()
	var n NodeInfo
	err := Client(t).Read(Ctx(t), "read node info", func(l *golibvirt.Libvirt) error {
		_, mem, cpus, _, nodes, sockets, cores, threads, err := l.NodeGetInfo()
		n = NodeInfo{MemoryKiB: mem, CPUs: int(cpus), Nodes: int(nodes), Sockets: int(sockets), Cores: int(cores), Threads: int(threads)}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// HostFreeMemory is `virsh freecell --all`'s total, in bytes.
func HostFreeMemory(t testing.TB) uint64 {
	t.Helper()
	var free uint64
	err := Client(t).Read(Ctx(t), "read free memory", func(l *golibvirt.Libvirt) error {
		var err error
		free, err = l.NodeGetFreeMemory()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return free
}

// nodeDevCaps are the capabilities NodeDeviceNames lists, written out here rather than
// taken from the provider's own table, which they check.
var nodeDevCaps = map[string]golibvirt.ConnectListAllNodeDeviceFlags{
	"pci": golibvirt.ConnectListNodeDevicesCapPciDev, "net": golibvirt.ConnectListNodeDevicesCapNet,
	"usb_device": golibvirt.ConnectListNodeDevicesCapUsbDev, "scsi": golibvirt.ConnectListNodeDevicesCapScsi,
	"storage": golibvirt.ConnectListNodeDevicesCapStorage, "system": golibvirt.ConnectListNodeDevicesCapSystem,
}

// NodeDeviceNames is `virsh nodedev-list --cap capability` (pci, net, usb_device, scsi,
// storage, system): the names, sorted.
func NodeDeviceNames(t testing.TB, capability string) []string {
	t.Helper()
	flag, ok := nodeDevCaps[capability]
	if !ok {
		t.Fatalf("acctest.NodeDeviceNames: no capability %q here", capability)
	}
	var names []string
	err := Client(t).Read(Ctx(t), "list node devices", func(l *golibvirt.Libvirt) error {
		devs, _, err := l.ConnectListAllNodeDevices(1, uint32(flag))
		names = nil
		for _, d := range devs {
			names = append(names, d.Name)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}
