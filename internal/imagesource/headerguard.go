package imagesource

import (
	"bufio"
	"errors"
	"io"
)

// headerGuard is what the xz and zstd guards share: a reader that passes a compressed
// stream on to its decoder while its step reads the stream's structure. step either puts
// checked bytes in out, or sets skip to pass so many bytes on unread (payloads), or fails:
// the error is then what Read returns, after the bytes checked so far.
type headerGuard struct {
	r    *bufio.Reader
	out  []byte // bytes checked and not yet returned
	skip uint64 // bytes to pass on unread (chunk data, padding, checks)
	err  error
	step func() error
}

func newHeaderGuard(r io.Reader) headerGuard {
	return headerGuard{r: bufio.NewReaderSize(r, 1<<16)}
}

func (g *headerGuard) Read(p []byte) (int, error) {
	for len(g.out) == 0 && g.skip == 0 && g.err == nil {
		g.err = g.step()
	}
	switch {
	case len(g.out) > 0:
		n := copy(p, g.out)
		g.out = g.out[n:]
		return n, nil
	case g.skip > 0:
		if uint64(len(p)) > g.skip {
			p = p[:g.skip]
		}
		n, err := g.r.Read(p)
		g.skip -= uint64(n)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	}
	return 0, g.err
}

// take reads n bytes of structure; at the source's end, the bytes read so far are passed
// on (the decoder names the truncation) with io.ErrUnexpectedEOF.
func (g *headerGuard) take(n int) ([]byte, error) {
	b := make([]byte, n)
	k, err := io.ReadFull(g.r, b)
	if err != nil {
		g.out = append(g.out, b[:k]...)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}
