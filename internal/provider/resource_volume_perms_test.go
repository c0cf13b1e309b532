package provider_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// TestAccVolume_permissions: permissions set at create reach the file and read back;
// a volume without them reads libvirt's defaults with no drift (the second plan is
// empty); both import. A changed mode replaces the volume (libvirt cannot change it in
// place), and what it no longer configures is libvirt's default again; dropping permissions from the configuration keeps the volume as it is.
func TestAccVolume_permissions(t *testing.T) {
	acctest.RequireAcc(t)
	set, plain := acctest.RandomName("vol"), acctest.RandomName("vol")
	config := func(perms string) string {
		lines := []string{attr("capacity_bytes", 1<<20), attr("format", "raw")}
		if perms != "" {
			lines = append(lines, "permissions = "+perms)
		}
		return acctest.ProviderBlock("") + volumeHCL("set", set, lines...) +
			volumeHCL("plain", plain, attr("capacity_bytes", 1<<20))
	}
	onDisk := func(name, mode string, uid, gid uint32) resource.TestCheckFunc {
		return acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
			if v.Perms == nil || v.Perms.Mode != mode || v.Perms.Owner != fmt.Sprint(uid) || v.Perms.Group != fmt.Sprint(gid) {
				return fmt.Errorf("libvirt reports permissions %+v, want mode %s owner %d group %d", v.Perms, mode, uid, gid)
			}
			st, err := os.Stat(v.Path)
			if err != nil {
				return err
			}
			sys := st.Sys().(*syscall.Stat_t)
			if got := fmt.Sprintf("%04o", st.Mode().Perm()); got != mode || sys.Uid != uid || sys.Gid != gid {
				return fmt.Errorf("%s is mode %s owner %d group %d, want %s %d %d", v.Path, got, sys.Uid, sys.Gid, mode, uid, gid)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(set, plain),
		Steps: []resource.TestStep{
			{
				Config:           config(`{ owner = 4242, group = 4243, mode = "0640" }`),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State("libvirt_volume.set", "permissions.owner", 4242, "permissions.group", 4243,
					"permissions.mode", "0640", "permissions.label", nil),
					acctest.State("libvirt_volume.plain", "permissions.mode", "0600", "permissions.owner", 0)...),
				Check: resource.ComposeAggregateTestCheckFunc(onDisk(set, "0640", 4242, 4243), onDisk(plain, "0600", 0, 0)),
			},
			importStep("libvirt_volume.set", acctest.Pool()+"/"+set, volumeImportIgnore...),
			importStep("libvirt_volume.plain", "", volumeImportIgnore...),
			{
				Config:            config(`{ mode = "0644" }`),
				ConfigPlanChecks:  acctest.Does("libvirt_volume.set", acctest.DestroyBeforeCreate),
				ConfigStateChecks: acctest.State("libvirt_volume.set", "permissions.mode", "0644", "permissions.owner", 0),
				Check:             onDisk(set, "0644", 0, 0), // the new volume: only the mode is configured
			},
			{
				Config:           config(""),
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
				Check:            onDisk(set, "0644", 0, 0),
			},
		},
	})
}
