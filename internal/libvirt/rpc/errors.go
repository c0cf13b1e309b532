package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// ErrNotFound is what every lookup of a missing object returns, whatever its kind (domain,
// volume, pool, network, snapshot, ...). Resources decide "gone" with errors.Is(err,
// ErrNotFound) and nothing else: this file is the one place that maps libvirt's codes
// (package libvirt re-exports it as libvirt.ErrNotFound).
var ErrNotFound = errors.New("not found")

// ErrTransport marks errors of the connection itself (dial, auth, broken socket,
// deadline): the object may well exist, so a resource must keep its state.
var ErrTransport = errors.New("libvirt connection failed")

// notFoundCodes are libvirt's "no such <object>" error numbers.
var notFoundCodes = map[golibvirt.ErrorNumber]bool{
	golibvirt.ErrNoDomain:           true,
	golibvirt.ErrNoNetwork:          true,
	golibvirt.ErrNoStoragePool:      true,
	golibvirt.ErrNoStorageVol:       true,
	golibvirt.ErrNoDomainSnapshot:   true,
	golibvirt.ErrNoNodeDevice:       true,
	golibvirt.ErrNoInterface:        true,
	golibvirt.ErrNoNwfilter:         true,
	golibvirt.ErrNoSecret:           true,
	golibvirt.ErrNoDomainCheckpoint: true,
	golibvirt.ErrNoNetworkPort:      true,
	golibvirt.ErrNoNwfilterBinding:  true,
}

// Error is an error answered by the libvirt daemon itself (the call reached it).
type Error struct {
	Op      string // what we asked, e.g. "look up domain web-1"
	Code    golibvirt.ErrorNumber
	Message string // libvirt's own message
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Op, e.Message) }

// Is makes errors.Is(err, ErrNotFound) true for libvirt's "no such object" codes.
func (e *Error) Is(target error) bool { return target == ErrNotFound && notFoundCodes[e.Code] }

// TransportError is a failure to reach or talk to the daemon.
type TransportError struct {
	Op  string
	URI string
	Err error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("%s: connection to %s failed: %v", e.Op, e.URI, e.Err)
}
func (e *TransportError) Unwrap() error        { return e.Err }
func (e *TransportError) Is(target error) bool { return target == ErrTransport }

// Classify sorts what a call on a connection returned into three kinds:
//
//   - libvirt's own answer (the call reached the daemon, which refused it): *Error, with
//     libvirt's code; errors.Is(err, ErrNotFound) for its "no such object" codes.
//   - a failure of the connection itself (the call may or may not have reached the
//     daemon): *TransportError. Only what really says so counts (isConnFailure): I/O
//     errors of the socket, go-libvirt's "interrupted" when the socket closed under a call,
//     a context that ended (conn.call closes the socket then), and our own verdicts that a
//     connection is unusable (connUnusable).
//   - everything else passes through unchanged: our own errors inside a call (XML that
//     does not parse, a Verdict such as libvirt.PoolInactiveError, a refusal worked out
//     from what libvirt said).
//     They would be the same on any connection, so they are neither retried on fresh
//     dials nor settled for minutes, and never read as "not found".
//
// The default used to be the other way round (anything without a libvirt code was the
// transport), which made a local parse error cost three dials, and made readSettled wait
// two minutes and then delete the volume it had just made.
//
// Every call through Client is classified already; Classify is for the errors of calls made
// on a connection inside fn, when their kind decides what fn does next.
func Classify(op, uri string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	var alreadyT *TransportError
	if errors.As(err, &already) || errors.As(err, &alreadyT) {
		return err
	}
	var lerr golibvirt.Error
	if errors.As(err, &lerr) {
		return &Error{Op: op, Code: golibvirt.ErrorNumber(lerr.Code), Message: lerr.Message}
	}
	if isConnFailure(err) {
		return &TransportError{Op: op, URI: uri, Err: err}
	}
	return err
}

// classifyOn is Classify for a call made on l: an error that Classify would pass on as
// local is still the transport when l lost its connection during the call. That catches
// what a broken socket returns in forms isConnFailure does not list (a TLS or SSH
// session's own "closed" errors, say): go-libvirt marks the connection dead as soon as
// its reader fails.
func classifyOn(l *golibvirt.Libvirt, op, uri string, err error) error {
	err = Classify(op, uri, err)
	if err != nil && !IsTransport(err) && !isAnswer(err) && !l.IsConnected() {
		return &TransportError{Op: op, URI: uri, Err: err}
	}
	return err
}

// Verdict is an error of the object layer drawn from what the daemon answered (a pool
// that is stopped, say, worked out from a failed lookup): it says nothing about the
// connection, so classifyOn never takes it for the transport, even when the connection
// died after the answer came.
type Verdict interface {
	error
	// FromAnswer marks the type; it does nothing.
	FromAnswer()
}

// isAnswer reports whether err is libvirt's answer, or a verdict of ours drawn from one.
func isAnswer(err error) bool {
	var e *Error
	var v Verdict
	return errors.As(err, &e) || errors.As(err, &v)
}

// Unusable is our own verdict that a connection can no longer be used, though no I/O
// error said so (a stream call that wedged or ended early): a transport error, so the pool
// drops the connection and a read runs again on a fresh one. Compare with errors.Is
// against the value returned.
func Unusable(msg string) error { return &connUnusable{msg} }

type connUnusable struct{ msg string }

func (e *connUnusable) Error() string        { return e.msg }
func (e *connUnusable) Is(target error) bool { return target == ErrTransport }

// connErrnos are the system errors of a socket that is gone or was never there.
// EINVAL is among them because go-libvirt's socket returns exactly that for a call on a
// connection it already saw close (socket.SendPacket); nothing else we call returns a
// bare EINVAL.
var connErrnos = map[syscall.Errno]bool{
	syscall.ECONNRESET: true, syscall.ECONNREFUSED: true, syscall.ECONNABORTED: true,
	syscall.EPIPE: true, syscall.ETIMEDOUT: true, syscall.ENOTCONN: true, syscall.ESHUTDOWN: true,
	syscall.EHOSTUNREACH: true, syscall.ENETUNREACH: true, syscall.ENETDOWN: true, syscall.EHOSTDOWN: true,
	syscall.EBADF: true, syscall.EINVAL: true,
}

// isConnFailure reports whether err says the connection failed (see Classify).
func isConnFailure(err error) bool {
	var op *net.OpError
	var errno syscall.Errno
	var ne net.Error
	switch {
	case errors.Is(err, ErrTransport), // connUnusable
		errors.Is(err, golibvirt.ErrInterrupted), // the socket closed while the call waited
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.ErrClosedPipe),
		errors.Is(err, net.ErrClosed), errors.Is(err, os.ErrDeadlineExceeded):
		return true
	case errors.As(err, &op): // a dial, read or write on the socket
		return true
	case errors.As(err, &errno): // before net.Error, which every Errno satisfies
		return connErrnos[errno]
	case errors.As(err, &ne): // timeouts of TLS or SSH sessions, DNS failures of a dial
		return true
	}
	return false
}

// IsTransport reports whether err is a connection failure (not an answer from libvirt).
func IsTransport(err error) bool {
	return errors.Is(err, ErrTransport) || errors.Is(err, context.DeadlineExceeded)
}

// HasCode reports whether err is libvirt's answer with the given error number.
func HasCode(err error, code golibvirt.ErrorNumber) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
