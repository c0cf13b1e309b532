package cloudinit

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

type metaData struct {
	InstanceID    string `yaml:"instance-id"`
	LocalHostname string `yaml:"local-hostname,omitempty"`
}

// MetaData renders NoCloud meta-data for an instance id and (optional) hostname:
// "instance-id: X\nlocal-hostname: Y\n", YAML-quoted where a value needs it.
func MetaData(instanceID, hostname string) (string, error) {
	if err := checkValue("instance_id", instanceID); err != nil {
		return "", err
	}
	if instanceID == "" {
		return "", errors.New("instance_id is empty")
	}
	if err := checkValue("hostname", hostname); err != nil {
		return "", err
	}
	out, err := yaml.Marshal(metaData{InstanceID: instanceID, LocalHostname: hostname})
	if err != nil {
		return "", fmt.Errorf("render meta-data: %w", err)
	}
	return string(out), nil
}

func checkValue(attr, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s is not valid UTF-8", attr)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return fmt.Errorf("%s %q contains control characters (newlines, tabs, ...)", attr, v)
	}
	return nil
}

// ParseMetaData reads instance-id and local-hostname back from meta-data.
func ParseMetaData(s string) (instanceID, hostname string, err error) {
	var m metaData
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return "", "", err
	}
	return m.InstanceID, m.LocalHostname, nil
}

// ValidateYAML reports whether s parses as YAML (network-config v1/v2, vendor-data,
// meta-data). An empty document is valid.
func ValidateYAML(s string) error {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("the document is a %T, not a mapping (expected e.g. \"network:\\n  version: 2\\n  ...\" or \"version: 2\\n...\")", v)
	}
	return nil
}
