package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// profileCPU writes a CPU profile of this provider process to path (one file per process:
// the process id is appended) when path is set, for finding where a plan's time goes
// (docs/guides/performance.md). Terraform stops a provider gracefully at the end of each
// command, so Serve returns and the returned stop function flushes the profile.
func profileCPU(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	// The path is the user's own environment variable, for their own profile.
	f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid())) //nolint:gosec // see above

	if err != nil {
		fmt.Fprintln(os.Stderr, "cpu profile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "cpu profile:", err)
		_ = f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
