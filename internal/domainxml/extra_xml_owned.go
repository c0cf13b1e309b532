package domainxml

import (
	"fmt"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Owned elements in a form their family cannot say (issue #25, "lose nothing"): a family
// that owns a top-level element (ownedElements) types its everyday forms; a rarer form
// (a <cpu> with caches or NUMA distances, a <memoryBacking> with per-node huge pages,
// <vcpus> with hot-plug states, numbered <iothreadids>) goes whole into extra_xml, as a
// device the device families cannot type goes into device_xml. For such an element:
//   - read back, the family leaves it alone (its attributes read as unset) and
//     unmodelledElements gives it, so that import writes it into extra_xml;
//   - build writes the family's part first, then the fragment replaces the element whole
//     (extra_xml runs after every family);
//   - extra_xml takes a fragment of an owned element only in such a form: anything the
//     family can say stays the family's (ParseExtraFragment).
//
// An element is tested as libvirt prints an inactive definition: a running domain's live
// XML (with an id) carries libvirt's expansions (a host-model CPU's vendor and features)
// and is never escaped for them.

// untypedOwned maps an owned element to the test of whether d's element is in a form its
// family cannot say exactly, and the attributes a fragment of it stands for.
var untypedOwned = map[string]struct {
	untyped func(d *libvirtxml.Domain) bool
	what    string
}{
	"cpu":           {UntypedCPU, "cpu"},
	"memoryBacking": {UntypedMemoryBacking, "memory_backing"},
	// <vcpus> (per-vCPU enabled / hotpluggable / order) and numbered <iothreadids> have no
	// typed form: libvirt prints them only when the definition said them.
	"vcpus":       {func(d *libvirtxml.Domain) bool { return d.VCPUs != nil && len(d.VCPUs.VCPU) > 0 }, "vcpu and max_vcpu"},
	"iothreadids": {func(d *libvirtxml.Domain) bool { return d.IOThreadIDs != nil && len(d.IOThreadIDs.IOThreads) > 0 }, "cpu.iothreads"},
	// <features> with what the attributes cannot say (<pmu>, <msrs>, <tcg>, a Hyper-V
	// vendor_id, ...): taken whole, written by the features family (features.go).
	"features": {func(d *libvirtxml.Domain) bool { return d.Features != nil && !featuresTyped(d.Features) }, "features"},
}

// untypedElement reports whether d's owned element name is in a form its family cannot
// say (false for an element no family leaves to extra_xml, and for live XML).
func untypedElement(d *libvirtxml.Domain, name string) bool {
	u, ok := untypedOwned[name]
	return ok && d != nil && d.ID == nil && u.untyped(d)
}

// UntypedCPU reports whether d's <cpu> says what the cpu group cannot: a match other than
// exact, migratable other than libvirt's default, a vendor, a model vendor_id (or a
// <model> beside a host mode, which cpu.model does not say), caches,
// maxphysaddr, deprecated features, clusters, or NUMA cells with distances, caches or
// discard, or interconnects.
func UntypedCPU(d *libvirtxml.Domain) bool {
	c := d.CPU
	if c == nil {
		return false
	}
	mode := cpuModeOf(c)
	switch {
	case c.Match != "" && c.Match != "exact",
		c.Migratable != "" && (c.Migratable != "on" || (mode != "host-passthrough" && mode != "maximum")),
		c.Vendor != "", c.Cache != nil, c.MaxPhysAddr != nil, c.DeprecatedFeatures != "",
		c.Model != nil && (c.Model.VendorID != "" || (mode != cpuModeCustom && (c.Model.Value != "" || c.Model.Fallback != ""))),
		c.Topology != nil && c.Topology.Clusters > 1:
		return true
	}
	if c.Numa == nil {
		return false
	}
	if c.Numa.Interconnects != nil {
		return true
	}
	return slices.ContainsFunc(c.Numa.Cell, func(x libvirtxml.DomainCell) bool {
		return x.Discard != "" || x.Distances != nil || len(x.Caches) > 0 || x.ID == nil
	})
}

// UntypedMemoryBacking reports whether d's <memoryBacking> says what memory_backing
// cannot: huge pages per guest NUMA node (a nodeset, several page sizes) or an
// <allocation> (mode, threads).
func UntypedMemoryBacking(d *libvirtxml.Domain) bool {
	m := d.MemoryBacking
	if m == nil {
		return false
	}
	if m.MemoryAllocation != nil {
		return true
	}
	if h := m.MemoryHugePages; h != nil {
		return len(h.Hugepages) > 1 || slices.ContainsFunc(h.Hugepages, func(p libvirtxml.DomainMemoryHugepage) bool { return p.Nodeset != "" })
	}
	return false
}

// checkEscapedOwned: an owned element written whole in extra_xml leaves its family's
// attributes unset (the fragment would replace what they write).
func checkEscapedOwned(s *Spec) error {
	for i, f := range s.ExtraXML {
		n, err := parseNode(f)
		if err != nil {
			continue
		}
		var set string
		switch n.XMLName.Local {
		case "cpu":
			if s.CPUMode != "" || s.CPUTopology != nil || len(s.CPUFeatures) > 0 || len(s.NUMACells) > 0 {
				set = "cpu.mode, cpu.model, cpu.topology, cpu.feature and cpu.numa_cell"
			}
		case "memoryBacking":
			if s.MemoryBacking != nil {
				set = "memory_backing"
			}
		}
		if set != "" {
			return fmt.Errorf("extra_xml[%d] writes <%s> whole: leave %s unset, or say it all there and remove the fragment",
				i, n.XMLName.Local, set)
		}
	}
	return nil
}

// <os> is shared like <cputune>: the os families (os.go, arch.go, loader.go, boot_os.go,
// boot_kernel.go, smbios.go, secure_boot.go) type its everyday parts, and one <os>
// fragment in extra_xml holds the rest: <bios> (useserial, rebootTimeout), <acpi>
// tables, <shim>, <varstore>, a container's <init*>, and with firmware auto-selection a
// <loader> without a path (secure, stateless, ... asked of the firmware libvirt picks)
// and <firmware> features secure boot does not say (secure-boot turned off by name).
// Build merges the fragment's children into the <os> the families wrote.

// osExtra is the part of os no family types; nil when there is none. auto: the domain
// uses firmware auto-selection (<os firmware>).
func osExtra(os *libvirtxml.DomainOS) *libvirtxml.DomainOS {
	if os == nil {
		return nil
	}
	x := &libvirtxml.DomainOS{
		BIOS: os.BIOS, ACPI: os.ACPI, Shim: os.Shim, VarStore: os.VarStore,
		Init: os.Init, InitArgs: os.InitArgs, InitEnv: os.InitEnv, InitDir: os.InitDir, InitUser: os.InitUser, InitGroup: os.InitGroup,
	}
	if os.Loader != nil && os.Loader.Path == "" && (os.Firmware != "" || os.FirmwareInfo != nil) {
		x.Loader = os.Loader
	}
	if os.FirmwareInfo != nil && len(os.FirmwareInfo.Features) > 0 && !parseSecureBoot(os).Enabled {
		x.FirmwareInfo = os.FirmwareInfo
	}
	if os.BootMenu != nil && os.BootMenu.Enable != "yes" { // os.boot_menu says an enabled menu
		x.BootMenu = os.BootMenu
	}
	if isZeroOS(x) {
		return nil
	}
	return x
}

func isZeroOS(x *libvirtxml.DomainOS) bool {
	return x.BIOS == nil && x.ACPI == nil && x.Shim == "" && x.VarStore == nil && x.Init == "" && len(x.InitArgs) == 0 &&
		len(x.InitEnv) == 0 && x.InitDir == "" && x.InitUser == "" && x.InitGroup == "" && x.Loader == nil && x.FirmwareInfo == nil &&
		x.BootMenu == nil
}

// checkOSFragment: an <os> fragment holds only what no family types.
func checkOSFragment(probe *libvirtxml.Domain) error {
	o := probe.OS
	if o == nil {
		return fmt.Errorf("an empty <os> says nothing")
	}
	rest := *o
	rest.BIOS, rest.ACPI, rest.Shim, rest.VarStore = nil, nil, "", nil
	rest.Init, rest.InitArgs, rest.InitEnv, rest.InitDir, rest.InitUser, rest.InitGroup = "", nil, nil, "", "", ""
	rest.FirmwareInfo = nil
	if rest.Loader != nil && rest.Loader.Path == "" {
		rest.Loader = nil
	}
	if rest.BootMenu != nil && rest.BootMenu.Enable != "yes" {
		rest.BootMenu = nil
	}
	if !isZeroOSAll(&rest) {
		return fmt.Errorf("<os> is managed by os (arch, machine, firmware, boot, kernel, loader, smbios); an <os> fragment " +
			"holds only what the os group cannot say: <bios>, <acpi>, <shim>, <varstore>, <init...>, and with firmware " +
			"auto-selection a <loader> without a path and <firmware> features")
	}
	if o.FirmwareInfo != nil && parseSecureBoot(o).Enabled {
		return fmt.Errorf("<os><firmware> asks for secure-boot: use os.secure_boot")
	}
	return nil
}

func isZeroOSAll(o *libvirtxml.DomainOS) bool {
	return o.Type == nil && o.Firmware == "" && o.NVRam == nil && o.Kernel == "" && o.Initrd == "" && o.Cmdline == "" &&
		o.DTB == "" && len(o.BootDevices) == 0 && o.SMBios == nil && isZeroOS(o)
}

// buildOSExtra merges the fragment's <os> (probe) into d's.
func buildOSExtra(d *libvirtxml.Domain, probe *libvirtxml.Domain) {
	if d.OS == nil {
		d.OS = &libvirtxml.DomainOS{}
	}
	clearOSExtra(d)
	p := probe.OS
	o := d.OS
	o.BIOS, o.ACPI, o.Shim, o.VarStore = p.BIOS, p.ACPI, p.Shim, p.VarStore
	o.Init, o.InitArgs, o.InitEnv, o.InitDir, o.InitUser, o.InitGroup = p.Init, p.InitArgs, p.InitEnv, p.InitDir, p.InitUser, p.InitGroup
	if p.Loader != nil && (o.Loader == nil || o.Loader.Path == "") {
		o.Loader = p.Loader
	}
	if p.FirmwareInfo != nil {
		o.FirmwareInfo = p.FirmwareInfo
	}
	if p.BootMenu != nil && (o.BootMenu == nil || o.BootMenu.Enable != "yes") {
		o.BootMenu = p.BootMenu
	}
}

// clearOSExtra takes out of d's <os> what an <os> fragment writes.
func clearOSExtra(d *libvirtxml.Domain) {
	o := d.OS
	if o == nil {
		return
	}
	x := osExtra(o)
	if x == nil {
		return
	}
	o.BIOS, o.ACPI, o.Shim, o.VarStore = nil, nil, "", nil
	o.Init, o.InitArgs, o.InitEnv, o.InitDir, o.InitUser, o.InitGroup = "", nil, nil, "", "", ""
	if x.Loader != nil {
		o.Loader = nil
	}
	if x.FirmwareInfo != nil {
		o.FirmwareInfo = nil
	}
	if x.BootMenu != nil {
		o.BootMenu = nil
	}
}

// familyWrites says whether s has its family write the owned element name (then a
// fragment of it that goes leaves the family's element; else the element goes with it).
func familyWrites(s *Spec, name string) bool {
	switch name {
	case "cpu":
		return s.CPUMode != "" || s.CPUTopology != nil || len(s.CPUFeatures) > 0 || len(s.NUMACells) > 0
	case "memoryBacking":
		return s.MemoryBacking != nil || s.virtiofsMemory
	}
	return false // <vcpus>, <iothreadids>: no typed form
}
