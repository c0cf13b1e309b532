package libvirt

import (
	"regexp"
	"slices"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// The backup and checkpoint documents name the one disk to copy and list the domain's
// other disks as excluded (libvirt would otherwise add every disk it can).
func TestBackupAndCheckpointXML(t *testing.T) {
	dom := &libvirtxml.Domain{Devices: &libvirtxml.DomainDeviceList{Disks: []libvirtxml.DomainDisk{
		{Device: "disk", Target: &libvirtxml.DomainDiskTarget{Dev: "vda"}},
		{Device: "cdrom", Target: &libvirtxml.DomainDiskTarget{Dev: "sda"}},
		{Target: &libvirtxml.DomainDiskTarget{Dev: "vdb"}},
	}}}
	disks := backupDisks(dom)
	if !slices.Equal(disks, []string{"vda", "vdb"}) {
		t.Fatalf("backupDisks = %v, want the two disks without the cdrom", disks)
	}
	for _, c := range []struct{ since, want string }{
		{"", `<domainbackup mode="push"><disks><disk name="vda" backup="no"></disk><disk type="file" name="vdb" backup="yes"><driver type="qcow2"></driver><target file="/p/t.qcow2"></target></disk></disks></domainbackup>`},
		{"cp-0", `<domainbackup mode="push"><disks><disk name="vda" backup="no"></disk><disk type="file" name="vdb" backup="yes"><driver type="qcow2"></driver><target file="/p/t.qcow2"></target></disk></disks><incremental>cp-0</incremental></domainbackup>`},
	} {
		got, err := backupXML("vdb", "/p/t.qcow2", c.since, disks)
		if err != nil {
			t.Fatal(err)
		}
		if got = compact(got); got != c.want {
			t.Errorf("backupXML(since %q) =\n%s\nwant\n%s", c.since, got, c.want)
		}
	}
	got, err := checkpointXML("cp-1", "vdb", disks)
	if err != nil {
		t.Fatal(err)
	}
	want := `<domaincheckpoint><name>cp-1</name><description>made by terraform-provider-libvirt (libvirt_volume_export, incremental)</description><disks><disk name="vda" checkpoint="no"></disk><disk name="vdb" checkpoint="bitmap"></disk></disks></domaincheckpoint>`
	if got = compact(got); got != want {
		t.Errorf("checkpointXML =\n%s\nwant\n%s", got, want)
	}
}

func TestCmpLink(t *testing.T) {
	names := []string{"tfexport-ab-10", "tfexport-ab-2", "tfexport-ab-0", "tfexport-ab-1"}
	slices.SortFunc(names, cmpLink)
	if !slices.Equal(names, []string{"tfexport-ab-0", "tfexport-ab-1", "tfexport-ab-2", "tfexport-ab-10"}) {
		t.Fatalf("sorted = %v", names)
	}
}

// compact drops the indentation Marshal adds.
func compact(s string) string { return regexp.MustCompile(`>\s+<`).ReplaceAllString(s, "><") }
