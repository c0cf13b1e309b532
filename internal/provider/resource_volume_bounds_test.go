package provider_test

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// xzZeros writes an xz file of n zero bytes (n > 0) whose block header asks for the
// dictionary of size byte dict (40: 4 GiB), in uncompressed LZMA2 chunks: valid, made as
// it is served (no encoder, nothing held), and a decoder that takes the dictionary writes
// every byte of the image into it, so its memory is really used, not only reserved.
func xzZeros(w io.Writer, dict byte, n int) {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	bw := bufio.NewWriterSize(w, 1<<16)
	// A write that fails (the client went away, which is what this test wants) fails
	// every later one: only the data loop looks.
	put := func(b []byte) { _, _ = bw.Write(b) }
	defer func() { _ = bw.Flush() }()
	flags := []byte{0, 1} // CRC32
	put([]byte{0xfd, '7', 'z', 'X', 'Z', 0})
	put(flags)
	put(le32(crc32.ChecksumIEEE(flags)))
	hdr := []byte{2, 0, 0x21, 1, dict, 0, 0, 0}
	hdr = append(hdr, le32(crc32.ChecksumIEEE(hdr))...)
	put(hdr)
	zero := make([]byte, 1<<16)
	var sum uint32
	packed := 0
	for left, first := n, true; left > 0; first = false {
		k := min(left, len(zero))
		ctl := byte(2)
		if first {
			ctl = 1
		}
		put([]byte{ctl, byte((k - 1) >> 8), byte(k - 1)})
		if _, err := bw.Write(zero[:k]); err != nil {
			return
		}
		sum = crc32.Update(sum, crc32.IEEETable, zero[:k])
		packed += 3 + k
		left -= k
	}
	put([]byte{0})
	packed++
	put(make([]byte, (4-packed%4)%4))
	put(le32(sum))
	index := append([]byte{0, 1}, binary.AppendUvarint(nil, uint64(len(hdr)+packed+4))...)
	index = append(index, binary.AppendUvarint(nil, uint64(n))...)
	index = append(index, make([]byte, (4-len(index)%4)%4)...)
	index = append(index, le32(crc32.ChecksumIEEE(index))...)
	put(index)
	foot := append(le32(uint32(len(index)/4-1)), flags...)
	put(le32(crc32.ChecksumIEEE(foot)))
	put(foot)
	put([]byte("YZ"))
}

// zstdZeros is a zstd frame of n zero bytes in RLE blocks (4 bytes per 128 KiB) whose
// window descriptor asks for 1<<(10+exp) bytes (21: 2 GiB, what --long=31 writes).
func zstdZeros(exp byte, n int) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, exp << 3}
	return append(f, rleBlocks(n)...)
}

