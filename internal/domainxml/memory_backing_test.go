package domainxml

import (
	"strings"
	"testing"
)

// memory_backing with a virtiofs share: what it leaves out is memfd and shared, and
// reading it back shows no change.
func TestMemoryBacking_virtiofsDefaults(t *testing.T) {
	s := fsSpec(Filesystem{Source: "/srv/a", Target: "a"})
	s.MemoryBacking = &MemoryBacking{Locked: true}
	d, text := build(t, nil, s)
	m := d.MemoryBacking
	if m.MemorySource.Type != "memfd" || m.MemoryAccess.Mode != "shared" || m.MemoryLocked == nil || strings.Contains(text, "virtiofs-memory") {
		t.Fatalf("memory_backing with virtiofs:\n%s", text)
	}
	p, _ := Parse(text)
	if c := Classify(s, p.Spec, true, true); c != ChangeNone {
		t.Errorf("reads back as %s: %+v", c, p.Spec.MemoryBacking)
	}
	// The same memory, said by memory_backing or left to virtiofs, is no change.
	implied := fsSpec(Filesystem{Source: "/srv/a", Target: "a"})
	explicit := implied
	explicit.MemoryBacking = &MemoryBacking{Source: "memfd", Access: "shared"}
	if c := Classify(implied, explicit, true, true); c != ChangeNone {
		t.Errorf("explicit virtiofs memory is %s", c)
	}
	huge := fsSpec()
	huge.MemoryBacking = &MemoryBacking{HugePages: true, HugePageSizeKiB: 2048}
	_, text = build(t, nil, huge)
	if !strings.Contains(text, `<page size="2048" unit="KiB">`) {
		t.Errorf("hugepages:\n%s", text)
	}
	if p, _ = Parse(text); p.Spec.MemoryBacking == nil || *p.Spec.MemoryBacking != *huge.MemoryBacking {
		t.Errorf("hugepages read back as %+v", p.Spec.MemoryBacking)
	}
}

// Removing the last virtiofs share of a running domain stays live (the filesystem family
// detaches it): the memory it implied is no memory_backing change; a memory_backing
// that loses virtiofs' memfd shared memory restarts.
func TestMemoryBacking_liveWithVirtiofsRemoved(t *testing.T) {
	old := fsSpec(Filesystem{Source: "/srv/a", Target: "a"})
	cur, _ := build(t, nil, old)
	if p := PlanChange(old, fsSpec(), true, true, cur); p.Change != ChangeLive {
		t.Errorf("virtiofs share removed: %+v", p)
	}
	old.MemoryBacking = &MemoryBacking{Locked: true}
	next := fsSpec()
	next.MemoryBacking = &MemoryBacking{Locked: true}
	if p := PlanChange(old, next, true, true, cur); p.Change != ChangeRestart || p.Reason != "memory_backing changes" {
		t.Errorf("with memory_backing: %+v", p)
	}
}
