package rpc

import (
	"context"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Dedicated needs no slot of the pool: with every pooled connection held (a copy's
// stream, say), a pooled call waits, a dedicated one runs at once — how the thaw after a
// freeze reaches the daemon (libvirt.Client.fsThaw).
func TestDedicatedRunsWhenPoolExhausted(t *testing.T) {
	c := mockClient(t) // max_connections 1
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.Write(context.Background(), "hold the pool", func(*golibvirt.Libvirt) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	defer func() {
		close(release)
		if err := <-done; err != nil {
			t.Errorf("the held call: %v", err)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := c.Write(ctx, "pooled", func(*golibvirt.Libvirt) error { return nil }); err == nil {
		t.Fatal("a pooled call ran with the pool exhausted: the test holds nothing")
	}

	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var version uint64
	err := c.Dedicated(ctx, "thaw", func(l *golibvirt.Libvirt) (err error) {
		version, err = l.ConnectGetLibVersion()
		return err
	})
	if err != nil || version == 0 {
		t.Fatalf("dedicated call with the pool exhausted: version %d, %v", version, err)
	}
	if s := c.Stats(); s.InUse != 1 || s.Open != 1 {
		t.Errorf("pool after the dedicated call: %+v, want its one connection still in use and no other counted", s)
	}
}
