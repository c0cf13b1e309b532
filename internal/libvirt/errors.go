package libvirt

import (
	"context"
	"errors"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// ErrNotFound is what every lookup of a missing object returns, whatever its kind (domain,
// volume, pool, network, snapshot, ...). Resources decide "gone" with errors.Is(err,
// ErrNotFound) and nothing else: this file is the one place that maps libvirt's codes.
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

// classify turns what go-libvirt returned into *Error or *TransportError.
// Only an error that carries libvirt's own error code came from the daemon; anything
// else (EOF, closed socket, interrupted call, dial or auth failure, deadline) is the
// transport and must never be read as "not found".
func classify(op, uri string, err error) error {
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
	return &TransportError{Op: op, URI: uri, Err: err}
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
