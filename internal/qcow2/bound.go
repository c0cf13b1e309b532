package qcow2

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// MaxFileSize is the most bytes a qcow2 file with header b (a header Probe accepted) can
// hold without describing more than its header says: an upload that brings more is not
// the image its header describes (a header put in front of a stream meant to fill the
// pool), and stops there.
//
// Kept simple and safe, every term an overestimate:
//   - guest data: every cluster of the virtual size allocated (compressed clusters are
//     smaller);
//   - L2 tables: one 8- or 16-byte entry (extended L2) per data cluster, counted at 16,
//     in whole clusters;
//   - the L1 table: the header's l1_size or what the data needs, whichever is larger,
//     at most QEMU's 32 MiB;
//   - refcounts: one entry of refcount_bits per cluster of everything above, twice over
//     (the refcount blocks count themselves and the refcount table);
//   - each internal snapshot (nb_snapshots) as many data, L1 and L2 clusters again: a
//     snapshot may keep its own copy of every cluster;
//   - 64 MiB for the header cluster, its extensions, the snapshot table and persistent
//     bitmaps, plus 1/64 of the virtual size for bitmaps of a larger disk.
//
// Not counted: a snapshot's saved VM state (guest RAM, not derivable from the header).
// Cloud images have no internal snapshots; one that has them with VM state can exceed
// this and should be flattened (qemu-img convert) before it is uploaded.
func MaxFileSize(b []byte) (uint64, error) {
	h, err := Probe(b)
	if err != nil {
		return 0, err
	}
	clusterBits := binary.BigEndian.Uint32(b[20:24])
	if clusterBits < 9 || clusterBits > 21 { // QEMU's limits: 512 bytes to 2 MiB
		return 0, fmt.Errorf("qcow2 header: cluster_bits %d is outside 9..21", clusterBits)
	}
	c := uint64(1) << clusterBits
	refcountBits := uint64(16)
	if h.Version == 3 {
		order := binary.BigEndian.Uint32(b[96:100])
		if order > 6 {
			return 0, fmt.Errorf("qcow2 header: refcount_order %d is above 6", order)
		}
		refcountBits = 1 << order
	}
	data := ceilDiv(h.VirtualSize, c)
	l2 := ceilDiv(data, c/16)
	l1Entries := max(uint64(binary.BigEndian.Uint32(b[36:40])), l2)
	l1 := ceilDiv(min(l1Entries*8, 32<<20), c)
	perState := add(add(data, l2), l1) // clusters one state of the disk can hold
	snapshots := uint64(binary.BigEndian.Uint32(b[60:64]))
	clusters := mul(perState, add(snapshots, 1))
	refcount := mul(ceilDiv(mul(clusters, refcountBits), 8*c), 2)
	total := mul(add(add(clusters, refcount), 1), c)
	return add(add(total, 64<<20), h.VirtualSize/64), nil
}

func ceilDiv(a, b uint64) uint64 { return a/b + min(a%b, 1) }

// add and mul saturate: a bound past 2^64 is no bound (the pool's free space still is).
func add(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return 1<<64 - 1
	}
	return s
}

func mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return 1<<64 - 1
	}
	return lo
}
