package libvirt

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt/rpc"
)

// The verdicts of this package keep their kind through classify (the rules themselves
// are tested in package rpc): a stream that ended early or wedged is the transport (the
// pool drops the connection, a download resumes); a stopped pool and a wrong checksum are
// local, neither not-found nor the transport.
func TestClassifyVerdicts(t *testing.T) {
	for name, cause := range map[string]error{
		"short stream":    errShortStream,
		"wedged, wrapped": fmt.Errorf("libvirt did not confirm the upload: %w", errWedged),
	} {
		err := classify("download", "qemu:///system", cause)
		if errors.Is(err, ErrNotFound) || !IsTransport(err) || !errors.Is(err, cause) {
			t.Errorf("%s: want a transport error that is still %v, got %T %v", name, cause, err, err)
		}
	}
	for name, cause := range map[string]error{
		"pool inactive": &PoolInactiveError{Pool: "p", Volume: "/srv/p/v"},
		"checksum":      fmt.Errorf("upload: %w", ErrChecksumMismatch),
	} {
		err := classify("look up", "qemu:///system", cause)
		if err != cause || errors.Is(err, ErrNotFound) || IsTransport(err) { //nolint:errorlint // unchanged means the very same value
			t.Errorf("%s: want it unchanged, got %T %v", name, err, err)
		}
	}
	// A stopped pool is drawn from libvirt's answers: never the transport, even when the
	// connection died after the answer (rpc's classifyOn).
	var v rpc.Verdict
	if !errors.As(error(&PoolInactiveError{Pool: "p"}), &v) {
		t.Error("PoolInactiveError is not an rpc.Verdict")
	}
}
