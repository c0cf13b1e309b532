package libvirt

import (
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestVolumeXML_encryption: an encrypted volume's XML asks for LUKS with the secret as
// its passphrase; a plain one has no <encryption>.
func TestVolumeXML_encryption(t *testing.T) {
	enc := &VolumeEncryption{Format: EncryptionLUKS, Secret: "ac979fbe-fa18-40bd-b095-2d3b746edad6"}
	doc, err := volumeXML(VolumeSpec{Pool: "p", Name: "v", Format: "raw", Encryption: enc}, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `<encryption format="luks"><secret type="passphrase" uuid="ac979fbe-fa18-40bd-b095-2d3b746edad6"></secret></encryption>`
	if !strings.Contains(strings.Join(strings.Fields(doc), ""), strings.Join(strings.Fields(want), "")) {
		t.Errorf("volume XML lacks %s:\n%s", want, doc)
	}
	plain, _ := volumeXML(VolumeSpec{Pool: "p", Name: "v", Format: "qcow2"}, 1<<20, nil)
	if strings.Contains(plain, "encryption") {
		t.Errorf("plain volume XML has encryption:\n%s", plain)
	}
}

// TestVolumeEncryption_fromLibvirt reads the target libvirt 9.0 returns: with the secret
// it was created with, and after a pool refresh that found none (format only).
func TestVolumeEncryption_fromLibvirt(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      *VolumeEncryption
	}{
		{"created", `<volume type='file'><name>v</name><target><path>/p/v</path><format type='raw'/>
			<encryption format='luks'><secret type='passphrase' uuid='ac979fbe-fa18-40bd-b095-2d3b746edad6'/></encryption></target></volume>`,
			&VolumeEncryption{Format: "luks", Secret: "ac979fbe-fa18-40bd-b095-2d3b746edad6"}},
		{"refreshed", `<volume type='file'><name>v</name><target><path>/p/v</path><format type='qcow2'/>
			<encryption format='luks'>
			</encryption><clusterSize unit='B'>65536</clusterSize></target></volume>`, &VolumeEncryption{Format: "luks"}},
		{"plain", `<volume type='file'><name>v</name><target><path>/p/v</path><format type='qcow2'/></target></volume>`, nil},
	} {
		var x libvirtxml.StorageVolume
		if err := x.Unmarshal(tc.doc); err != nil {
			t.Fatal(err)
		}
		if got := volumeEncryption(x.Target); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestRefuseEncrypted: uploads and overlays refuse encryption and say what to do.
func TestRefuseEncrypted(t *testing.T) {
	spec := VolumeSpec{Pool: "p", Name: "v", Encryption: &VolumeEncryption{Format: EncryptionLUKS, Secret: "x"}}
	if err := refuseEncrypted(spec, "an upload"); err == nil || !strings.Contains(err.Error(), "clone_from") {
		t.Errorf("refuseEncrypted: %v", err)
	}
	if err := refuseEncrypted(VolumeSpec{Pool: "p", Name: "v"}, "an upload"); err != nil {
		t.Errorf("a plain volume is refused: %v", err)
	}
}
