package validators

import "regexp"

// The patterns the resources check names and identifiers with.
var (
	// MACRegexp is a MAC address, colon separated, either case.
	MACRegexp = regexp.MustCompile(`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`)
	// DomainNameRegexp is a domain name libvirt accepts: no slash, whitespace or control
	// character, at most 200 characters, not starting with punctuation.
	DomainNameRegexp = regexp.MustCompile(`^[A-Za-z0-9_][^/\s\x00-\x1f]{0,199}$`)
	// UUIDRegexp is a UUID in its 8-4-4-4-12 form, either case.
	UUIDRegexp = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// LowerUUIDRegexp is UUIDRegexp in lower case only (how libvirt prints one).
	LowerUUIDRegexp = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	// ObjectNameRegexp is the name of a network or a storage pool.
	ObjectNameRegexp = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	// AbsPathRegexp is an absolute path.
	AbsPathRegexp = regexp.MustCompile(`^/`)
)
