package libvirt

import (
	"strings"
	"testing"
)

func TestSecretXMLRoundTrip(t *testing.T) {
	for _, s := range []SecretSpec{
		{UUID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f", UsageType: SecretCeph, UsageName: "client.libvirt secret", Description: "rbd", Private: true},
		{UUID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e30", UsageType: SecretVolume, UsageName: "/var/lib/libvirt/images/enc.qcow2"},
		{UUID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e31", UsageType: SecretISCSI, UsageName: "iqn.2026-12.example:storage", Ephemeral: true},
		{UUID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e32", UsageType: SecretTLS, UsageName: "tls-key"},
		{UUID: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e33", UsageType: SecretVTPM, UsageName: "vtpm-web-1"},
	} {
		text, err := s.secretXML()
		if err != nil {
			t.Fatal(err)
		}
		got, err := secretFromXML(text)
		if err != nil || *got != s {
			t.Errorf("%s: read back %+v (%v) from\n%s", s.UsageType, got, err, text)
		}
	}
	text, _ := SecretSpec{UsageType: SecretISCSI, UsageName: "iqn.x"}.secretXML()
	if !strings.Contains(text, "<target>iqn.x</target>") || strings.Contains(text, "<name>") {
		t.Errorf("an iSCSI secret names its target:\n%s", text)
	}
}
