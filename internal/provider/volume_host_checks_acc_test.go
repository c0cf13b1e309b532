package provider_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// volumeHolds is a step check that asks libvirt for volume name of the test pool: it
// must have capacity bytes (unless capacity is 0) and content whose sha256 is sum,
// downloaded whole.
func volumeHolds(t *testing.T, name string, capacity uint64, sum string) resource.TestCheckFunc {
	return acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
		if capacity != 0 && v.Capacity != capacity {
			return fmt.Errorf("volume %s has %d bytes on the host, want %d", name, v.Capacity, capacity)
		}
		h := sha256.New()
		if err := acctest.Client(t).DownloadVolume(acctest.Ctx(t), libvirt.VolumeRef{Key: v.Key}, h); err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != sum {
			return fmt.Errorf("volume %s holds sha256 %s, want %s", name, got, sum)
		}
		return nil
	})
}

// noVolumesNamed is a step check: libvirt lists no volume of the test pool whose name
// starts with prefix (a half-made volume, or one a failed create left under another name).
func noVolumesNamed(t *testing.T, prefix string) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		left, err := acctest.VolumeNames(t, acctest.Pool(), func(n string) bool { return strings.HasPrefix(n, prefix) })
		if err != nil {
			return err
		}
		if len(left) != 0 {
			return fmt.Errorf("volumes left in pool %s: %v", acctest.Pool(), left)
		}
		return nil
	})
}
