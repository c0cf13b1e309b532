package tfkit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

func TestReport(t *testing.T) {
	var d diag.Diagnostics
	Report(&d, "Unable to x", nil)
	if len(d) != 0 {
		t.Fatalf("nil error reported: %v", d)
	}
	Report(&d, "Unable to create snapshot s", errors.New("plain"))
	cause := AtAttribute(path.Root("memory"), errors.New("needs a running domain"))
	Report(&d, "Unable to create snapshot s", fmt.Errorf("wrapped: %w", cause))
	if len(d) != 2 || d[0].Summary() != "Unable to create snapshot s" || d[0].Detail() != "plain" {
		t.Fatalf("diagnostics %v", d)
	}
	if _, ok := d[0].(diag.DiagnosticWithPath); ok {
		t.Error("a plain error points at an attribute")
	}
	p, ok := d[1].(diag.DiagnosticWithPath)
	if !ok || !p.Path().Equal(path.Root("memory")) || d[1].Detail() != "wrapped: needs a running domain" {
		t.Errorf("attribute error %v", d[1])
	}
	if AtAttribute(path.Root("x"), nil) != nil {
		t.Error("atAttribute(nil) is not nil")
	}
	if !errors.Is(AtAttribute(path.Root("x"), libvirt.ErrNotFound), libvirt.ErrNotFound) {
		t.Error("atAttribute hides what it wraps")
	}
}

func TestGone(t *testing.T) {
	err := Gone("changed outside Terraform (%s)", "the file is gone")
	if !errors.Is(err, libvirt.ErrNotFound) || err.Error() != libvirt.ErrNotFound.Error()+": changed outside Terraform (the file is gone)" {
		t.Errorf("gone: %v", err)
	}
}

func TestUnsetTimeouts(t *testing.T) {
	v := UnsetTimeouts(timeouts.Opts{Create: true, Delete: true})
	if !v.IsNull() {
		t.Error("not null")
	}
	types := v.AttributeTypes(t.Context())
	if len(types) != 2 || types["create"] == nil || types["delete"] == nil {
		t.Errorf("attribute types %v", types)
	}
}
