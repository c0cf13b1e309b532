package libvirt

import (
	"context"
	"errors"
	"slices"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// HostMemory is the host's memory now: free memory changes from one second to the next,
// so it is read on every call (never from the capabilities cache); totals, cells and huge
// page sizes come from HostInfo (cached).
type HostMemory struct {
	TotalBytes uint64
	FreeBytes  uint64
	Cells      []NUMACell  // with FreeBytes and each pool's Free filled where libvirt tells
	Hugepages  []Hugepages // per size, summed over the cells
}

// HostMemory reads the free memory of every NUMA cell (their sum is the host's, as
// virNodeGetFreeMemory computes it) and the free huge pages of every cell: two calls on
// a host whose cells are numbered 0..n-1, which is every host libvirt knows. A libvirt
// that cannot tell per cell (built without NUMA support) answers for the whole host.
func (c *Client) HostMemory(ctx context.Context) (*HostMemory, error) {
	info, err := c.HostInfo(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]int, len(info.Cells))
	for i, cell := range info.Cells {
		ids[i] = cell.ID
	}
	var f freeMemory
	err = c.Read(ctx, "read the host's free memory", func(l *golibvirt.Libvirt) error {
		f = freeMemory{}
		if err := f.readCells(l, ids); err != nil {
			return err
		}
		if f.cells == nil {
			free, err := l.NodeGetFreeMemory()
			if err != nil {
				return err
			}
			f.host = &free
		}
		return f.readPages(l, ids, info.HugepageSizesKiB)
	})
	if err != nil {
		return nil, err
	}
	return f.merge(info), nil
}

// freeMemory is what the calls answered: bytes free per cell (nil: libvirt cannot tell)
// or for the host, and free pages per cell and size.
type freeMemory struct {
	cells map[int]uint64
	host  *uint64
	pages map[int]map[uint64]uint64
}

func (f *freeMemory) readCells(l *golibvirt.Libvirt, ids []int) error {
	cells := map[int]uint64{}
	for _, r := range cellRuns(ids) {
		free, err := l.NodeGetCellsFreeMemory(int32(r.start), int32(r.n))
		if refused(err) {
			return nil // e.g. "NUMA isn't available on this host": the host total serves
		}
		if err != nil {
			return err
		}
		for i, b := range free {
			cells[r.start+i] = b
		}
	}
	if len(cells) > 0 {
		f.cells = cells
	}
	return nil
}

func (f *freeMemory) readPages(l *golibvirt.Libvirt, ids []int, sizes []uint64) error {
	if len(sizes) == 0 || len(ids) == 0 {
		return nil
	}
	req := make([]uint32, len(sizes))
	for i, s := range sizes {
		req[i] = uint32(s)
	}
	pages := map[int]map[uint64]uint64{}
	for _, r := range cellRuns(ids) {
		counts, err := l.NodeGetFreePages(req, int32(r.start), uint32(r.n), 0)
		if refused(err) {
			return nil // free huge pages stay unknown
		}
		if err != nil {
			return err
		}
		// libvirt answers cell by cell, each with one count per size asked.
		for i, n := range counts {
			cell := r.start + i/len(sizes)
			if pages[cell] == nil {
				pages[cell] = map[uint64]uint64{}
			}
			pages[cell][sizes[i%len(sizes)]] = n
		}
	}
	f.pages = pages
	return nil
}

// merge puts the free counts on copies of the cached cells and sums the host's pools.
func (f *freeMemory) merge(info *HostInfo) *HostMemory {
	m := &HostMemory{TotalBytes: info.MemoryTotalBytes}
	if f.host != nil {
		m.FreeBytes = *f.host
	}
	for _, size := range info.HugepageSizesKiB {
		m.Hugepages = append(m.Hugepages, Hugepages{SizeKiB: size})
	}
	for _, cached := range info.Cells {
		cell := cached
		cell.Hugepages = slices.Clone(cached.Hugepages)
		if b, ok := f.cells[cell.ID]; ok {
			cell.FreeBytes = &b
			m.FreeBytes += b
		}
		for i := range cell.Hugepages {
			h := &cell.Hugepages[i]
			n, known := f.pages[cell.ID][h.SizeKiB]
			if known {
				h.Free = &n
			}
			if k := slices.IndexFunc(m.Hugepages, func(x Hugepages) bool { return x.SizeKiB == h.SizeKiB }); k >= 0 {
				m.Hugepages[k].Total += h.Total
				if known {
					m.Hugepages[k].Free = addPtr(m.Hugepages[k].Free, n)
				}
			}
		}
		m.Cells = append(m.Cells, cell)
	}
	return m
}

func addPtr(p *uint64, n uint64) *uint64 {
	if p != nil {
		n += *p
	}
	return &n
}

type cellRun struct{ start, n int }

// cellRuns groups sorted cell ids into runs of consecutive ids: one call each.
func cellRuns(ids []int) []cellRun {
	ids = slices.Sorted(slices.Values(ids))
	var out []cellRun
	for _, id := range ids {
		if k := len(out) - 1; k >= 0 && out[k].start+out[k].n == id {
			out[k].n++
			continue
		}
		out = append(out, cellRun{id, 1})
	}
	return out
}

// refused reports whether err is libvirt's answer (it cannot or will not), not a failure
// of the connection.
func refused(err error) bool {
	var e *Error
	return errors.As(classify("", "", err), &e)
}
