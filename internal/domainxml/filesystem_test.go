package domainxml

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func fsSpec(fss ...Filesystem) Spec {
	return Spec{Name: "fs", Type: "qemu", VCPU: 1, MemoryKiB: 256 * KiBPerMiB, Firmware: FirmwareBIOS, Graphics: Graphics{Type: GraphicsNone},
		Disks:       []Disk{{Path: "/p/a.qcow2", Format: "qcow2", Device: DeviceDisk}},
		Filesystems: fss}
}

// What libvirt 9.0 gives back for a running domain with two shares (virsh dumpxml):
// the virtiofsd binary, aliases and addresses are libvirt's, the ram filesystem is not a
// share, and the memory backing is the one Build adds.
func TestFilesystem_parseLibvirtFilled(t *testing.T) {
	text, err := os.ReadFile("testdata/filesystem-libvirt.xml")
	if err != nil {
		t.Fatal(err)
	}
	var base libvirtxml.Domain
	if err := base.Unmarshal(string(text)); err != nil {
		t.Fatal(err)
	}
	p, err := FromDomain(&base)
	if err != nil {
		t.Fatal(err)
	}
	want := []Filesystem{
		{Source: "/srv/share", Target: "share", Driver: FSVirtiofs},
		{Source: "/srv/ro", Target: "nine", Driver: FS9p, ReadOnly: true, AccessMode: "mapped"},
		{Source: "/srv/plain", Target: "plain", Driver: FS9p},
	}
	if !reflect.DeepEqual(p.Spec.Filesystems, want) {
		t.Fatalf("parsed %+v\nwant   %+v", p.Spec.Filesystems, want)
	}
	// Rebuilt onto itself it stays the same: same addresses, the ram filesystem and the
	// memory backing kept.
	d, out := build(t, &base, p.Spec)
	if len(d.Devices.Filesystems) != 4 || d.Devices.Filesystems[0].Source.RAM == nil {
		t.Fatalf("the ram filesystem must come first and stay:\n%s", out)
	}
	if a := d.Devices.Filesystems[1].Address; a == nil || a.PCI == nil || *a.PCI.Slot != 2 {
		t.Fatalf("the virtiofs share lost its address:\n%s", out)
	}
	if !isVirtiofsMemory(d.MemoryBacking) || !strings.Contains(out, "<virtiofs-memory>") {
		t.Fatalf("the provider's memory backing and its note must stay:\n%s", out)
	}
}

func TestFilesystem_buildAndRoundTrip(t *testing.T) {
	for name, fss := range map[string][]Filesystem{
		"virtiofs":         {{Source: "/srv/a", Target: "a"}},
		"9p read-only":     {{Source: "/srv/b", Target: "b", Driver: FS9p, ReadOnly: true, AccessMode: "squash"}},
		"both, 9p default": {{Source: "/srv/a/", Target: "a", Driver: FSVirtiofs}, {Source: "/srv/b", Target: "b", Driver: FS9p}},
	} {
		t.Run(name, func(t *testing.T) {
			s := fsSpec(fss...)
			_, text := build(t, nil, s)
			p, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			if Classify(s, p.Spec, true, true) != ChangeNone {
				t.Fatalf("reads back differently: %+v\n%s", p.Spec.Filesystems, text)
			}
		})
	}
	_, text := build(t, nil, fsSpec(Filesystem{Source: "/srv/b", Target: "b", Driver: FS9p, ReadOnly: true}))
	for _, want := range []string{`<filesystem type="mount" accessmode="passthrough">`,
		`<source dir="/srv/b">`, `<target dir="b">`, `<readonly>`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, `<driver type="path"`) { // 9p's default driver is libvirt's to write
		t.Errorf("a 9p share writes a driver:\n%s", text)
	}
	if strings.Contains(text, "memoryBacking") {
		t.Errorf("9p needs no shared memory:\n%s", text)
	}
}

