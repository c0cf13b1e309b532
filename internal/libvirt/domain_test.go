package libvirt

import "testing"

// Only a define that names its UUID may be sent again after a lost answer.
func TestDefinesUUID(t *testing.T) {
	for xml, want := range map[string]bool{
		`<domain type='qemu'><name>a</name><uuid>6f1e3a52-3b9c-4f43-9a57-0c8b1f2d7e11</uuid></domain>`: true,
		`<domain type='qemu'><name>a</name></domain>`:                                                  false,
		`<domain type='qemu'><name>a</name><uuid></uuid></domain>`:                                     false,
		`not xml`: false,
	} {
		if got := definesUUID(xml); got != want {
			t.Errorf("definesUUID(%s) = %v, want %v", xml, got, want)
		}
	}
}
