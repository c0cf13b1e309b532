// Package capi holds the Cluster API naming and derivation rules of libvirt_cluster_machine
// as pure functions: the provider's functions cluster_machine_name and mac_from_name
// return exactly what the composite resource uses, because both call this package.
package capi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxNameLength is the longest DNS label.
const MaxNameLength = 63

// hashLength is how many hex characters of the hash end every domain name.
const hashLength = 6

// MACPrefix is QEMU's locally administered OUI; every derived MAC starts with it.
const MACPrefix = "52:54:00"

// DomainName is <namespace>-<name>-<hash>: hash is the first 6 hex characters of
// sha256("<namespace>/<name>"), computed from the inputs as given, so two machines that
// differ only in characters the label cannot hold still get different names. The result is
// always a valid DNS label: lower case, [a-z0-9-], at most 63 characters, the prefix
// truncated (never the hash) to fit.
func DomainName(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	hash := hex.EncodeToString(sum[:])[:hashLength]
	prefix := sanitize(namespace + "-" + name)
	if limit := MaxNameLength - hashLength - 1; len(prefix) > limit {
		prefix = strings.TrimRight(prefix[:limit], "-")
	}
	if prefix == "" {
		return "m-" + hash
	}
	return prefix + "-" + hash
}

// sanitize maps a string onto DNS-label characters: letters lowered, anything else that is
// not [a-z0-9] becomes '-', runs of '-' collapse, and no '-' at either end.
func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// IsDNSLabel reports whether s is a valid DNS label (RFC 1123).
func IsDNSLabel(s string) bool {
	if s == "" || len(s) > MaxNameLength || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-') {
			return false
		}
	}
	return true
}

// MAC derives the machine's MAC address from its domain name: 52:54:00 followed by the
// first three bytes of sha256(domain name). 52 has the locally-administered bit set and
// the multicast bit clear, so the address is always a valid unicast, local MAC.
func MAC(domainName string) string {
	sum := sha256.Sum256([]byte(domainName))
	return fmt.Sprintf("%s:%02x:%02x:%02x", MACPrefix, sum[0], sum[1], sum[2])
}

// ProviderID is the Cluster API provider id of a machine with this uid.
func ProviderID(uid string) string { return "libvirt://" + uid }

// RootVolumeName and SeedVolumeName are the names of the machine's volumes.
func RootVolumeName(domainName string) string { return domainName + ".qcow2" }
func SeedVolumeName(domainName string) string { return "cloudinit-" + domainName + ".iso" }
