package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestLogXMLRedacts: qemu_env and qemu_args values, device_xml devices and the record's
// copy of the fragments are masked in LogXML, their names kept; the definition itself is
// not changed; a domain without them logs as libvirtxml writes it.
func TestLogXMLRedacts(t *testing.T) {
	size := uint(4)
	d := &libvirtxml.Domain{Type: "kvm", Name: "web",
		Devices: &libvirtxml.DomainDeviceList{
			Graphics: []libvirtxml.DomainGraphic{{VNC: &libvirtxml.DomainGraphicVNC{Passwd: "vncsecret"}}},
			Shmems:   []libvirtxml.DomainShmem{{Name: "shm-s3cr3t", Size: &libvirtxml.DomainShmemSize{Value: size, Unit: "M"}}},
		},
		QEMUCommandline: &libvirtxml.DomainQEMUCommandline{
			Args: []libvirtxml.DomainQEMUCommandlineArg{{Value: "-fw_cfg"}, {Value: "name=opt/x,string=argsecret"}},
			Envs: []libvirtxml.DomainQEMUCommandlineEnv{{Name: "HTTP_PROXY", Value: "http://u:envsecret@proxy"}},
		},
	}
	if err := SetMetadata(d, MetadataNS, "domain", &record{DeviceXML: []string{`<shmem name="shm-s3cr3t"/>`}}); err != nil {
		t.Fatal(err)
	}
	before, _ := d.Marshal()
	got := LogXML(d)
	for _, s := range []string{"vncsecret", "argsecret", "envsecret", "shm-s3cr3t"} {
		if strings.Contains(got, s) {
			t.Errorf("LogXML shows %q:\n%s", s, got)
		}
	}
	for _, s := range []string{"-fw_cfg", "HTTP_PROXY", "<shmem", `name="***"`, "&lt;shmem&gt; ***", "web"} {
		if !strings.Contains(got, s) {
			t.Errorf("LogXML lost %q:\n%s", s, got)
		}
	}
	if after, _ := d.Marshal(); after != before {
		t.Errorf("LogXML changed the definition:\n%s\n%s", before, after)
	}
	plain := &libvirtxml.Domain{Type: "kvm", Name: "db"}
	if want, _ := plain.Marshal(); LogXML(plain) != want {
		t.Errorf("LogXML of a plain domain = %s", LogXML(plain))
	}
}
