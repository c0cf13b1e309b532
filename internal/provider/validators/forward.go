// Package validators forwards to tfkit/validators the validators that the libvirt_domain
// files (still in internal/provider, being rewritten) import by this path. It goes when
// the domain moves into its own package: import tfkit/validators there.
package validators

import "github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"

// String is tfkit/validators.String.
type String = validators.String

// Duration is tfkit/validators.Duration.
func Duration() String { return validators.Duration() }

// IP is tfkit/validators.IP.
func IP() String { return validators.IP() }
