package libvirt

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt/libvirttest"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// procDomainBlockCopy is REMOTE_PROC_DOMAIN_BLOCK_COPY.
const procDomainBlockCopy = 345

// mockDaemon serves go-libvirt's mock daemon (libvirttest) on a unix socket, one mock per
// connection, and counts the calls it receives by procedure. The mock answers a few
// procedures (open, domain lookup by name, ...) and leaves the others unanswered: such a
// call waits until its context ends.
type mockDaemon struct {
	socket string
	mu     sync.Mutex
	calls  map[uint32]int
}

func startMockDaemon(t *testing.T) *mockDaemon {
	t.Helper()
	md := &mockDaemon{socket: filepath.Join(t.TempDir(), "libvirt-sock"), calls: map[uint32]int{}}
	ln, err := net.Listen("unix", md.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mock, err := libvirttest.New().Dial()
			if err != nil {
				conn.Close()
				continue
			}
			go func() { _, _ = io.Copy(conn, mock); conn.Close() }()
			go md.forward(conn, mock)
		}
	}()
	return md
}

// forward passes whole packets (length, header, payload) on, as go-libvirt writes them.
func (md *mockDaemon) forward(from io.Reader, to net.Conn) {
	defer to.Close()
	for {
		var size [4]byte
		if _, err := io.ReadFull(from, size[:]); err != nil {
			return
		}
		pkt := make([]byte, binary.BigEndian.Uint32(size[:]))
		copy(pkt, size[:])
		if _, err := io.ReadFull(from, pkt[4:]); err != nil || len(pkt) < 16 {
			return
		}
		md.mu.Lock()
		md.calls[binary.BigEndian.Uint32(pkt[12:16])]++
		md.mu.Unlock()
		if _, err := to.Write(pkt); err != nil {
			return
		}
	}
}

func (md *mockDaemon) count(proc uint32) int {
	md.mu.Lock()
	defer md.mu.Unlock()
	return md.calls[proc]
}

// A live copy of a disk for a clone and an export's block copy of the same disk take
// turns: both are BlockCopy, under one lock per daemon, domain UUID and disk, whether the
// caller knows the domain by name (the clone) or by its handle (the export). They used to
// lock by name and by UUID in two maps, so they did not queue.
func TestBlockCopyCloneAndExportTakeTurns(t *testing.T) {
	SetBlockJobAbortBudget(t, 300*time.Millisecond) // the mock never answers an abort
	md := startMockDaemon(t)
	c, err := NewClient(Config{URI: "qemu+unix:///system?socket=" + md.socket, DialAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dom, err := c.LookupDomain(ctx, "test") // the export finds the running domain by its disk: a handle
	if err != nil {
		t.Fatal(err)
	}

	// The export's copy starts and runs (the mock never answers it) until exportCtx ends.
	exportCtx, endExport := context.WithCancel(ctx)
	exported := make(chan error, 1)
	go func() {
		exported <- c.BlockCopy(exportCtx, BlockCopyJob{Domain: dom, Disk: "vda", Dest: "/pool/tmp.raw", Format: "raw",
			DestName: "temporary volume pool/tmp.raw"})
	}()
	waitUntil(t, "the export's block copy to start", func() bool { return md.count(procDomainBlockCopy) == 1 })

	// A clone of the same disk meanwhile waits for the export instead of starting its own.
	cloneCtx, endClone := context.WithCancel(ctx)
	defer endClone()
	cloned := make(chan error, 1)
	go func() { cloned <- c.CopyDiskLive(cloneCtx, "test", "vda", "/pool/web2-vda.qcow2", "qcow2", false) }()
	time.Sleep(500 * time.Millisecond)
	if n := md.count(procDomainBlockCopy); n != 1 {
		t.Fatalf("%d block copies sent while the export's ran; the clone must wait for it", n)
	}

	// Once the export ends, the clone starts.
	endExport()
	var running *BlockJobRunningError
	if err := <-exported; !errors.As(err, &running) || running.Dest != "temporary volume pool/tmp.raw" {
		t.Fatalf("export: want a BlockJobRunningError naming the temporary volume (the mock never ends a job), got %v", err)
	}
	waitUntil(t, "the clone's block copy to start after the export's ended", func() bool { return md.count(procDomainBlockCopy) == 2 })
	endClone()
	if err := <-cloned; !errors.As(err, &running) || running.Domain != dom.Name || running.Disk != "vda" {
		t.Fatalf("clone: want a BlockJobRunningError naming the domain and disk, got %v", err)
	}

	// Another disk of the domain is not held up by a copy of vda.
	unlock, err := c.lockDisk(ctx, dom, "vda")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	lctx, lcancel := context.WithTimeout(ctx, 2*time.Second)
	defer lcancel()
	unlockB, err := c.lockDisk(lctx, dom, "vdb")
	if err != nil {
		t.Fatalf("vdb waited for vda: %v", err)
	}
	unlockB()
	// And one waiting for a busy disk gives up when its context ends.
	sctx, scancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer scancel()
	if _, err := c.lockDisk(sctx, dom, "vda"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for a busy disk past the deadline: %v", err)
	}
}

// waitUntil waits up to 10 s for cond.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := poll.Until(context.Background(), poll.Options{Every: 10 * time.Millisecond, Timeout: 10 * time.Second},
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
