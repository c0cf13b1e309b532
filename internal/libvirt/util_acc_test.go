package libvirt_test

import (
	"os"
	"strconv"
)

func writeString(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

func itoa(i int) string { return strconv.Itoa(i) }
