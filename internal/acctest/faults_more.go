package acctest

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// More procedure numbers of libvirt's remote protocol (remote_protocol.x; stable ABI),
// for LoseReplyTo and CallProxy.
const (
	ProcNetworkCreate           = 39
	ProcNetworkDefineXML        = 41
	ProcNetworkDestroy          = 42
	ProcNetworkSetAutostart     = 48
	ProcStoragePoolDefineXML    = 77
	ProcStoragePoolCreate       = 78
	ProcStoragePoolBuild        = 79
	ProcStoragePoolDestroy      = 80
	ProcStoragePoolSetAutostart = 90
	ProcDomainSnapshotCreateXML = 185
	ProcDomainBlockJobAbort     = 237
	ProcDomainGetBlockJobInfo   = 238
	ProcDomainDestroy           = 12
	ProcDomainUndefineFlags     = 231
)

// CallProxy forwards TCP connections to a libvirt listener (plain RPC: qemu+tcp) and
// reads every call of the client whole, so that a fault can be armed on one procedure —
// what FaultProxy cannot do, whose faults hit whatever is in flight:
//   - CutCalls: the call is never sent; the connection carrying it is cut instead (a link
//     that drops as the call goes out). The client cannot tell whether it got through.
//   - FreezeAt: the call is never sent and from then on nothing moves in either direction
//     on any connection, new ones included (a wedged daemon), until Thaw.
//   - RestartAt: the call is sent and carried out, its answer is lost, and the daemon seems
//     down for a while (every link cut, new connections closed at once), as when libvirtd
//     restarts between doing a thing and saying so.
type CallProxy struct {
	Addr   string // 127.0.0.1:port to dial instead of the target
	target string
	ln     net.Listener

	mu     sync.Mutex
	faults map[uint32]*callFault
	hits   map[uint32]int
	frozen bool
	down   bool
	links  map[*callLink]bool
}

type faultKind int

const (
	cutCall faultKind = iota + 1
	freezeAtCall
	restartAtCall
)

type callFault struct {
	kind faultKind
	left int           // calls still to hit; < 0: every call until Allow
	down time.Duration // restartAtCall: how long the daemon seems down
	done chan struct{} // closed when the fault first hit
	once sync.Once
}

type callLink struct {
	client, daemon net.Conn
	mu             sync.Mutex
	muted          bool // the daemon's bytes to the client are dropped
}

func (l *callLink) cut() { l.client.Close(); l.daemon.Close() }

func (l *callLink) isMuted() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.muted }

// StartCallProxy listens on loopback and forwards to target (host:port of a plain
// libvirt TCP listener).
func StartCallProxy(t testing.TB, target string) *CallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CallProxy{Addr: ln.Addr().String(), target: target, ln: ln,
		faults: map[uint32]*callFault{}, hits: map[uint32]int{}, links: map[*callLink]bool{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cutAll() })
	return p
}

// URI is the qemu+tcp URI of the system driver through the proxy.
func (p *CallProxy) URI() string { return "qemu+tcp://" + p.Addr + "/system" }

func (p *CallProxy) arm(proc uint32, f *callFault) <-chan struct{} {
	f.done = make(chan struct{})
	p.mu.Lock()
	p.faults[proc] = f
	p.mu.Unlock()
	return f.done
}

// CutCalls arms proc: its next n calls (n < 0: every call until Allow) are not sent, and
// the connection of each is cut instead. The channel is closed at the first.
func (p *CallProxy) CutCalls(proc uint32, n int) <-chan struct{} {
	return p.arm(proc, &callFault{kind: cutCall, left: n})
}

// FreezeAt arms proc: its next call is not sent, and the proxy freezes (see CallProxy).
func (p *CallProxy) FreezeAt(proc uint32) <-chan struct{} {
	return p.arm(proc, &callFault{kind: freezeAtCall, left: 1})
}

