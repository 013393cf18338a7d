package reality

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"

	"golang.org/x/net/http2/hpack"
)

// etcd speaks gRPC over HTTP/2: one connection carries every call of a
// client, each on a stream of its own (the acquire's Txn, the Session's
// LeaseKeepAlive, a Get), their frames interleaved. Holding an acquire's
// reply is holding the frames of one stream, the Txn's, while the other
// streams go on: a Session's keep-alives still renew its lease, as they
// would while a real network sat on one reply. An etcd proxy (viaH2) reads
// the connection frame by frame (RFC 9113 §4): the client's frames go
// through as they are, their header blocks decoded only to learn each
// stream's method (:path); the server's frames go through as they are too,
// but for the held stream's, which wait in a queue until the reply
// arrives, and for header blocks: HPACK (RFC 7541) compresses each block
// against a table that every earlier block changed, so a block the proxy
// holds back would break the ones it lets pass; the proxy decodes every
// block of the server's and encodes it again, in the order it writes
// them, with no table (literals and the static table only).

// h2Preface is what an HTTP/2 client sends first (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// etcdTxnPath is the gRPC method of an etcd transaction: the acquire of
// lockcheck's own etcd client (put if absent) and of etcd's Mutex
// (tryAcquire), whose reply a delay holds.
const etcdTxnPath = "/etcdserverpb.KV/Txn"

// HTTP/2 frame types and flags the proxy looks at (RFC 9113 §6).
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2RSTStream    = 0x3
	h2PushPromise  = 0x5
	h2Continuation = 0x9

	h2EndStream  = 0x1
	h2EndHeaders = 0x4
	h2Padded     = 0x8
	h2Priority   = 0x20
)

// h2MaxFrame is the largest frame the proxy writes: the size every peer
// must accept (SETTINGS_MAX_FRAME_SIZE is at least this).
const h2MaxFrame = 16384

// h2Frame is one frame, or a whole header block (HEADERS and its
// CONTINUATIONs): raw is its bytes as they came, fields the block decoded.
type h2Frame struct {
	typ, flags byte
	stream     uint32
	raw        []byte
	fields     []hpack.HeaderField
	headers    bool
}

// h2Conn is one proxied HTTP/2 connection.
type h2Conn struct {
	p      *proxy
	client net.Conn // towards the client
	// reqDec decodes the client's header blocks (the :path of each
	// stream); repDec the server's, which enc encodes again
	reqDec, repDec *hpack.Decoder
	wmu            sync.Mutex // writes to client, and enc
	enc            *hpack.Encoder
	encBuf         bytes.Buffer
	queue          []h2Frame // the held stream's frames, in order (under p.mu)
}

func newH2Conn(p *proxy, client net.Conn) *h2Conn {
	h := &h2Conn{p: p, client: client}
	h.reqDec = hpack.NewDecoder(4096, nil)
	h.repDec = hpack.NewDecoder(4096, nil)
	// a peer's SETTINGS_HEADER_TABLE_SIZE lets the other side's encoder
	// grow its table: the proxy follows whatever the blocks say
	h.reqDec.SetAllowedMaxDynamicTableSize(1 << 20)
	h.repDec.SetAllowedMaxDynamicTableSize(1 << 20)
	h.enc = hpack.NewEncoder(&h.encBuf)
	h.enc.SetMaxDynamicTableSize(0) // the first block says so: no table
	return h
}

// readH2Frame reads one frame, or a whole header block, decoded with dec
// (every block must be, in order, to keep the table).
func readH2Frame(r io.Reader, dec *hpack.Decoder) (h2Frame, error) {
	f, payload, err := readRawH2(r)
	if err != nil {
		return h2Frame{}, err
	}
	switch f.typ {
	case h2PushPromise: // gRPC clients refuse pushes (SETTINGS_ENABLE_PUSH 0)
		return h2Frame{}, fmt.Errorf("HTTP/2 PUSH_PROMISE on stream %d: gRPC has no pushes", f.stream)
	case h2Continuation:
		return h2Frame{}, fmt.Errorf("HTTP/2 CONTINUATION on stream %d outside a header block", f.stream)
	case h2Headers:
	default:
		return f, nil
	}
	frag := payload
	if f.flags&h2Padded != 0 {
		if len(frag) < 1 || int(frag[0]) > len(frag)-1 {
			return h2Frame{}, fmt.Errorf("HTTP/2 HEADERS on stream %d: bad padding", f.stream)
		}
		frag = frag[1 : len(frag)-int(frag[0])]
	}
	if f.flags&h2Priority != 0 {
		if len(frag) < 5 {
			return h2Frame{}, fmt.Errorf("HTTP/2 HEADERS on stream %d: short priority", f.stream)
		}
		frag = frag[5:]
	}
	block := append([]byte(nil), frag...)
	for end := f.flags&h2EndHeaders != 0; !end; { // CONTINUATIONs follow, nothing between
		c, cp, err := readRawH2(r)
		if err != nil {
			return h2Frame{}, err
		}
		if c.typ != h2Continuation || c.stream != f.stream {
			return h2Frame{}, fmt.Errorf("HTTP/2 frame type %d on stream %d inside the header block of stream %d", c.typ, c.stream, f.stream)
		}
		f.raw = append(f.raw, c.raw...)
		block = append(block, cp...)
		end = c.flags&h2EndHeaders != 0
	}
	if f.fields, err = dec.DecodeFull(block); err != nil {
		return h2Frame{}, fmt.Errorf("HTTP/2 header block on stream %d: %v", f.stream, err)
	}
	f.headers = true
	return f, nil
}

