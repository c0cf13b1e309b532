package rpc

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// testVerdict stands for the object layer's verdicts drawn from libvirt's answers (such
// as libvirt.PoolInactiveError).
type testVerdict struct{ msg string }

func (e *testVerdict) Error() string { return e.msg }
func (e *testVerdict) FromAnswer()   {}

var errUnusable = Unusable("the stream ended early; dropping the connection")

func TestClassify(t *testing.T) {
	notFound := []golibvirt.ErrorNumber{golibvirt.ErrNoDomain, golibvirt.ErrNoStorageVol, golibvirt.ErrNoStoragePool,
		golibvirt.ErrNoNetwork, golibvirt.ErrNoDomainSnapshot}
	for _, code := range notFound {
		err := Classify("look up", "qemu:///system", golibvirt.Error{Code: uint32(code), Message: "no such thing"})
		if !errors.Is(err, ErrNotFound) || IsTransport(err) {
			t.Errorf("code %d: want ErrNotFound only, got %v", code, err)
		}
	}
	// An answer from libvirt that is not "no such object" is neither.
	err := Classify("define", "qemu:///system", golibvirt.Error{Code: uint32(golibvirt.ErrOperationInvalid), Message: "invalid"})
	if errors.Is(err, ErrNotFound) || IsTransport(err) || !HasCode(err, golibvirt.ErrOperationInvalid) {
		t.Errorf("operation invalid: %v", err)
	}
	if Classify("x", "u", nil) != nil {
		t.Error("nil must stay nil")
	}
}

// Only what says the connection failed is a transport error: I/O errors of the socket,
// go-libvirt's own "interrupted" / EINVAL for a call on a dead socket, contexts that
// ended, and our own verdicts that a connection is unusable (Unusable).
func TestClassifyTransport(t *testing.T) {
	for name, cause := range map[string]error{
		"EOF":                   io.EOF,
		"unexpected EOF":        fmt.Errorf("read header: %w", io.ErrUnexpectedEOF),
		"closed pipe":           io.ErrClosedPipe,
		"interrupted":           golibvirt.ErrInterrupted,
		"deadline":              context.DeadlineExceeded,
		"deadline and cause":    fmt.Errorf("%w (%v)", context.DeadlineExceeded, golibvirt.ErrInterrupted),
		"canceled":              context.Canceled,
		"net.OpError reset":     &net.OpError{Op: "read", Net: "unix", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}},
		"net.OpError refused":   &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		"EPIPE":                 fmt.Errorf("write: %w", syscall.EPIPE),
		"ENOTCONN":              syscall.ENOTCONN,
		"go-libvirt EINVAL":     syscall.EINVAL,
		"net.ErrClosed":         fmt.Errorf("write unix: %w", net.ErrClosed),
		"os deadline":           os.ErrDeadlineExceeded,
		"unusable":              errUnusable,
		"unusable, wrapped":     fmt.Errorf("libvirt did not confirm the upload: %w", errUnusable),
		"already classified":    &TransportError{Op: "x", URI: "u", Err: io.EOF},
		"dns (a net.Error)":     &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true},
		"os.SyscallError ECONN": &os.SyscallError{Syscall: "write", Err: syscall.ECONNABORTED},
	} {
		err := Classify("look up", "qemu:///system", cause)
		if errors.Is(err, ErrNotFound) || !IsTransport(err) {
			t.Errorf("%s (%v): want a transport error, got %T %v", name, cause, err, err)
		}
	}
	// An Unusable verdict stays recognisable through the wrapping (a download resumes on it).
	if err := Classify("download", "u", errUnusable); !errors.Is(err, errUnusable) {
		t.Errorf("the Unusable verdict is lost in %v", err)
	}
}

// Everything else is a local error: it passes through unchanged, neither not-found nor
// the transport, so it is not retried on fresh dials nor settled for minutes.
func TestClassifyLocal(t *testing.T) {
	var xmlErr error = &xml.SyntaxError{Msg: "unexpected EOF", Line: 1}
	_, numErr := strconv.ParseUint("x", 10, 64)
	for name, cause := range map[string]error{
		"XML that does not parse":   fmt.Errorf("parse volume XML of v: %w", xmlErr),
		"our own error":             fmt.Errorf("volume size unit %q not understood", "PiB"),
		"text that mentions a pipe": errors.New("broken pipe"),
		"a verdict":                 &testVerdict{"pool p is not running"},
		"checksum":                  fmt.Errorf("upload: %w", errors.New("checksum mismatch")),
		"unsupported procedure":     golibvirt.ErrUnsupported,
		"strconv":                   numErr,
		"other errno":               syscall.ENOENT,
	} {
		err := Classify("look up", "qemu:///system", cause)
		if err != cause { //nolint:errorlint // unchanged means the very same value
			t.Errorf("%s: want it unchanged, got %T %v", name, err, err)
		}
		if errors.Is(err, ErrNotFound) || IsTransport(err) {
			t.Errorf("%s: a local error must be neither not-found nor transport: %v", name, err)
		}
	}
}

// A local-looking error from a connection that died under the call is the transport:
// the socket's own "closed" errors come in more forms than isConnFailure lists.
func TestClassifyOnDeadConnection(t *testing.T) {
	dead := golibvirt.NewWithDialer(nil) // never connected: IsConnected is false
	cause := errors.New("tls: use of closed connection")
	if err := classifyOn(dead, "look up", "u", cause); !IsTransport(err) {
		t.Errorf("on a dead connection: want transport, got %v", err)
	}
	// libvirt's answers and our verdicts from them stay what they are.
	if err := classifyOn(dead, "look up", "u", golibvirt.Error{Code: uint32(golibvirt.ErrNoStorageVol)}); !errors.Is(err, ErrNotFound) || IsTransport(err) {
		t.Errorf("not-found on a dead connection: %v", err)
	}
	var v *testVerdict
	if err := classifyOn(dead, "look up", "u", &testVerdict{"pool p is not running"}); IsTransport(err) || !errors.As(err, &v) {
		t.Errorf("a verdict on a dead connection: %v", err)
	}
	// On a live connection the same error is ours.
	err := mockClient(t).Read(context.Background(), "look up", func(l *golibvirt.Libvirt) error {
		if err := classifyOn(l, "look up", "u", cause); err != cause { //nolint:errorlint // the very same value
			t.Errorf("on a live connection: want it unchanged, got %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