// RestartAt arms proc: its next call is carried out but its answer is lost, and the
// daemon seems down for the given time (see CallProxy).
func (p *CallProxy) RestartAt(proc uint32, down time.Duration) <-chan struct{} {
	return p.arm(proc, &callFault{kind: restartAtCall, left: 1, down: down})
}

// Allow disarms proc: its calls are forwarded again.
func (p *CallProxy) Allow(proc uint32) { p.mu.Lock(); delete(p.faults, proc); p.mu.Unlock() }

// Hits counts the calls of proc the proxy has seen (faulted or not).
func (p *CallProxy) Hits(proc uint32) int { p.mu.Lock(); defer p.mu.Unlock(); return p.hits[proc] }

// Thaw ends a freeze. The connections that lost bytes meanwhile are cut (their client
// would wait forever for answers that were swallowed); new ones work.
func (p *CallProxy) Thaw() {
	p.mu.Lock()
	p.frozen = false
	p.mu.Unlock()
	p.cutAll()
}

func (p *CallProxy) isFrozen() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.frozen }

func (p *CallProxy) cutAll() {
	p.mu.Lock()
	links := make([]*callLink, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.links = map[*callLink]bool{}
	p.mu.Unlock()
	for _, l := range links {
		l.cut()
	}
}

func (p *CallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		l := &callLink{client: c, daemon: up}
		p.mu.Lock()
		p.links[l] = true
		p.mu.Unlock()
		go p.replies(l)
		go p.calls(l)
	}
}

// replies copies the daemon's bytes to the client; while frozen or muted they are dropped.
func (p *CallProxy) replies(l *callLink) {
	defer l.cut()
	buf := make([]byte, 32*1024)
	for {
		n, err := l.daemon.Read(buf)
		if n > 0 && !p.isFrozen() && !l.isMuted() {
			if _, werr := l.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// calls copies the client's packets to the daemon whole, applying the armed faults.
func (p *CallProxy) calls(l *callLink) {
	defer l.cut()
	r := bufio.NewReaderSize(l.client, 64*1024)
	for {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(n[:])
		if size < 20 || size > 64<<20 {
			return // not plain libvirt RPC: this proxy does not speak it
		}
		pkt := make([]byte, size)
		copy(pkt, n[:])
		if _, err := io.ReadFull(r, pkt[4:]); err != nil {
			return
		}
		var fault *callFault
		p.mu.Lock()
		if binary.BigEndian.Uint32(pkt[4:8]) == remoteProgram && binary.BigEndian.Uint32(pkt[16:20]) == rpcCall {
			proc := binary.BigEndian.Uint32(pkt[12:16])
			p.hits[proc]++
			if f := p.faults[proc]; f != nil && !p.frozen {
				fault = f
				if f.left > 0 {
					if f.left--; f.left == 0 {
						delete(p.faults, proc)
					}
				}
			}
		}
		if fault != nil && fault.kind == freezeAtCall {
			p.frozen = true
		}
		frozen := p.frozen
		p.mu.Unlock()
		if fault != nil {
			fault.once.Do(func() { close(fault.done) })
		}
		switch {
		case frozen:
			continue // swallowed
		case fault != nil && fault.kind == cutCall:
			return
		case fault != nil && fault.kind == restartAtCall:
			l.mu.Lock()
			l.muted = true
			l.mu.Unlock()
			p.mu.Lock()
			p.down = true
			p.mu.Unlock()
			if _, err := l.daemon.Write(pkt); err != nil {
				return
			}
			p.restart(fault.down)
			return
		}
		if _, err := l.daemon.Write(pkt); err != nil {
			return
		}
	}
}

// restart gives the daemon a second to carry out the call whose answer is lost, cuts
// every link, and accepts connections again after down.
func (p *CallProxy) restart(down time.Duration) {
	time.Sleep(time.Second)
	p.cutAll()
	time.Sleep(down)
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}
