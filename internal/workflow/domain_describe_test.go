package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// TestApplyTitleLive: a title and description change of a running domain is one
// SetDomainMetadata each (live and persistent), no definition, no restart; a stopped
// domain gets its definition rewritten instead.
func TestApplyTitleLive(t *testing.T) {
	str := func(s string) *string { return &s }
	old, next := spec(1, 256), spec(1, 256)
	old.Describe = domainxml.Describe{Title: str("a")}
	next.Describe = domainxml.Describe{Title: str("b"), Description: str("d")}
	f := newFake()
	f.status = running(true)
	res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: old, New: next, Running: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GetDomainStatus u", "SetDomainMetadata u title b", "SetDomainMetadata u description d"}
	if res.Method != domainxml.ChangeLive || res.Started || strings.Join(f.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("result %+v, calls\n%s\nwant\n%s", res, strings.Join(f.calls, "\n"), strings.Join(want, "\n"))
	}

	f = newFake()
	f.status = running(false)
	res, err = Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: old, New: next, Running: false})
	if err != nil || res.Method != domainxml.ChangeDefinition || strings.Contains(strings.Join(f.calls, " "), "SetDomainMetadata") {
		t.Errorf("stopped: %+v %v, calls %v", res, err, f.calls)
	}
}
