package libvirt_test

import (
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// SharesDirWith tells the test hosts' shared pool (one bindfs directory both daemons
// mount) from their default pools (the same path, each host's own directory): old copies
// are deleted after a move only where it says "not shared", so a wrong "not shared" would
// delete the very file a domain runs on. Both ways, and no marker left in any pool.
func TestAccSharesDirWith(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	shared := acctest.Env("LIBVIRT_TEST_SHARED_PATH", "")
	if acctest.SharedPool() == "" || shared == "" {
		t.Fatal("the test hosts have no shared pool (LIBVIRT_TEST_SHARED_POOL / _PATH unset): tools/testhost.sh up-b makes one")
	}
	hosts := map[string][2]*libvirt.Client{"main -> b": {h.a, h.b}, "b -> main": {h.b, h.a}}
	for _, c := range []struct {
		dir  string
		want bool
	}{{shared, true}, {acctest.PoolPathB(), false}} {
		for way, pair := range hosts {
			got, err := pair[0].SharesDirWith(acctest.Ctx(t), pair[1], c.dir)
			if err != nil || got != c.want {
				t.Errorf("%s, %s: shared = %v (%v), want %v", way, c.dir, got, err, c.want)
			}
		}
	}
	for _, c := range []*libvirt.Client{h.a, h.b} {
		for _, pool := range []string{acctest.SharedPool(), acctest.Pool()} {
			vols, err := c.PoolVolumes(acctest.Ctx(t), pool)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vols {
				if strings.HasPrefix(v, ".kvmforge-shared-probe-") {
					t.Errorf("marker %s left in pool %s on %s", v, pool, c.URI())
				}
			}
		}
	}
}
