package domainxml

import (
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Live operations: a change a family can make on the running domain without a restart.
// A family with a live hook says, for a change it sees, which operations take the domain
// from old to next, or why it needs a restart; Plan collects them. Other families (cdrom
// media, NIC link state and bandwidth, hot-plug) add a kind and their hook.

// LiveOpKind names a live operation; each has its DomainAPI call in internal/workflow.
type LiveOpKind string

const (
	// LiveSetIOTune sets a disk's I/O limits (virDomainSetBlockIoTune, live and config).
	LiveSetIOTune LiveOpKind = "set-iotune"
	// LiveUpdateDevice rewrites a device in place (virDomainUpdateDeviceFlags, live and
	// config) with XML: a NIC's link state, a cdrom's medium.
	LiveUpdateDevice LiveOpKind = "update-device"
	// LiveSetBandwidth sets a NIC's limits (virDomainSetInterfaceParameters, live and
	// config); Device is its MAC.
	LiveSetBandwidth LiveOpKind = "set-bandwidth"
	// LiveAttach plugs the device XML into the running domain and its definition.
	LiveAttach LiveOpKind = "attach"
	// LiveDetach unplugs the device (found in the live XML by Noun and Device) and, once
	// the guest let it go, removes it from the definition.
	LiveDetach LiveOpKind = "detach"
	// LiveSetMetadata sets the domain's title or description (Noun) to XML, live and in
	// the definition (virDomainSetMetadata); empty removes it.
	LiveSetMetadata LiveOpKind = "set-metadata"
	// LiveRedefine writes the definition again from the new spec, after the other
	// operations: what a family added for devices now gone (the shared memory of the last
	// virtiofs share) leaves the definition the next start uses; the running domain keeps it.
	LiveRedefine LiveOpKind = "redefine"
)

// LiveOp is one live operation.
type LiveOp struct {
	Kind LiveOpKind
	// Noun is the kind of device for messages and lookups: "disk", "interface",
	// "controller", "hostdev" or "filesystem".
	Noun string
	// Device names the device for the call and for messages (a disk's target, a NIC's
	// MAC, empty for a NIC attached without a MAC; a hostdev's HostdevName, a share's
	// mount tag).
	Device string
	// IOTune is what LiveSetIOTune sets; nil clears every limit.
	IOTune *IOTune
	// Bandwidth is what LiveSetBandwidth sets; unset directions clear.
	Bandwidth Bandwidth
	// XML is the device's XML for LiveUpdateDevice, LiveAttach and LiveDetach, built by
	// the same code as the definition.
	XML string
	// VCPU and CPUSet are what LivePinVCPU and LivePinEmulator pin (pinning.go).
	VCPU   uint
	CPUSet string
	// Seconds is what LiveSetMemStatsPeriod sets (memballoon_live.go).
	Seconds uint
	// Force allows LiveUpdateDevice a second try with the force flag (a cdrom tray the
	// guest locked).
	Force bool
}

// opOrder is the order Apply makes live operations in: detaches free addresses and
// names first, then attaches, then changes in place, then a redefinition.
func opOrder(k LiveOpKind) int {
	switch k {
	case LiveDetach:
		return 0
	case LiveAttach:
		return 1
	case LiveRedefine:
		return 3
	}
	return 2
}

// Plan is how a change reaches the domain: the method, the live operations (for
// ChangeLive, beside any sizing change), and for ChangeRestart the first reason a family
// gave.
type Plan struct {
	Change Change
	Ops    []LiveOp
	Reason string
}

// PlanChange says how going from old to next reaches the domain, given whether it is
// running before and is to be running after. cur is the domain's inactive definition
// when the caller has it (nil at plan time); hooks must cope without it.
func PlanChange(old, next Spec, runningBefore, runningAfter bool, cur *libvirtxml.Domain) Plan {
	structural, reason := "", ""
	var ops []LiveOp
	if old.Name != next.Name || !equalFold(old.UUID, next.UUID) || old.Type != next.Type {
		structural = "the domain's identity or type changes"
	}
	for _, f := range families {
		if structural != "" || f.same(old, next) {
			continue
		}
		if f.live == nil {
			structural = f.name + " changes"
			continue
		}
		fops, why := f.live(old, next, cur)
		if why != "" {
			structural = why
			continue
		}
		ops = append(ops, fops...)
	}
	if structural == "" {
		structural = noFreeRootPort(cur, pciAttaches(ops)) // hotplug_pci.go
	}
	reason = structural
	sizing := old.VCPU != next.VCPU || old.MemoryKiB != next.MemoryKiB
	switch {
	case structural == "" && !sizing && len(ops) == 0:
		return Plan{Change: ChangeNone}
	case !runningBefore || !runningAfter:
		return Plan{Change: ChangeDefinition}
	case structural != "":
		return Plan{Change: ChangeRestart, Reason: reason}
	case next.VCPU < old.VCPU:
		// Unplugging vCPUs needs the guest's cooperation and may never finish: restart.
		return Plan{Change: ChangeRestart, Reason: "vcpu goes down (unplugging vCPUs needs the guest's help)"}
	case next.VCPU > maxOr(old.MaxVCPU, old.VCPU):
		return Plan{Change: ChangeRestart, Reason: "vcpu goes above max_vcpu"}
	case next.MemoryKiB > maxOr(old.MaxMemoryKiB, old.MemoryKiB):
		return Plan{Change: ChangeRestart, Reason: "memory goes above the maximum memory (max_memory_mib / max_memory_kib)"}
	default:
		slices.SortStableFunc(ops, func(a, b LiveOp) int { return opOrder(a.Kind) - opOrder(b.Kind) })
		return Plan{Change: ChangeLive, Ops: ops}
	}
}
