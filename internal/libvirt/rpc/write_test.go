package rpc

import (
	"context"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// A write interrupted by its connection closing (go-libvirt's ErrInterrupted, "procedure
// interrupted while awaiting response") is a transport error. Write runs once and says so:
// its caller must find out what the daemon did. WriteSettled, for writes that reach the same
// end whether or not the lost one got through, runs it again on a fresh connection.
func TestWriteInterrupted(t *testing.T) {
	c := mockClient(t)
	calls := 0
	err := c.Write(context.Background(), "force off domain web", func(*golibvirt.Libvirt) error { calls++; return golibvirt.ErrInterrupted })
	if calls != 1 || !IsTransport(err) {
		t.Errorf("Write: fn ran %d times, err %v; want once and a transport error", calls, err)
	}

	c = mockClient(t)
	calls = 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = c.WriteSettled(ctx, "force off domain web", func(*golibvirt.Libvirt) error {
		calls++
		if calls == 1 {
			return golibvirt.ErrInterrupted
		}
		return nil
	})
	if err != nil || calls != 2 {
		t.Errorf("WriteSettled: fn ran %d times, err %v; want twice and success", calls, err)
	}
	if s := c.Stats(); s.Dials != 2 {
		t.Errorf("%d dials, want a fresh connection for the second run", s.Dials)
	}
}
