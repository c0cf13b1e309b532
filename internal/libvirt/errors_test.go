package libvirt

import (
	"context"
	"errors"
	"io"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
)

func TestClassify(t *testing.T) {
	notFound := []golibvirt.ErrorNumber{golibvirt.ErrNoDomain, golibvirt.ErrNoStorageVol, golibvirt.ErrNoStoragePool,
		golibvirt.ErrNoNetwork, golibvirt.ErrNoDomainSnapshot}
	for _, code := range notFound {
		err := classify("look up", "qemu:///system", golibvirt.Error{Code: uint32(code), Message: "no such thing"})
		if !errors.Is(err, ErrNotFound) || IsTransport(err) {
			t.Errorf("code %d: want ErrNotFound only, got %v", code, err)
		}
	}
	// An answer from libvirt that is not "no such object" is neither.
	err := classify("define", "qemu:///system", golibvirt.Error{Code: uint32(golibvirt.ErrOperationInvalid), Message: "invalid"})
	if errors.Is(err, ErrNotFound) || IsTransport(err) || !HasCode(err, golibvirt.ErrOperationInvalid) {
		t.Errorf("operation invalid: %v", err)
	}
	// Anything that did not come back from the daemon is the transport, never not-found.
	for _, cause := range []error{io.EOF, golibvirt.ErrInterrupted, context.DeadlineExceeded, errors.New("broken pipe")} {
		err := classify("look up", "qemu:///system", cause)
		if errors.Is(err, ErrNotFound) || !IsTransport(err) {
			t.Errorf("%v: want transport error, got %v", cause, err)
		}
	}
	if classify("x", "u", nil) != nil {
		t.Error("nil must stay nil")
	}
}
