package domainxml

import (
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestIOThreads: the count is written only when asked (nil keeps the domain's, numbered
// threads included), a new count drops the old numbering, it reads back (ids count too),
// and a change restarts a running domain while nil plans nothing.
func TestIOThreads(t *testing.T) {
	n := func(v uint) *uint { return &v }
	numbered := func() *libvirtxml.Domain {
		return &libvirtxml.Domain{IOThreads: 2, IOThreadIDs: &libvirtxml.DomainIOThreadIDs{
			IOThreads: []libvirtxml.DomainIOThread{{ID: 4}, {ID: 7}}}}
	}
	for _, c := range []struct {
		name    string
		want    *uint
		count   uint
		keepIDs bool
	}{
		{"nil keeps", nil, 2, true},
		{"same count keeps the numbering", n(2), 2, true},
		{"new count", n(3), 3, false},
		{"zero removes", n(0), 0, false},
	} {
		d := numbered()
		if err := ioThreadsFamily.build(d, &Spec{IOThreads: c.want}, nil); err != nil {
			t.Fatal(err)
		}
		if d.IOThreads != c.count || (d.IOThreadIDs != nil) != c.keepIDs {
			t.Errorf("%s: iothreads %d ids %v, want %d (ids kept %v)", c.name, d.IOThreads, d.IOThreadIDs, c.count, c.keepIDs)
		}
	}

	var p Parsed
	ioThreadsFamily.parse(&libvirtxml.Domain{IOThreadIDs: numbered().IOThreadIDs}, &p, nil)
	if p.Spec.IOThreadCount() != 2 {
		t.Errorf("ids without a count read as %d threads, want 2", p.Spec.IOThreadCount())
	}
	p = Parsed{}
	ioThreadsFamily.parse(&libvirtxml.Domain{}, &p, nil)
	if p.Spec.IOThreads != nil {
		t.Errorf("no iothreads read as %d, want nil", *p.Spec.IOThreads)
	}

	has := Spec{Name: "d", VCPU: 1, MemoryKiB: 64 * KiBPerMiB, IOThreads: n(2)}
	for _, c := range []struct {
		name string
		next *uint
		want Change
	}{{"kept by nil", nil, ChangeNone}, {"same", n(2), ChangeNone}, {"more", n(4), ChangeRestart}, {"none", n(0), ChangeRestart}} {
		next := has
		next.IOThreads = c.next
		if got := PlanChange(has, next, true, true, nil); got.Change != c.want || (c.want == ChangeRestart && got.Reason != "iothreads changes") {
			t.Errorf("%s: %+v, want %s", c.name, got, c.want)
		}
	}
}