// The memory backing virtiofs needs comes with the first share and goes with the last,
// and one the definition already had is never touched.
func TestFilesystem_virtiofsMemory(t *testing.T) {
	share := Filesystem{Source: "/srv/a", Target: "a"}
	d, text := build(t, nil, fsSpec(share))
	if !isVirtiofsMemory(d.MemoryBacking) || !strings.Contains(text, "virtiofs-memory") {
		t.Fatalf("a virtiofs share needs memfd shared memory, noted in the record:\n%s", text)
	}
	d, text = build(t, d, fsSpec())
	if d.MemoryBacking != nil || strings.Contains(text, "virtiofs-memory") {
		t.Fatalf("removing the last share removes the backing Build added:\n%s", text)
	}
	// Without memory_backing, the provider owns <memoryBacking>: the same backing written
	// by hand beside a share reads back as none (no drift on a virsh-defined domain) and
	// goes with the last share; another is replaced.
	hand := &libvirtxml.Domain{Name: "fs", MemoryBacking: &libvirtxml.DomainMemoryBacking{
		MemorySource: &libvirtxml.DomainMemorySource{Type: "memfd"}, MemoryAccess: &libvirtxml.DomainMemoryAccess{Mode: "shared"}}}
	if p, _ := FromDomain(&libvirtxml.Domain{Name: "fs", MemoryBacking: hand.MemoryBacking, Devices: d.Devices}); p.Spec.MemoryBacking == nil {
		t.Fatal("without a virtiofs share, that backing is memory_backing's")
	}
	d, text = build(t, hand, fsSpec(share))
	if p, _ := Parse(text); !isVirtiofsMemory(d.MemoryBacking) || p.Spec.MemoryBacking != nil {
		t.Fatalf("a virtiofs backing beside a share reads as none:\n%s", text)
	}
	if d, _ = build(t, d, fsSpec()); d.MemoryBacking != nil {
		t.Fatal("the backing goes with the last share")
	}
	huge := &libvirtxml.Domain{Name: "fs", MemoryBacking: &libvirtxml.DomainMemoryBacking{MemoryHugePages: &libvirtxml.DomainMemoryHugepages{},
		MemoryAccess: &libvirtxml.DomainMemoryAccess{Mode: "shared"}}}
	if d, _ = build(t, huge, fsSpec(share)); !isVirtiofsMemory(d.MemoryBacking) {
		t.Fatalf("without memory_backing, a share gets memfd shared memory: %+v", d.MemoryBacking)
	}
}

func TestFilesystem_sameAndValidate(t *testing.T) {
	a := Filesystem{Source: "/srv/a", Target: "a", Driver: FS9p}
	for name, tc := range map[string]struct {
		x, y Filesystem
		same bool
	}{
		"default access":   {a, Filesystem{Source: "/srv/a/", Target: "a", Driver: FS9p, AccessMode: AccessPassthrough}, true},
		"default driver":   {Filesystem{Source: "/s", Target: "t"}, Filesystem{Source: "/s", Target: "t", Driver: FSVirtiofs}, true},
		"driver":           {a, Filesystem{Source: "/srv/a", Target: "a"}, false},
		"read-only":        {a, Filesystem{Source: "/srv/a", Target: "a", Driver: FS9p, ReadOnly: true}, false},
		"tag":              {a, Filesystem{Source: "/srv/a", Target: "b", Driver: FS9p}, false},
		"access mode":      {a, Filesystem{Source: "/srv/a", Target: "a", Driver: FS9p, AccessMode: "mapped"}, false},
		"source directory": {a, Filesystem{Source: "/srv/b", Target: "a", Driver: FS9p}, false},
	} {
		if got := filesystemFamily.same(fsSpec(tc.x), fsSpec(tc.y)); got != tc.same {
			t.Errorf("%s: same = %v", name, got)
		}
	}
	for name, fs := range map[string][]Filesystem{
		"must be an absolute directory": {{Source: "srv", Target: "a"}},
		"must be 1 to 36 bytes":         {{Source: "/srv", Target: strings.Repeat("t", 37)}},
		"is used twice":                 {{Source: "/a", Target: "t"}, {Source: "/b", Target: "t", Driver: FS9p}},
		"access_mode is a 9p setting":   {{Source: "/a", Target: "t", AccessMode: "mapped"}},
		"is neither virtiofs nor 9p":    {{Source: "/a", Target: "t", Driver: "nfs"}},
	} {
		if err := fsSpec(fs...).Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error %q, got %v", name, err)
		}
	}
}
