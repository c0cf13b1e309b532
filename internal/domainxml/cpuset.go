package domainxml

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Host and guest CPU sets in libvirt's syntax: numbers and ranges, comma separated, with
// ^N excluding a number ("0-3,^2,6"). libvirt rewrites a set it stores ("0,1" becomes
// "0-1"), so sets compare by the numbers they hold, never as text.

// MaxCPUSetCPU is the highest CPU number a set may name (libvirt's own bitmap limit is
// far above any host; this keeps a typo such as 0-99999999 from allocating).
const MaxCPUSetCPU = 8191

// ParseCPUSet returns the CPU numbers of set, sorted, or an error saying what is wrong.
func ParseCPUSet(set string) ([]uint, error) {
	in, out := map[uint]bool{}, map[uint]bool{}
	if strings.TrimSpace(set) == "" {
		return nil, fmt.Errorf("cpuset is empty: give CPU numbers or ranges such as 0-1,4")
	}
	for _, part := range strings.Split(set, ",") {
		part = strings.TrimSpace(part)
		target := in
		rest, exclude := strings.CutPrefix(part, "^")
		if exclude {
			target, part = out, rest
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("cpuset %q: %w", set, err)
		}
		b := a
		if isRange {
			if exclude {
				return nil, fmt.Errorf("cpuset %q: an exclusion (^N) takes one CPU number, not a range", set)
			}
			if b, err = cpuNumber(hi); err != nil {
				return nil, fmt.Errorf("cpuset %q: %w", set, err)
			}
			if b < a {
				return nil, fmt.Errorf("cpuset %q: range %s ends below its start", set, part)
			}
		}
		for n := a; n <= b; n++ {
			target[n] = true
		}
	}
	var cpus []uint
	for n := range in {
		if !out[n] {
			cpus = append(cpus, n)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("cpuset %q names no CPU", set)
	}
	slices.Sort(cpus)
	return cpus, nil
}

func cpuNumber(s string) (uint, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a CPU number (use numbers and ranges such as 0-3,6, with ^N to exclude one)", s)
	}
	if n > MaxCPUSetCPU {
		return 0, fmt.Errorf("CPU %d is beyond %d", n, MaxCPUSetCPU)
	}
	return uint(n), nil
}

// SameCPUSet reports whether two sets hold the same CPUs (text that does not parse
// compares as text).
func SameCPUSet(a, b string) bool {
	x, errA := ParseCPUSet(a)
	y, errB := ParseCPUSet(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return slices.Equal(x, y)
}

// CPUMap is the set as the bitmap libvirt's pinning calls take: bit n of byte n/8 for
// CPU n.
func CPUMap(set string) ([]byte, error) {
	cpus, err := ParseCPUSet(set)
	if err != nil {
		return nil, err
	}
	m := make([]byte, cpus[len(cpus)-1]/8+1)
	for _, n := range cpus {
		m[n/8] |= 1 << (n % 8)
	}
	return m, nil
}
