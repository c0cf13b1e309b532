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

// LiveSetIOTune sets a disk's I/O limits (virDomainSetBlockIoTune, live and config).
const LiveSetIOTune LiveOpKind = "set-iotune"

// LiveOp is one live operation.
type LiveOp struct {
	Kind LiveOpKind
	// Device names the device for the call and for messages (a disk's target).
	Device string
	// IOTune is what LiveSetIOTune sets; nil clears every limit.
	IOTune *IOTune
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
	reason = structural
	sizing := old.VCPU != next.VCPU || old.MemoryMiB != next.MemoryMiB
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
	case next.MemoryMiB > maxOr(old.MaxMemoryMiB, old.MemoryMiB):
		return Plan{Change: ChangeRestart, Reason: "memory_mib goes above max_memory_mib"}
	default:
		return Plan{Change: ChangeLive, Ops: ops}
	}
}

// diskLive: a change of only disks' iotune is live, one LiveSetIOTune per disk whose
// limits change. Removing a group name while limits stay is not (libvirt keeps the old
// group when none is sent, and an empty name is not a group).
func diskLive(old, next Spec, _ *libvirtxml.Domain) ([]LiveOp, string) {
	a, b := withDiskDefaults(old), withDiskDefaults(next)
	if !sameDisks(withoutIOTune(a), withoutIOTune(b)) {
		return nil, "disks change beyond their iotune"
	}
	var ops []LiveOp
	for i := range b.Disks {
		x, y := a.Disks[i], b.Disks[i]
		if sameIOTune(x.IOTune, y.IOTune) {
			continue
		}
		if y.Device == DeviceCDROM && y.Path == "" {
			return nil, "disk " + y.Target + ": iotune of an empty cdrom cannot change live"
		}
		if x.IOTune != nil && x.IOTune.GroupName != "" && y.IOTune.hasLimit() && y.IOTune.GroupName == "" {
			return nil, "disk " + y.Target + ": removing iotune group_name needs a restart"
		}
		var t *IOTune
		if y.IOTune.hasLimit() {
			c := *y.IOTune
			t = &c
		}
		ops = append(ops, LiveOp{Kind: LiveSetIOTune, Device: y.Target, IOTune: t})
	}
	return ops, ""
}

func withoutIOTune(s Spec) Spec {
	s.Disks = slices.Clone(s.Disks)
	for i := range s.Disks {
		s.Disks[i].IOTune = nil
	}
	return s
}
