package acctest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// SwtpmStateDir is where libvirt keeps the TPM emulator state of the domain with this
// UUID on the test host (the tests run on the libvirtd's own machine).
func SwtpmStateDir(uuid string) string {
	return filepath.Join("/var/lib/libvirt/swtpm", strings.ToLower(uuid))
}

// CheckSwtpmState checks that the TPM emulator state of the domain whose UUID *uuid holds
// exists (want true) or is gone from the test host.
func CheckSwtpmState(uuid *string, want bool) resource.TestCheckFunc {
	return HostCheck(func() error {
		if *uuid == "" {
			return errors.New("no domain uuid recorded")
		}
		dir := SwtpmStateDir(*uuid)
		_, err := os.Stat(dir)
		switch {
		case err == nil && !want:
			return fmt.Errorf("TPM state %s is still there", dir)
		case errors.Is(err, fs.ErrNotExist) && want:
			return fmt.Errorf("TPM state %s is missing", dir)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
		return nil
	})
}
