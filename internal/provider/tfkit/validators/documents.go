package validators

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// YAML checks that a value parses as a YAML mapping.
func YAML() String {
	return NewIn("must be a YAML mapping", "Invalid YAML", func(at path.Path, s string) string {
		if err := cloudinit.ValidateYAML(s); err != nil {
			return fmt.Sprintf("%s does not parse as YAML: %v. Fix the document (e.g. check its indentation) or write it with yamlencode().", at, err)
		}
		return ""
	})
}

// CloudConfig checks that a user-data starting with #cloud-config parses as a YAML
// mapping (cloud-init ignores the whole file otherwise); scripts and other formats pass.
// The value is sensitive: the message never quotes it.
func CloudConfig() String {
	return NewIn("a #cloud-config document must be a YAML mapping", "Invalid YAML", func(at path.Path, s string) string {
		if !strings.HasPrefix(s, "#cloud-config") {
			return ""
		}
		if err := cloudinit.ValidateYAML(s); err != nil {
			return fmt.Sprintf("%s starts with #cloud-config but does not parse as YAML: %v. cloud-init would ignore the whole file: fix "+
				"the document (e.g. check its indentation) or write it as \"#cloud-config\\n${yamlencode({...})}\".", at, err)
		}
		return ""
	})
}

// JSON checks that an Ignition config parses as JSON.
func JSON() String {
	return NewIn("must be a JSON document", "Invalid JSON", func(at path.Path, s string) string {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return fmt.Sprintf("%s does not parse as JSON: %v. An Ignition config is JSON: write it with jsonencode() or render it with Butane.", at, err)
		}
		return ""
	})
}

// Checksum checks "sha256:<hex>".
func Checksum() String {
	return New("must be sha256:<64 hex digits>", "Invalid source_checksum", func(_ path.Path, s string) string {
		if _, err := libvirt.ParseChecksum(s); err != nil {
			return err.Error() + ", e.g. sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855."
		}
		return ""
	})
}

// Duration accepts a Go duration that is not negative ("30s", "5m", "1h30m").
func Duration() String {
	return New("must be a Go duration such as 30s, 5m or 1h30m", "Invalid duration", func(_ path.Path, s string) string {
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return ""
		}
		return "\"" + s + "\" is not a duration: use a Go duration such as 30s, 5m or 1h30m."
	})
}
