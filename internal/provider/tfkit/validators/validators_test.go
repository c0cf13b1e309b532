package validators

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// validate runs v on value at attr and returns the error's summary and detail ("" when
// it passes); more than one diagnostic fails the test.
func validate(t *testing.T, v validator.String, attr string, value types.String) (summary, detail string) {
	t.Helper()
	var resp validator.StringResponse
	v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root(attr), ConfigValue: value}, &resp)
	switch len(resp.Diagnostics) {
	case 0:
		return "", ""
	case 1:
		d := resp.Diagnostics[0]
		if p, ok := d.(interface{ Path() path.Path }); !ok || !p.Path().Equal(path.Root(attr)) {
			t.Errorf("diagnostic %v not at %s", d, attr)
		}
		return d.Summary(), d.Detail()
	}
	t.Fatalf("more than one diagnostic: %v", resp.Diagnostics)
	return "", ""
}

func TestString_skipsNullAndUnknown(t *testing.T) {
	calls := 0
	v := New("anything", "Never", func(path.Path, string) string { calls++; return "bad" })
	for _, val := range []types.String{types.StringNull(), types.StringUnknown()} {
		if s, _ := validate(t, v, "a", val); s != "" {
			t.Errorf("%v: %s", val, s)
		}
	}
	if calls != 0 {
		t.Errorf("check called %d times for null and unknown values", calls)
	}
	if s, d := validate(t, v, "a", types.StringValue("")); s != "Never" || d != "bad" {
		t.Errorf("known empty value: %q %q", s, d)
	}
	if got := v.Description(context.Background()); got != "anything" || v.MarkdownDescription(context.Background()) != got {
		t.Errorf("descriptions %q", got)
	}
	in := NewIn("doc", "Invalid YAML", func(path.Path, string) string { return "x" })
	if s, _ := validate(t, in, "network_config", types.StringValue("a")); s != "Invalid YAML in network_config" {
		t.Errorf("NewIn summary %q", s)
	}
}

