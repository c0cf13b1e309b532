package provider_test

import (
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Bad input fails at plan time with a message naming the attribute and the fix. No
// daemon is needed: validation runs before the provider talks to libvirt.
func TestDomain_validation(t *testing.T) {
	provider := acctest.OfflineProvider
	// dom is libvirt_domain.test of 1 vCPU and 256 MiB, with lines (attr lines replace these).
	dom := func(lines ...string) string {
		return provider + resourceHCL("libvirt_domain", "test", withDefaults([]string{attr("name", "tfacc-v"), attr("vcpu", 1),
			attr("memory_mib", 256)}, lines)...)
	}
	nic := func(lines ...string) string { return blockHCL("network_interface", lines...) }
	disk := func(lines ...string) string { return blockHCL("disk", lines...) }
	waitFor := func(source string) string { return blockHCL("wait_for_ip", attr("source", source)) }
	// Terraform wraps long messages: match any whitespace between words.
	re := acctest.Wrapped
	cases := []acctest.PlanError{
		{Name: "name with slash", Config: dom(attr("name", "a/b")), Want: re(`name.*must be a libvirt domain name`)},
		{Name: "mac", Config: dom(nic(attr("network", "default"), attr("mac", "52:54:00:zz:00:01"))), Want: re(`mac.*must be a MAC address such as 52:54:00:12:34:56`)},
		{Name: "vcpu over max", Config: dom(attr("vcpu", 4), attr("max_vcpu", 2)), Want: re(`max_vcpu below vcpu.*max_vcpu = 2 is below vcpu = 4.*set it to 4 or more`)},
		{Name: "memory over max", Config: dom(attr("memory_mib", 512), attr("max_memory_mib", 256)), Want: re(`max_memory_mib below memory_mib.*max_memory_mib = 256 is below memory_mib = 512.*set it to 512 or more`)},
		{Name: "memory in both forms", Config: dom(attr("memory_kib", 262144)), Want: re(`Both memory_mib and memory_kib are set.*memory_mib = 256 and memory_kib = 262144 are the same setting in MiB and in KiB: keep one of them`)},
		{Name: "memory in neither form", Config: dom(attr("memory_mib", hcl("null"))), Want: re(`Neither memory_mib nor memory_kib is set.*set the memory with memory_mib \(MiB\) or memory_kib \(KiB, exact\)`)},
		{Name: "max memory in both forms", Config: dom(attr("max_memory_mib", 512), attr("max_memory_kib", 524288)), Want: re(`Both max_memory_mib and max_memory_kib are set.*keep one of them`)},
		{Name: "max memory KiB below MiB", Config: dom(attr("max_memory_kib", 262143)), Want: re(`max_memory_kib below memory_mib.*max_memory_kib = 262143 is below memory_mib = 256 \(262144 KiB\).*set it to 262144 or more`)},
		{Name: "max memory MiB below KiB", Config: dom(attr("memory_mib", hcl("null")), attr("memory_kib", 1000001), attr("max_memory_mib", 976)), Want: re(`max_memory_mib below memory_kib.*max_memory_mib = 976 \(999424 KiB\) is below memory_kib = 1000001.*set it to 977 or more`)},
		{Name: "numa cell memory in neither form", Config: dom(attr("cpu", hcl(`{ numa_cell = [{ id = 0, cpus = "0" }] }`))), Want: re(`Neither memory_mib nor memory_kib is set.*tfacc-v, cpu.numa_cell 0: set the memory with memory_mib`)},
		{Name: "numa cell memory in both forms", Config: dom(attr("cpu", hcl(`{ numa_cell = [{ id = 0, cpus = "0", memory_mib = 256, memory_kib = 262144 }] }`))), Want: re(`Both memory_mib and memory_kib are set.*cpu.numa_cell 0: memory_mib = 256 and memory_kib = 262144`)},
		{Name: "numa cells short by a KiB", Config: dom(attr("memory_mib", hcl("null")), attr("memory_kib", 1000001), attr("cpu", hcl(`{ numa_cell = [{ id = 0, cpus = "0", memory_kib = 1000000 }] }`))), Want: re(`Invalid cpu.numa_cell.*adds up to 1000000 KiB, but the domain has 1000001 KiB.*make the cells add up to 1000001 KiB`)},
		{Name: "disk with two sources", Config: dom(disk(attr("volume_id", "default/a.qcow2"), attr("path", "/var/lib/a.qcow2"))), Want: re(`A disk has more than one source.*disk 0 sets volume_id and path: keep one of them`)},
		{Name: "disk without source", Config: dom(disk(attr("device", "cdrom"))), Want: re(`A disk has no source.*disk 0 needs one of volume_id, path and network_source`)},
		{Name: "nic on network and bridge", Config: dom(nic(attr("network", "default"), attr("bridge", "br0"))), Want: re(`network_interface 0 needs exactly one of network, bridge and direct; it has\s+bridge and network`)},
		{Name: "nic on nothing", Config: dom(nic(attr("model", "virtio"))), Want: re(`network_interface 0 needs exactly one of network, bridge and direct; it has\s+none`)},
		{Name: "nic queues on e1000", Config: dom(nic(attr("network", "default"), attr("model", "e1000"), attr("queues", 2))), Want: re(`queues needs model = "virtio"`)},
		{Name: "nic empty rom", Config: dom(nic(attr("network", "default"), attr("rom", hcl(`{}`)))), Want: re(`rom needs bar or file`)},
		{Name: "nic vlan native mode alone", Config: dom(nic(attr("bridge", "br0"), attr("vlan", hcl(`{ native_mode = "tagged" }`)))), Want: re(`native_tag" must be specified`)},
		{Name: "nic bandwidth without average", Config: dom(nic(attr("network", "default"), attr("bandwidth", hcl(`{ inbound = { peak_kib = 10 } }`)))), Want: re(`"average_kib" is required`)},
		{Name: "wait source", Config: dom(nic(attr("network", "default"), waitFor("dhcp"))), Want: re(`source.*value must be one of`)},
		{Name: "lease on a bridge", Config: dom(nic(attr("bridge", "br0"), waitFor("lease"))), Want: re(`DHCP leases need a libvirt network.*source = "agent"`)},
		{Name: "agent without channel", Config: dom(attr("qemu_agent", false), nic(attr("network", "default"), waitFor("agent"))), Want: re(`The guest agent is disabled`)},
		{Name: "cpu.model without custom", Config: dom(attr("cpu", hcl(`{ mode = "host-model", model = "Haswell" }`))), Want: re(`cpu.model needs cpu.mode = "custom"`)},
		{Name: "cpu.mode", Config: dom(attr("cpu", hcl(`{ mode = "host" }`))), Want: re(`cpu.mode.*value must be one of`)},
		{Name: "cpu.fallback without model", Config: dom(attr("cpu", hcl(`{ mode = "host-model", fallback = "forbid" }`))), Want: re(`cpu.fallback needs cpu.model`)},
		{Name: "cpu.check without mode", Config: dom(attr("cpu", hcl(`{ check = "full" }`))), Want: re(`cpu.check needs cpu.mode`)},
		{Name: "cpu.check", Config: dom(attr("cpu", hcl(`{ mode = "host-model", check = "all" }`))), Want: re(`cpu.check.*value must be one of`)},
		{Name: "firmware", Config: dom(attr("firmware", "efi")), Want: re(`firmware.*value must be one of.*"uefi"`)},
		{Name: "shutdown timeout", Config: dom(attr("shutdown", hcl(`{ timeout = "soon" }`))), Want: re(`Invalid duration.*"soon" is not a duration`)},
		{Name: "graphics listen", Config: dom(attr("graphics", hcl(`{ listen = "localhost" }`))), Want: re(`Invalid IP address.*"localhost"`)},
		{Name: "same target twice", Config: dom(disk(attr("path", "/a"), attr("target", "vda")), disk(attr("path", "/b"), attr("target", "vda"))), Want: re(`Disk target used twice`)},
		{Name: "data source needs name or uuid", Config: provider + `data "libvirt_domain" "x" {}`, Want: re(`Exactly one of these attributes must be configured: \[name,uuid\]`)},
	}
	acctest.ExpectPlanErrors(t, cases)
}
