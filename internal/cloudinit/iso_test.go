package cloudinit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

func TestBuildISO_readBack(t *testing.T) {
	big := strings.Repeat("#cloud-config line\n", 600) // > 2 sectors
	tests := []struct {
		name string
		seed Seed
		want map[string]string
	}{
		{
			name: "user and meta only",
			seed: Seed{UserData: "#cloud-config\nruncmd: [true]\n", MetaData: "instance-id: i-1\nlocal-hostname: web-1\n"},
			want: map[string]string{"user-data": "#cloud-config\nruncmd: [true]\n", "meta-data": "instance-id: i-1\nlocal-hostname: web-1\n"},
		},
		{
			name: "all four",
			seed: Seed{UserData: "#!/bin/sh\necho hi\n", MetaData: "instance-id: x\n", NetworkConfig: ptr("version: 2\nethernets: {}\n"), VendorData: ptr("#cloud-config\n{}\n")},
			want: map[string]string{"user-data": "#!/bin/sh\necho hi\n", "meta-data": "instance-id: x\n", "network-config": "version: 2\nethernets: {}\n", "vendor-data": "#cloud-config\n{}\n"},
		},
		{
			name: "empty user-data still written",
			seed: Seed{MetaData: "instance-id: x\n"},
			want: map[string]string{"user-data": "", "meta-data": "instance-id: x\n"},
		},
		{
			name: "large user-data spans sectors",
			seed: Seed{UserData: big, MetaData: "instance-id: x\n", NetworkConfig: ptr("")},
			want: map[string]string{"user-data": big, "meta-data": "instance-id: x\n", "network-config": ""},
		},
		{
			name: "exact sector multiple",
			seed: Seed{UserData: strings.Repeat("a", 4096), MetaData: "instance-id: x\n"},
			want: map[string]string{"user-data": strings.Repeat("a", 4096), "meta-data": "instance-id: x\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, sum, err := BuildISO(tt.seed)
			if err != nil {
				t.Fatal(err)
			}
			if len(img)%2048 != 0 {
				t.Errorf("image length %d is not a whole number of sectors", len(img))
			}
			h := sha256.Sum256(img)
			if sum != hex.EncodeToString(h[:]) {
				t.Errorf("sha256 %s does not match the bytes", sum)
			}
			label, files, err := ReadISO(img)
			if err != nil {
				t.Fatalf("read back: %v", err)
			}
			if label != "cidata" {
				t.Errorf("label = %q, want cidata", label)
			}
			if len(files) != len(tt.want) {
				t.Errorf("files = %v, want %d files", keys(files), len(tt.want))
			}
			for name, want := range tt.want {
				got, ok := files[name]
				if !ok {
					t.Errorf("file %s missing (have %v)", name, keys(files))
					continue
				}
				if string(got) != want {
					t.Errorf("%s = %q, want %q", name, trunc(got), trunc([]byte(want)))
				}
			}
			// Reproducible: same seed, same bytes.
			img2, sum2, _ := BuildISO(tt.seed)
			if sum2 != sum || !bytes.Equal(img, img2) {
				t.Error("building the same seed twice gave different images")
			}
		})
	}
}

// TestBuildISO_isoinfo checks the image with an independent reader (genisoimage's
// isoinfo), when it is installed: the label, the path table and the file names.
func TestBuildISO_isoinfo(t *testing.T) {
	isoinfo, err := exec.LookPath("isoinfo")
	if err != nil {
		t.Skip("isoinfo (genisoimage) not installed")
	}
	img, _, err := BuildISO(Seed{UserData: "u", MetaData: "instance-id: x\n", NetworkConfig: ptr("version: 2\n")})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "seed.iso")
	if err := os.WriteFile(p, img, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(isoinfo, "-d", "-i", p).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Volume id: cidata") {
		t.Fatalf("isoinfo -d: %v\n%s", err, out)
	}
	out, err = exec.Command(isoinfo, "-l", "-i", p).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo -l: %v\n%s", err, out)
	}
	for _, n := range []string{"USER-DATA;1", "META-DATA;1", "NETWORK-CONFIG;1"} {
		if !strings.Contains(strings.ToUpper(string(out)), n) {
			t.Errorf("isoinfo -l does not list %s:\n%s", n, out)
		}
	}
	if d := os.Getenv("CLOUDINIT_KEEP_ISO"); d != "" {
		_ = os.WriteFile(d, img, 0o600)
	}
	out, err = exec.Command(isoinfo, "-i", p, "-x", "/meta-data;1").CombinedOutput()
	if err != nil || string(out) != "instance-id: x\n" {
		t.Errorf("isoinfo -x meta-data: %v %q", err, out)
	}
}

func TestWriteISO_badNames(t *testing.T) {
	if _, err := WriteISO("cidata", map[string][]byte{"": nil}); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := WriteISO("cidata", map[string][]byte{strings.Repeat("n", 31): nil}); err == nil {
		t.Error("31-character name accepted")
	}
	if _, err := WriteISO(strings.Repeat("l", 33), nil); err == nil {
		t.Error("33-character label accepted")
	}
}

func TestMetaData(t *testing.T) {
	tests := []struct {
		id, host string
		want     string
		wantErr  string
	}{
		{id: "i-123", host: "web-1", want: "instance-id: i-123\nlocal-hostname: web-1\n"},
		{id: "2b6f0cc9-4a3f-4b43-9d3c-1a2b3c4d5e6f", host: "node.example.com", want: "instance-id: 2b6f0cc9-4a3f-4b43-9d3c-1a2b3c4d5e6f\nlocal-hostname: node.example.com\n"},
		{id: "only-id", want: "instance-id: only-id\n"},
		{id: "yes", host: "007", want: "instance-id: \"yes\"\nlocal-hostname: \"007\"\n"},
		{id: "a: b", host: "h", want: "instance-id: 'a: b'\nlocal-hostname: h\n"},
		{id: "", host: "h", wantErr: "instance_id is empty"},
		{id: "x\ny", host: "h", wantErr: "control characters"},
		{id: "x", host: "h\x00", wantErr: "control characters"},
		{id: "\xff", host: "h", wantErr: "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%q", tt.id, tt.host), func(t *testing.T) {
			got, err := MetaData(tt.id, tt.host)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("MetaData = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzMetaData(f *testing.F) {
	f.Add("i-123", "web-1")
	f.Add("yes", "007")
	f.Add("a: b", "#h")
	f.Add("- x", "[y]")
	f.Fuzz(func(t *testing.T, id, host string) {
		md, err := MetaData(id, host)
		if err != nil {
			return
		}
		gotID, gotHost, err := ParseMetaData(md)
		if err != nil {
			t.Fatalf("meta-data %q for (%q, %q) does not parse: %v", md, id, host, err)
		}
		if gotID != id || gotHost != host {
			t.Fatalf("meta-data %q reads back as (%q, %q), want (%q, %q)", md, gotID, gotHost, id, host)
		}
		if !strings.HasPrefix(md, "instance-id: ") {
			t.Fatalf("meta-data %q does not start with instance-id", md)
		}
	})
}

func TestValidateYAML(t *testing.T) {
	for _, ok := range []string{"", "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n", "network:\n  version: 2\n"} {
		if err := ValidateYAML(ok); err != nil {
			t.Errorf("ValidateYAML(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"version: 2\n  ethernets: [", "- a\n- b\n", "just text", "a: b\n\tc: d\n"} {
		if err := ValidateYAML(bad); err == nil {
			t.Errorf("ValidateYAML(%q) accepted", bad)
		}
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func trunc(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
