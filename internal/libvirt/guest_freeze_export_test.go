package libvirt

import (
	"testing"
	"time"
)

// SetThawTimeout sets the thaw's deadline for the test (restored after it).
func SetThawTimeout(t testing.TB, d time.Duration) {
	old := thawTimeout
	thawTimeout = d
	t.Cleanup(func() { thawTimeout = old })
}