// Each validator: values that pass, and bad ones with the exact message users get.
func TestCatalogue(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	type bad struct{ value, summary, detail string }
	tests := []struct {
		name string
		v    String
		attr string
		good []string
		bad  []bad
	}{
		{"object name", ObjectName("volume name"), "name", []string{"web-1.qcow2", "a b"}, []bad{
			{"", "Invalid volume name", "name must not be empty."},
			{"a/b", "Invalid volume name", `name "a/b" contains '/': libvirt names cannot, since they become file names. Use e.g. "a-b".`},
			{strings.Repeat("x", 256), "Invalid volume name", "name is 256 characters long; at most 255."},
			{"a\tb", "Invalid volume name", `name "a\tb" contains control characters.`},
		}},
		{"lower case", LowerCase("MAC address"), "mac", []string{"52:54:00:ab:cd:ef"}, []bad{
			{"52:54:00:AB:cd:ef", "Upper-case MAC address", `"52:54:00:AB:cd:ef": write the MAC address in lower case ("52:54:00:ab:cd:ef"); libvirt stores it so.`},
		}},
		{"hostname", Hostname(), "hostname", []string{"web-1", "a.example.com"}, []bad{
			{"-web", "Invalid hostname", `hostname "-web" is not a valid host name: use letters, digits and '-' (not at either end of a label), labels of at most 63 characters separated by dots, e.g. "web-1".`},
			{strings.Repeat("a.", 127) + "a", "Invalid hostname", ""},
		}},
		{"volume ref", VolumeRef(), "clone_from", []string{"/var/lib/x.qcow2", "default/base", "rbd/pool/img"}, []bad{
			{"", "Invalid volume id", "clone_from: volume id is empty: expected the volume's key (libvirt_volume.id; for directory pools its path) or <pool>/<name>. Use another volume's id attribute."},
			{"bad\nid", "Invalid volume id", "clone_from: volume id \"bad\\nid\" contains control characters: expected the volume's key (libvirt_volume.id) or <pool>/<name>. Use another volume's id attribute."},
		}},
		{"export path", ExportPath(), "path", []string{file, filepath.Join(dir, "new.qcow2")}, []bad{
			{"", "Invalid export path", `path must not be empty: name the file to write, e.g. "exports/web-1.qcow2".`},
			{dir + "/", "Invalid export path", `path "` + dir + `/" ends with a separator: name a file in that directory, e.g. "` + dir + `/disk.qcow2".`},
			{"a\x00b", "Invalid export path", `path "a\x00b" contains a NUL byte.`},
			{dir, "Invalid export path", `path "` + dir + `" is a directory: name a file in it, e.g. "` + dir + `/disk.qcow2".`},
			{file + "/x", "Invalid export path", file + `, the directory of path "` + file + `/x", is not a directory.`},
			{dir + "/no/x", "Invalid export path", `the directory of path "` + dir + `/no/x" (` + dir + `/no) cannot be used on this machine: stat ` + dir + `/no: no such file or directory. path is a file on the machine running Terraform; create the directory first.`},
		}},
		{"uri", URI(), "uri", []string{"qemu:///system", "qemu+ssh://root@host/system", "test:///default"}, []bad{
			{"::", "Invalid libvirt URI", ""},
		}},
		{"source url", SourceURL(), "source_url", []string{"http://h/a.qcow2", "https://h/a", "file:///tmp/a"}, []bad{
			{"ftp://host/a.qcow2", "Invalid source_url", `source_url "ftp://host/a.qcow2": scheme "ftp" is not supported; use an http://, https:// or file:// URL (or source_file for a local path).`},
			{"http:///a", "Invalid source_url", `source_url "http:///a" has no host.`},
			{"file://", "Invalid source_url", `source_url "file:" has no path; write file:///absolute/path.`},
			{"http://h/%zz", "Invalid source_url", `source_url "http://[a URL that does not parse, not shown]": invalid URL escape "%zz"`},
		}},
		{"ipv4", IPv4(), "ip", []string{"192.168.122.10"}, []bad{
			{"::1", "Invalid IPv4 address", `"::1" must be an IPv4 address, e.g. 192.168.122.10.`},
			{"300.1.1.1", "Invalid IPv4 address", `"300.1.1.1" must be an IPv4 address, e.g. 192.168.122.10.`},
		}},
		{"ip", IP(), "listen", []string{"127.0.0.1", "::1", "0.0.0.0"}, []bad{
			{"localhost", "Invalid IP address", `"localhost" is not an IP address: use e.g. 127.0.0.1, 0.0.0.0 or ::1.`},
		}},
		{"yaml", YAML(), "meta_data", []string{"instance-id: a\n", "a: [1, 2]"}, []bad{
			{"a: [", "Invalid YAML in meta_data", ""},
		}},
		{"cloud-config", CloudConfig(), "user_data", []string{"#!/bin/sh\n: [", "#cloud-config\nusers: []\n"}, []bad{
			{"#cloud-config\na: [", "Invalid YAML in user_data", ""},
		}},
		{"json", JSON(), "content", []string{`{"ignition": {"version": "3.4.0"}}`}, []bad{
			{"{", "Invalid JSON in content", "content does not parse as JSON: unexpected end of JSON input. An Ignition config is JSON: write it with jsonencode() or render it with Butane."},
		}},
		{"checksum", Checksum(), "source_checksum", []string{"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}, []bad{
			{"sha256:abc", "Invalid source_checksum", ""},
		}},
		{"duration", Duration(), "timeout", []string{"30s", "1h30m", "0s"}, []bad{
			{"-1s", "Invalid duration", `"-1s" is not a duration: use a Go duration such as 30s, 5m or 1h30m.`},
			{"soon", "Invalid duration", `"soon" is not a duration: use a Go duration such as 30s, 5m or 1h30m.`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.v.Description(context.Background()) == "" {
				t.Error("no description")
			}
			for _, g := range tt.good {
				if s, d := validate(t, tt.v, tt.attr, types.StringValue(g)); s != "" {
					t.Errorf("%q refused: %s: %s", g, s, d)
				}
			}
			for _, b := range tt.bad {
				s, d := validate(t, tt.v, tt.attr, types.StringValue(b.value))
				if s != b.summary || d == "" || (b.detail != "" && d != b.detail) {
					t.Errorf("%q:\n got %q: %q\nwant %q: %q", b.value, s, d, b.summary, b.detail)
				}
			}
		})
	}
}

// The messages of documents name what is wrong and how to fix it, and never quote a
// sensitive value (user-data, network-config).
func TestDocuments_messages(t *testing.T) {
	secret := "#cloud-config\npassword: hunter2\nbad: ["
	_, d := validate(t, CloudConfig(), "user_data", types.StringValue(secret))
	if strings.Contains(d, "hunter2") || !strings.Contains(d, "user_data starts with #cloud-config but does not parse as YAML") ||
		!strings.Contains(d, `write it as "#cloud-config\n${yamlencode({...})}"`) {
		t.Errorf("cloud-config detail %q", d)
	}
	_, d = validate(t, YAML(), "network_config", types.StringValue("psk: hunter2\nx: ["))
	if strings.Contains(d, "hunter2") || !strings.Contains(d, "network_config does not parse as YAML") || !strings.HasSuffix(d, "or write it with yamlencode().") {
		t.Errorf("yaml detail %q", d)
	}
	_, d = validate(t, Checksum(), "source_checksum", types.StringValue("md5:abc"))
	if !strings.HasSuffix(d, ", e.g. sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.") {
		t.Errorf("checksum detail %q", d)
	}
	_, d = validate(t, SourceURL(), "source_url", types.StringValue("ftp://user:tok3n@host/a"))
	if strings.Contains(d, "tok3n") {
		t.Errorf("source_url detail quotes the password: %q", d)
	}
}
