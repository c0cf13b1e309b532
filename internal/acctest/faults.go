package acctest

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DropDaemonClients makes the libvirt daemon itself close every connection this test
// process holds on its unix socket (virt-admin client-disconnect), as a daemon restart or
// a dropped link would. It returns how many it closed. Every connection: those of tests
// running beside the caller too, so a test that calls it runs with RunSerial (libvirtd
// 9.0 has exited when a client was cut with a job of another test in flight).
func DropDaemonClients(t testing.TB) int {
	t.Helper()
	out, err := exec.Command("virt-admin", "srv-clients-list", "libvirtd").CombinedOutput()
	if err != nil {
		t.Fatalf("virt-admin srv-clients-list: %v\n%s", err, out)
	}
	idRe := regexp.MustCompile(`(?m)^\s*(\d+)\s+unix\s`)
	pidRe := regexp.MustCompile(`(?m)^unix_process_id\s*:\s*(\d+)`)
	me := strconv.Itoa(os.Getpid())
	n := 0
	for _, m := range idRe.FindAllStringSubmatch(string(out), -1) {
		info, err := exec.Command("virt-admin", "client-info", "libvirtd", m[1]).CombinedOutput()
		if err != nil {
			continue // it went away meanwhile
		}
		if pm := pidRe.FindStringSubmatch(string(info)); pm == nil || pm[1] != me {
			continue
		}
		if out, err := exec.Command("virt-admin", "client-disconnect", "libvirtd", m[1]).CombinedOutput(); err != nil &&
			!strings.Contains(string(out), "no client") {
			t.Fatalf("virt-admin client-disconnect %s: %v\n%s", m[1], err, out)
		}
		n++
	}
	return n
}

// FaultProxy forwards TCP connections to a libvirt listener and can freeze or cut them,
// to put the provider through broken links deterministically.
type FaultProxy struct {
	Addr   string // 127.0.0.1:port to dial instead of the target
	target string
	ln     net.Listener

	mu           sync.Mutex
	frozen       bool
	refused      bool
	refusedCount int
	conns        []net.Conn
	accepted     int // connections forwarded so far

	lose map[uint32]*lostReply // LoseReplyTo: armed procedures
}

type lostReply struct {
	wait time.Duration // how long the daemon gets before the link is cut
	done chan struct{} // closed once the reply was lost
}

// StartFaultProxy listens on loopback and forwards to target (host:port).
func StartFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{Addr: ln.Addr().String(), target: target, ln: ln}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

func (p *FaultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refused := p.refused
		p.mu.Unlock()
		if refused { // a host whose daemon is down: the link opens and closes at once
			c.Close()
			p.mu.Lock()
			p.refusedCount++
			p.mu.Unlock()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.accepted++
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		l := &link{}
		go p.pipe(c, up, l)
		go p.pipeCalls(up, c, l)
	}
}

// link is one proxied connection; muted, the daemon's bytes to the client are dropped.
type link struct {
	mu    sync.Mutex
	muted bool
}

func (l *link) isMuted() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.muted }

// pipe copies the daemon's bytes to the client until either side closes; while frozen
// or muted, bytes are read and held back.
func (p *FaultProxy) pipe(dst, src net.Conn, l *link) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			frozen := p.frozen
			p.mu.Unlock()
			if !frozen && !l.isMuted() {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
		}
		if err != nil { // EOF or a closed socket: close the other side too
			break
		}
	}
	dst.Close()
	src.Close()
}

// Freeze swallows traffic from now on: calls in flight hang as on a dead link.
func (p *FaultProxy) Freeze() { p.mu.Lock(); p.frozen = true; p.mu.Unlock() }

// Thaw forwards again (new connections only; frozen ones have lost bytes).
func (p *FaultProxy) Thaw() { p.mu.Lock(); p.frozen = false; p.mu.Unlock() }

// Refuse closes new connections at once (a daemon that is down); Accept undoes it.
func (p *FaultProxy) Refuse() { p.mu.Lock(); p.refused = true; p.mu.Unlock() }
func (p *FaultProxy) Accept() { p.mu.Lock(); p.refused = false; p.mu.Unlock() }

// Accepted counts connections forwarded to the target.
func (p *FaultProxy) Accepted() int { p.mu.Lock(); defer p.mu.Unlock(); return p.accepted }

// Refused counts connections closed at once while refusing.
func (p *FaultProxy) Refused() int { p.mu.Lock(); defer p.mu.Unlock(); return p.refusedCount }

// Cut closes every connection through the proxy, as a dropped link would.
func (p *FaultProxy) Cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// libvirt RPC: every packet is a 4-byte big-endian length (itself included), then the
// header program, version, procedure, type, serial, status (4 bytes each).
const (
	remoteProgram = 0x20008086
	rpcCall       = 0
	// Procedure numbers of libvirt's remote protocol (remote_protocol.x; stable ABI).
	ProcStorageVolCreateXML  = 93
	ProcDomainDefineXMLFlags = 350
)

// pipeCalls copies the client's packets to the daemon whole, so that it can see which
// procedure each call is (for LoseReplyTo); while frozen, packets are held back.
func (p *FaultProxy) pipeCalls(dst, src net.Conn, l *link) {
	defer func() { dst.Close(); src.Close() }()
	r := bufio.NewReaderSize(src, 64*1024)
	for {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(n[:])
		if size < 4 || size > 64<<20 { // not plain libvirt RPC (TLS, say): copy bytes as they come
			if _, err := dst.Write(n[:]); err == nil {
				p.copyRaw(dst, r)
			}
			return
		}
		pkt := make([]byte, size)
		copy(pkt, n[:])
		if _, err := io.ReadFull(r, pkt[4:]); err != nil {
			return
		}
		p.mu.Lock()
		frozen := p.frozen
		var lose *lostReply
		if size >= 20 && binary.BigEndian.Uint32(pkt[4:8]) == remoteProgram && binary.BigEndian.Uint32(pkt[16:20]) == rpcCall {
			proc := binary.BigEndian.Uint32(pkt[12:16])
			if lose = p.lose[proc]; lose != nil {
				delete(p.lose, proc)
			}
		}
		p.mu.Unlock()
		if frozen {
			continue
		}
		if lose != nil {
			l.mu.Lock()
			l.muted = true
			l.mu.Unlock()
		}
		if _, err := dst.Write(pkt); err != nil {
			return
		}
		if lose != nil {
			// The daemon carries the call out; its answer is swallowed, then the link dies.
			time.Sleep(lose.wait)
			close(lose.done)
			return
		}
	}
}

// copyRaw copies until src ends; while frozen, bytes are read and held back.
func (p *FaultProxy) copyRaw(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			frozen := p.frozen
			p.mu.Unlock()
			if !frozen {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// LoseReplyTo arms the proxy for the next call of the libvirt procedure proc (a
// Proc* number): the call reaches the daemon, which carries it out, but its answer never
// comes back — wait later the connection is cut, as when the daemon dies or the link drops
// between doing a thing and saying so. The channel is closed once that happened.
// Several procedures may be armed at once, each for one call.
func (p *FaultProxy) LoseReplyTo(proc uint32, wait time.Duration) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lose == nil {
		p.lose = map[uint32]*lostReply{}
	}
	lr := &lostReply{wait: wait, done: make(chan struct{})}
	p.lose[proc] = lr
	return lr.done
}
