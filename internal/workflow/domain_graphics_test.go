package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// withPassword is spec(1, 256) with a VNC console whose password is p (nil: kept).
func withPassword(p *string, version string) domainxml.Spec {
	s := spec(1, 256)
	s.Graphics = domainxml.Graphics{Type: domainxml.GraphicsVNC, Listen: domainxml.DefaultListen, Password: p, PasswordVersion: version}
	return s
}

// TestApplyLiveGraphicsPassword: a console password change of a running domain (stated,
// or write-only by a version bump) is one UpdateDevice of the graphics device with the
// new password, live and persistent: no definition, no restart. A keymap change restarts.
func TestApplyLiveGraphicsPassword(t *testing.T) {
	for name, c := range map[string]struct{ old, new domainxml.Spec }{
		"stated":     {withPassword(new("old"), ""), withPassword(new("new"), "")},
		"write-only": {withPassword(nil, "1"), withPassword(new("new"), "2")},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			f.status = running(true)
			res, err := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: c.old, New: c.new, Running: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != domainxml.ChangeLive || res.Started || res.Forced || len(f.calls) != 2 ||
				!strings.HasPrefix(f.calls[1], "UpdateDevice u false <graphics type=\"vnc\"") || !strings.Contains(f.calls[1], `passwd="new"`) {
				t.Errorf("result %+v, calls\n%s", res, strings.Join(f.calls, "\n"))
			}
		})
	}
	f := newFake()
	f.status = running(true)
	next := withPassword(new("old"), "")
	next.Graphics.Keymap = "de"
	if res, _ := Apply(context.Background(), f, Change{ID: "u", Name: "web", Old: withPassword(new("old"), ""), New: next, Running: true}); res.Method != domainxml.ChangeRestart {
		t.Errorf("keymap change: %+v", res)
	}
}
