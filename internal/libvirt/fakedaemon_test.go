package libvirt

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Procedure numbers of libvirt's remote protocol (remote_protocol.x; a stable ABI) that
// fakeDaemon knows.
const (
	procConnectOpen         = 1
	procConnectClose        = 2
	procDomainDestroy       = 12
	procDomainLookupByName  = 23
	procDomainLookupByUUID  = 24
	procAuthList            = 66
	procDomainIsActive      = 150
	procDomainIsPersistent  = 151
	procConnectGetVersion   = 157
	procDomainGetState      = 212
	procDomainUndefineFlags = 231
	procDomainShutdownFlags = 258
	remoteProgram           = 0x20008086
)

// fakeReply is what fakeDaemon answers to one call: a payload (XDR), libvirt's error,
// or nothing at all and the connection closed (drop), as when libvirtd restarts, the
// link drops or the daemon disconnects the client while the call waits: go-libvirt then
// fails the call with ErrInterrupted ("procedure interrupted while awaiting response").
type fakeReply struct {
	payload []byte
	code    golibvirt.ErrorNumber // != 0: an error answer
	msg     string
	drop    bool
}

// fakeDaemon is a scripted libvirt daemon on a unix socket. It speaks the RPC framing
// and answers connection set-up itself (auth list, open, close, version); every other
// call goes to answer, with the number of the connection it came on (1 for the first).
// It records the calls, as "conn:proc".
type fakeDaemon struct {
	socket string
	answer func(conn int, proc uint32) fakeReply

	mu    sync.Mutex
	conns int
	calls []string
}

func startFakeDaemon(t *testing.T, answer func(conn int, proc uint32) fakeReply) *fakeDaemon {
	t.Helper()
	fd := &fakeDaemon{socket: filepath.Join(t.TempDir(), "libvirt-sock"), answer: answer}
	ln, err := net.Listen("unix", fd.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fd.mu.Lock()
			fd.conns++
			n := fd.conns
			fd.mu.Unlock()
			go fd.serve(n, c)
		}
	}()
	return fd
}

// client is a Client of the fake daemon, dialling once per attempt.
func (fd *fakeDaemon) client(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(Config{URI: "qemu+unix:///system?socket=" + fd.socket, DialAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

func (fd *fakeDaemon) serve(conn int, c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 28 || n > 1<<20 {
			return
		}
		pkt := make([]byte, n-4)
		if _, err := io.ReadFull(r, pkt); err != nil {
			return
		}
		prog, vers, proc, serial := binary.BigEndian.Uint32(pkt[0:4]), binary.BigEndian.Uint32(pkt[4:8]),
			binary.BigEndian.Uint32(pkt[8:12]), binary.BigEndian.Uint32(pkt[16:20])
		var rep fakeReply
		switch proc {
		case procAuthList:
			rep.payload = xdrInt(0) // no authentication
		case procConnectOpen, procConnectClose:
		case procConnectGetVersion:
			rep.payload = append(xdrInt(0), xdrInt(9000000)...)
		default:
			fd.mu.Lock()
			fd.calls = append(fd.calls, fmt.Sprintf("%d:%d", conn, proc))
			fd.mu.Unlock()
			rep = fd.answer(conn, proc)
		}
		if rep.drop {
			return
		}
		status, body := uint32(0), rep.payload
		if rep.code != 0 {
			status, body = 1, xdrError(rep.code, rep.msg)
		}
		out := make([]byte, 28, 28+len(body))
		binary.BigEndian.PutUint32(out[0:4], uint32(28+len(body)))
		for i, v := range []uint32{prog, vers, proc, 1 /* reply */, serial, status} {
			binary.BigEndian.PutUint32(out[4+4*i:], v)
		}
		if _, err := c.Write(append(out, body...)); err != nil {
			return
		}
	}
}

// called is the calls answer got, as "conn:proc".
func (fd *fakeDaemon) called() []string {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	return append([]string(nil), fd.calls...)
}

func xdrInt(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

func xdrString(s string) []byte {
	b := xdrInt(int32(len(s)))
	b = append(b, s...)
	return append(b, make([]byte, (4-len(s)%4)%4)...)
}

// xdrDomain is a remote_nonnull_domain: name, UUID, id.
func xdrDomain(name string) []byte {
	b := xdrString(name)
	b = append(b, "0123456789abcdef"...)
	return append(b, xdrInt(-1)...)
}

// xdrError is a remote_error: code, domain, message (a remote_string), level, and the
// optional fields all absent.
func xdrError(code golibvirt.ErrorNumber, msg string) []byte {
	b := append(xdrInt(int32(code)), xdrInt(10)...)
	b = append(b, xdrInt(1)...)
	b = append(b, xdrString(msg)...)
	b = append(b, xdrInt(2)...)            // level: error
	return append(b, make([]byte, 4*7)...) // dom, str1, str2, str3, int1, int2, net
}

// domainFound and domainGone answer a domain lookup.
var (
	domainFound = fakeReply{payload: xdrDomain("web")}
	domainGone  = fakeReply{code: golibvirt.ErrNoDomain, msg: "Domain not found: no domain with matching name 'web'"}
	notRunning  = fakeReply{code: golibvirt.ErrOperationInvalid, msg: "Requested operation is not valid: domain is not running"}
	dropped     = fakeReply{drop: true}
	answered    = fakeReply{}
)

func xdrBool(b bool) fakeReply {
	if b {
		return fakeReply{payload: xdrInt(1)}
	}
	return fakeReply{payload: xdrInt(0)}
}
