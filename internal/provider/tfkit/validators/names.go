package validators

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// ObjectName checks a libvirt object name (what: "volume name", "pool name"): not empty,
// no "/" (names become file names), at most 255 characters, no control characters.
func ObjectName(what string) String {
	return New("must be a non-empty "+what+" without '/'", "Invalid "+what, func(at path.Path, s string) string {
		switch {
		case s == "":
			return fmt.Sprintf("%s must not be empty.", at)
		case strings.Contains(s, "/"):
			return fmt.Sprintf("%s %q contains '/': libvirt names cannot, since they become file names. Use e.g. %q.", at, s, strings.ReplaceAll(s, "/", "-"))
		case len(s) > 255:
			return fmt.Sprintf("%s is %d characters long; at most 255.", at, len(s))
		case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return fmt.Sprintf("%s %q contains control characters.", at, s)
		}
		return ""
	})
}

// LowerCase rejects upper case (what: "MAC address", "uid"), so that the value in state
// (as libvirt stores it) always equals the configuration and never shows as a diff.
func LowerCase(what string) String {
	return New("must be written in lower case", "Upper-case "+what, func(_ path.Path, s string) string {
		if s == strings.ToLower(s) {
			return ""
		}
		return fmt.Sprintf("%q: write the %s in lower case (%q); libvirt stores it so.", s, what, strings.ToLower(s))
	})
}

var hostnameRe = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`)

// Hostname checks an RFC 1123 host name.
func Hostname() String {
	return New("must be a host name: labels of letters, digits and '-', separated by dots", "Invalid hostname", func(_ path.Path, s string) string {
		if len(s) <= 253 && hostnameRe.MatchString(s) {
			return ""
		}
		return fmt.Sprintf("hostname %q is not a valid host name: use letters, digits and '-' (not at either end of a label), "+
			"labels of at most 63 characters separated by dots, e.g. \"web-1\".", s)
	})
}

// VolumeRef checks a volume id: any key (paths, LVM UUIDs, rbd's <ceph pool>/<image>),
// or <pool>/<name>; only an empty id and control characters are refused
// (libvirt.ParseVolumeRef). Which it is shows at apply time: the key is tried first.
func VolumeRef() String {
	return New("must be a volume id: the volume's key (libvirt_volume.id) or <pool>/<name>", "Invalid volume id", func(at path.Path, s string) string {
		if _, err := libvirt.ParseVolumeRef(s); err != nil {
			return fmt.Sprintf("%s: %v. Use another volume's id attribute.", at, err)
		}
		return ""
	})
}

// ExportPath checks a file to write at plan time: a file name (not a directory) whose
// directory exists on the machine running Terraform.
func ExportPath() String {
	return New("must name a file in an existing directory on the machine running Terraform", "Invalid export path", checkExportPath)
}

func checkExportPath(_ path.Path, p string) string {
	switch {
	case p == "":
		return "path must not be empty: name the file to write, e.g. \"exports/web-1.qcow2\"."
	case strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator)):
		return fmt.Sprintf("path %q ends with a separator: name a file in that directory, e.g. %q.", p, p+"disk.qcow2")
	case strings.ContainsRune(p, 0):
		return fmt.Sprintf("path %q contains a NUL byte.", p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return fmt.Sprintf("path %q: %v", p, err)
	}
	dir := filepath.Dir(abs)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Sprintf("the directory of path %q (%s) cannot be used on this machine: %v. path is a file on the machine "+
			"running Terraform; create the directory first.", p, dir, err)
	case !st.IsDir():
		return fmt.Sprintf("%s, the directory of path %q, is not a directory.", dir, p)
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return fmt.Sprintf("path %q is a directory: name a file in it, e.g. %q.", p, filepath.Join(p, "disk.qcow2"))
	}
	return ""
}