// readRawH2 reads one frame: its header, raw bytes and payload.
func readRawH2(r io.Reader) (h2Frame, []byte, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return h2Frame{}, nil, err
	}
	n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
	f := h2Frame{typ: hdr[3], flags: hdr[4], stream: binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff}
	f.raw = make([]byte, 9+n)
	copy(f.raw, hdr[:])
	if _, err := io.ReadFull(r, f.raw[9:]); err != nil {
		return h2Frame{}, nil, err
	}
	return f, f.raw[9:], nil
}

// writeReply writes a frame of the server's to the client: as it came,
// or a header block encoded again by the proxy's own encoder (under
// h.wmu: the order of the writes is the order of the client's table).
func (h *h2Conn) writeReply(f h2Frame) error {
	if !f.headers {
		_, err := h.client.Write(f.raw)
		return err
	}
	h.encBuf.Reset()
	for _, hf := range f.fields {
		if err := h.enc.WriteField(hf); err != nil {
			return err
		}
	}
	block := h.encBuf.Bytes()
	var out []byte
	typ, flags := byte(h2Headers), f.flags&h2EndStream
	for {
		n := min(len(block), h2MaxFrame)
		fl := flags
		if n == len(block) {
			fl |= h2EndHeaders
		}
		var hdr [9]byte
		hdr[0], hdr[1], hdr[2] = byte(n>>16), byte(n>>8), byte(n)
		hdr[3], hdr[4] = typ, fl
		binary.BigEndian.PutUint32(hdr[5:], f.stream)
		out = append(append(out, hdr[:]...), block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			break
		}
		typ, flags = h2Continuation, 0
	}
	_, err := h.client.Write(out)
	return err
}

// h2Path is a request header block's :path.
func h2Path(fields []hpack.HeaderField) string {
	for _, f := range fields {
		if f.Name == ":path" {
			return f.Value
		}
	}
	return ""
}

// requests copies the client's frames to the server (src the client, dst
// the server) as they came. While the proxy holds replies and holds no
// stream yet, the first request of method p.holdPath becomes the held
// stream: its request goes on, its reply will wait.
func (h *h2Conn) requests(dst, src net.Conn) error {
	p := h.p
	pre := make([]byte, len(h2Preface))
	if _, err := io.ReadFull(src, pre); err != nil {
		return err
	}
	if string(pre) != h2Preface {
		return fmt.Errorf("an etcd client's connection that does not start with the HTTP/2 preface (%q)", pre)
	}
	if !p.wait() {
		return nil
	}
	if _, err := dst.Write(pre); err != nil {
		return err
	}
	for {
		f, err := readH2Frame(src, h.reqDec)
		if err != nil {
			return err
		}
		if !p.wait() {
			return nil
		}
		p.mu.Lock()
		if f.headers && p.replies && p.heldConn == nil && h2Path(f.fields) == p.holdPath {
			p.heldConn, p.heldStream = h, f.stream
		}
		p.mu.Unlock()
		if _, err := dst.Write(f.raw); err != nil {
			return err
		}
	}
}

// replies copies the server's frames to the client (src the server): the
// held stream's frames go to the queue until the held reply arrives.
func (h *h2Conn) replies(src net.Conn) error {
	p := h.p
	for {
		f, err := readH2Frame(src, h.repDec)
		if err != nil {
			return err
		}
		p.mu.Lock()
		if p.heldConn == h && f.stream == p.heldStream {
			h.queue = append(h.queue, f)
			if p.replies {
				select { // the server has answered: the acquire was applied
				case p.got <- struct{}{}:
				default:
				}
			}
			p.mu.Unlock()
			p.flushHeld() // unless the reply is held still
			continue
		}
		p.mu.Unlock()
		if !p.wait() {
			return nil
		}
		h.wmu.Lock()
		err = h.writeReply(f)
		h.wmu.Unlock()
		if err != nil {
			return err
		}
	}
}

// flushHeld writes the held stream's queued frames to the client once
// nothing holds them (the reply has arrived, no pause holds the client's
// traffic), and ends the stream's hold; later frames of the stream wait
// for these on h.wmu.
func (p *proxy) flushHeld() {
	p.mu.Lock()
	h := p.heldConn
	p.mu.Unlock()
	if h == nil {
		return
	}
	h.wmu.Lock()
	defer h.wmu.Unlock()
	p.mu.Lock()
	if (p.held || p.replies && !p.leak) && !p.done || p.heldConn != h {
		p.mu.Unlock()
		return
	}
	q := h.queue
	h.queue, p.heldConn = nil, nil
	p.mu.Unlock()
	for _, f := range q {
		if err := h.writeReply(f); err != nil { // the connection is gone: its reader sees it
			return
		}
	}
}
