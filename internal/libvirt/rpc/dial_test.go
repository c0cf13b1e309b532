package rpc

import (
	"strings"
	"testing"
)

// Item 11d: plain TCP is unencrypted and unauthenticated, and the user is told so.
func TestTCPTransportWarns(t *testing.T) {
	_, warnings, err := newDialer(mustURI(t, "qemu+tcp://10.0.0.5/system"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "unencrypted and unauthenticated") || !strings.Contains(warnings[0], "10.0.0.5:16509") {
		t.Fatalf("qemu+tcp warnings = %q", warnings)
	}
	c, err := NewClient(Config{URI: "qemu+tcp://10.0.0.5:16510/system"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 {
		t.Errorf("Client.Warnings = %q (the provider shows these as warning diagnostics)", c.Warnings)
	}
	for _, uri := range []string{"qemu:///system", "qemu+unix:///system?socket=/tmp/s"} {
		if _, warnings, err := newDialer(mustURI(t, uri), Config{}); err != nil || len(warnings) != 0 {
			t.Errorf("%s: warnings %q, %v", uri, warnings, err)
		}
	}
}