func rleBlocks(n int) []byte {
	var b []byte
	for n > 0 {
		k := min(n, 1<<17)
		n -= k
		h := uint32(1<<1) | uint32(k)<<3 // RLE
		if n == 0 {
			h |= 1 // last
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return b
}

// lyingQcow2Header is a version 3 qcow2 header (64 KiB clusters, 16-bit refcounts) of virtual
// size size, padded to n bytes.
func lyingQcow2Header(size uint64, n int) []byte {
	b := make([]byte, n)
	copy(b, "QFI\xfb")
	binary.BigEndian.PutUint32(b[4:8], 3)
	binary.BigEndian.PutUint32(b[20:24], 16)
	binary.BigEndian.PutUint64(b[24:32], size)
	binary.BigEndian.PutUint32(b[96:100], 4)
	binary.BigEndian.PutUint32(b[100:104], 104)
	return b
}

// peakRSS is the test process's peak resident set (VmHWM, KiB); resetPeakRSS sets it
// back to the current RSS (clear_refs 5).
func peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

func resetPeakRSS(t *testing.T) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
}

// TestAccVolumeDecompress_bounds: sources that would make the provider allocate or write
// without bound fail, naming the bound, and leave no volume.
//
//   - an xz file whose block header asks for a 4 GiB dictionary, holding 640 MiB of
//     zeros (a decoder that took the dictionary would write 640 MiB into it);
//   - a zstd frame whose window descriptor asks for 2 GiB (what --long=31 writes);
//
// fail before any volume is made, and the provider's peak RSS stays under 512 MiB. The
// provider runs inside this test process (ProtoV6ProviderFactories; the CLI is another
// process), so the process's VmHWM, reset before each of those steps and read after, is
// the provider's peak plus the test's own; the test runs serially (acctest.RunSerial) so
// that no other test's provider shares the process while it is measured.
//
//   - a raw zstd source that decompresses to 64 MiB with capacity_bytes = 8 MiB;
//   - a qcow2 header of virtual size 1 MiB followed by 256 MiB (zstd, so no length is
//     known before the end): more than any qcow2 file of that header can hold;
//
// stop at their bound, fail naming it, and the half-made volume is deleted (each next
// step checks it is gone; CheckDestroy asks libvirt for all four).
func TestAccVolumeDecompress_bounds(t *testing.T) {
	acctest.RequireAcc(t)
	const imageSize = 640 << 20
	hdr := lyingQcow2Header(1<<20, 64<<10)
	// The qcow2 source: one raw block with the header cluster, then RLE blocks of zeros.
	rawHdr := uint32(0) | uint32(len(hdr))<<3
	qcowZst := append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 10 << 3}, byte(rawHdr), byte(rawHdr>>8), byte(rawHdr>>16))
	qcowZst = append(append(qcowZst, hdr...), rleBlocks(256<<20)...)
	files := map[string][]byte{
		"/huge-window.raw.zst": zstdZeros(21, imageSize),
		"/big.raw.zst":         zstdZeros(10, 64<<20),
		"/lying.qcow2.zst":     qcowZst,
	}
	xzServed, xzDone := &countingWriter{}, make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/huge-dict.raw.xz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		xzServed.w = w
		xzZeros(xzServed, 40, imageSize)
		xzDone <- struct{}{}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	dict, window, big, lying := acctest.RandomName("zvol"), acctest.RandomName("zvol"), acctest.RandomName("zvol"), acctest.RandomName("zvol")
	base := acctest.ProviderBlock("")
	var start time.Time
	measure := func(what string) func() {
		return func() {
			start = time.Now()
			resetPeakRSS(t)
			t.Logf("%s: peak RSS reset to %d MiB", what, peakRSS(t)>>10)
		}
	}
	measured := func(what string) {
		peak := peakRSS(t)
		t.Logf("%s: failed after %s; peak RSS of the test process (provider inside) %d MiB", what, time.Since(start).Round(time.Millisecond), peak>>10)
		if peak > 512<<10 {
			t.Errorf("%s: peak RSS %d MiB, want under 512 MiB", what, peak>>10)
		}
	}
	acctest.RunSerial(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(dict, window, big, lying),
		Steps: []resource.TestStep{
			{
				PreConfig: measure("xz 4 GiB dictionary"),
				Config:    base + volumeHCL("v", dict, attr("source_url", srv.URL+"/huge-dict.raw.xz"), attr("format", "raw")),
				ExpectError: acctest.Wrapped(`Unable to create volume .*` + dict + `.*xz stream asks for a 4\.0 GiB \(4294967295-byte\) dictionary; ` +
					`the provider allows at most 64 MiB \(xz -9 and -9e use 64 MiB`),
			},
			{
				PreConfig: func() {
					measured("xz 4 GiB dictionary")
					acctest.RequireVolumeGone(t, acctest.Pool(), dict)
					select { // the server's writes fail once the provider has closed the download
					case <-xzDone:
					case <-time.After(30 * time.Second):
						t.Error("the xz download still runs 30 s after the refusal")
					}
					if n := xzServed.n.Load(); n >= imageSize {
						t.Errorf("the whole xz file (%d bytes) was served: the refusal came late", n)
					} else {
						t.Logf("the xz server wrote %d of its %d+ bytes before the provider closed the download", n, imageSize)
					}
					measure("zstd 2 GiB window")()
				},
				Config: base + volumeHCL("v", window, attr("source_url", srv.URL+"/huge-window.raw.zst"), attr("format", "raw")),
				ExpectError: acctest.Wrapped(`Unable to create volume .*` + window + `.*zstd stream asks for a 2 GiB \(2147483648-byte\) window; ` +
					`the provider allows at most 128 MiB \(zstd --ultra -22 uses 128 MiB.*--long=31`),
			},
			{
				PreConfig: func() {
					measured("zstd 2 GiB window")
					acctest.RequireVolumeGone(t, acctest.Pool(), window)
				},
				Config: base + volumeHCL("v", big, attr("source_url", srv.URL+"/big.raw.zst"), attr("format", "raw"), attr("capacity_bytes", 8<<20)),
				ExpectError: acctest.Wrapped(`Unable to create volume .*` + big + `.*the image .*big.raw.zst is larger than capacity_bytes = 8388608 \(8 MiB\).*` +
					`stopped after 8388608 bytes.*half-made volume .*` + big + ` was deleted`),
			},
			{
				PreConfig: func() { acctest.RequireVolumeGone(t, acctest.Pool(), big) },
				Config:    base + volumeHCL("v", lying, attr("source_url", srv.URL+"/lying.qcow2.zst"), attr("format", "qcow2")),
				ExpectError: acctest.Wrapped(`Unable to create volume .*` + lying + `.*the image .*lying.qcow2.zst is larger than \d+ bytes \(\d+\.\d MiB\), ` +
					`the most a qcow2 file of virtual size 1048576 can hold by its own header.*half-made volume .*` + lying + ` was deleted`),
			},
		},
	})
}

type countingWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}
