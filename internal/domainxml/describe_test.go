package domainxml

import (
	"maps"
	"os"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func strp(s string) *string { return &s }

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestDescribeFixture: what libvirt 9.0 returned for a virsh-defined domain with a
// title, a two-line description, tags in the record and lifecycle actions reads back as
// such, and a spec that says nothing of them is the same (no drift on libvirt's defaults).
func TestDescribeFixture(t *testing.T) {
	text, err := os.ReadFile("testdata/describe_libvirt.xml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	d := p.Spec.Describe
	if derefStr(d.Title) != "web front" || derefStr(d.Description) != "the front end\nsecond line" ||
		!maps.Equal(d.Tags, map[string]string{"env": "prod", "team": "web"}) {
		t.Errorf("describe %q %q %v", derefStr(d.Title), derefStr(d.Description), d.Tags)
	}
	if l := p.Spec.Lifecycle; l != (Lifecycle{OnPoweroff: "restart", OnReboot: "restart", OnCrash: "coredump-restart"}) {
		t.Errorf("lifecycle %+v", l)
	}
	for _, f := range []family{describeFamily, lifecycleFamily} {
		if !f.same(p.Spec, Spec{}) {
			t.Errorf("%s: a spec that keeps everything differs from the fixture", f.name)
		}
	}
	// Merged onto it, a spec that keeps everything keeps it all, the tags too.
	var base libvirtxml.Domain
	if err := base.Unmarshal(string(text)); err != nil {
		t.Fatal(err)
	}
	spec := p.Spec
	spec.Describe, spec.Lifecycle = Describe{}, Lifecycle{}
	out, err := Build(&base, spec)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := FromDomain(out)
	if derefStr(again.Spec.Describe.Title) != "web front" || len(again.Spec.Describe.Tags) != 2 || again.Spec.Lifecycle.OnCrash != "coredump-restart" {
		t.Errorf("kept: %+v %+v", again.Spec.Describe, again.Spec.Lifecycle)
	}
}

// TestDescribeBuild: set, change and remove title, description and tags; the record
// keeps the references it had.
func TestDescribeBuild(t *testing.T) {
	s := Spec{Name: "m", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB,
		Describe:  Describe{Title: strp("db"), Description: strp("a <b> & c"), Tags: map[string]string{"b": "2", "a": "1"}},
		Lifecycle: Lifecycle{OnPoweroff: "destroy", OnReboot: "destroy", OnCrash: "coredump-destroy"}}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := d.Marshal()
	for _, want := range []string{"<title>db</title>", "<description>a &lt;b&gt; &amp; c</description>",
		`<tag name="a" value="1"></tag><tag name="b" value="2"></tag>`, "<on_reboot>destroy</on_reboot>",
		"<on_crash>coredump-destroy</on_crash>"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	p, _ := FromDomain(d)
	if !describeFamily.same(p.Spec, s) || !lifecycleFamily.same(p.Spec, s) {
		t.Errorf("round trip: %+v", p.Spec.Describe)
	}
	s.Describe = Describe{Title: strp(""), Description: strp(""), Tags: map[string]string{}}
	d, err = Build(d, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "" || d.Description != "" || d.Metadata != nil {
		t.Errorf("removed: title %q description %q metadata %+v", d.Title, d.Description, d.Metadata)
	}
}

// TestDescribePlan: title and description change live (set-metadata), tags by a
// redefinition; nothing of it restarts, and nil plans nothing. Lifecycle restarts.
func TestDescribePlan(t *testing.T) {
	old := Spec{Name: "m", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Describe: Describe{Title: strp("a")}}
	for _, c := range []struct {
		name  string
		next  Describe
		ops   []LiveOpKind
		nouns string
	}{
		{"nil keeps", Describe{}, nil, ""},
		{"same", Describe{Title: strp("a"), Description: strp(""), Tags: map[string]string{}}, nil, ""},
		{"title", Describe{Title: strp("b")}, []LiveOpKind{LiveSetMetadata}, "title"},
		{"all", Describe{Title: strp(""), Description: strp("x"), Tags: map[string]string{"k": "v"}},
			[]LiveOpKind{LiveSetMetadata, LiveSetMetadata, LiveRedefine}, "title,description,tags"},
	} {
		next := old
		next.Describe = c.next
		pl := PlanChange(old, next, true, true, nil)
		var kinds []LiveOpKind
		var nouns []string
		for _, op := range pl.Ops {
			kinds, nouns = append(kinds, op.Kind), append(nouns, op.Noun)
		}
		want := ChangeLive
		if c.ops == nil {
			want = ChangeNone
		}
		if pl.Change != want || strings.Join(nouns, ",") != c.nouns || len(kinds) != len(c.ops) {
			t.Errorf("%s: %s %v %v, want %s %v", c.name, pl.Change, kinds, nouns, want, c.ops)
		}
	}
	next := old
	next.Lifecycle.OnCrash = "restart"
	if pl := PlanChange(old, next, true, true, nil); pl.Change != ChangeRestart {
		t.Errorf("lifecycle: %s", pl.Change)
	}
	if pl := PlanChange(old, next, false, false, nil); pl.Change != ChangeDefinition {
		t.Errorf("lifecycle, stopped: %s", pl.Change)
	}
}

func TestLifecycleValidate(t *testing.T) {
	for _, c := range []struct {
		l   Lifecycle
		bad string
	}{
		{Lifecycle{OnCrash: "preserve"}, ""},
		{Lifecycle{OnPoweroff: "preserve"}, "on_poweroff"},
		{Lifecycle{OnReboot: "coredump-destroy"}, "on_reboot"},
		{Lifecycle{OnCrash: "explode"}, "on_crash"},
		{Lifecycle{OnCrash: "rename-restart"}, "on_crash"},
	} {
		err := lifecycleFamily.validate(&Spec{Lifecycle: c.l})
		if (err != nil) != (c.bad != "") || (err != nil && !strings.Contains(err.Error(), c.bad)) {
			t.Errorf("%+v: %v", c.l, err)
		}
	}
}

func TestRecordTags(t *testing.T) {
	got := RecordTags(`<domain xmlns="` + MetadataNS + `"><disk target="vda" volume="v"/><tag name="env" value="prod"/></domain>`)
	if !maps.Equal(got, map[string]string{"env": "prod"}) {
		t.Errorf("tags %v", got)
	}
	if RecordTags("<domain") != nil || RecordTags(`<domain xmlns="x"/>`) != nil {
		t.Error("no tags expected")
	}
}
