package libvirt

import (
	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt/rpc"
)

// The error rules live in package rpc (rpc/errors.go): a missing object is ErrNotFound, a
// failure of the connection is ErrTransport (never "not found"), libvirt's own refusals are
// *Error with its code. They are re-exported here for the provider and the workflows.
var (
	// ErrNotFound is what every lookup of a missing object returns, whatever its kind.
	ErrNotFound = rpc.ErrNotFound
	// ErrTransport marks errors of the connection itself: the object may well exist.
	ErrTransport = rpc.ErrTransport
)

type (
	// Error is an error answered by the libvirt daemon itself.
	Error = rpc.Error
	// TransportError is a failure to reach or talk to the daemon.
	TransportError = rpc.TransportError
	// HostKeyError is an SSH host key that known_hosts does not vouch for.
	HostKeyError = rpc.HostKeyError
	// BreakerOpenError is returned without dialling while the URI's breaker is open.
	BreakerOpenError = rpc.BreakerOpenError
)

// IsTransport reports whether err is a connection failure (not an answer from libvirt).
func IsTransport(err error) bool { return rpc.IsTransport(err) }

// HasCode reports whether err is libvirt's answer with the given error number.
func HasCode(err error, code golibvirt.ErrorNumber) bool { return rpc.HasCode(err, code) }

// classify sorts the error of a call made on a connection inside Read or Write (see
// rpc.Classify), when its kind decides what the function does next.
func classify(op, uri string, err error) error { return rpc.Classify(op, uri, err) }
