package libvirt

import (
	"errors"
	"testing"
)

// The build failure CI saw (libvirt 9.0, QEMU 7.2) is tried again; others are not.
func TestTransientBuildFailure(t *testing.T) {
	seen := errors.New("create volume default/x-luks.raw: internal error: Child process (/usr/bin/qemu-img create -f luks " +
		"--object secret,id=x_encrypt0,file=/run/libvirt/storage/default.x.secret.SH9ZZ3 -o key-secret=x_encrypt0 " +
		"/var/lib/kvmforge-testhost/pool/x-luks.raw 16384K) unexpected exit status 1: qemu-img: " +
		"/var/lib/kvmforge-testhost/pool/x-luks.raw: Unable to get accurate CPU usage")
	if !transientBuildFailure(seen) {
		t.Error("the LUKS benchmark's failure is not tried again")
	}
	if transientBuildFailure(errors.New("internal error: Child process (/usr/bin/qemu-img create ...) unexpected exit status 1: No space left on device")) {
		t.Error("a full disk is tried again")
	}
}
