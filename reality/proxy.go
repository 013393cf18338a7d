package reality

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
)

// A true pause freezes a whole client, the library's own goroutines too
// (etcd's session keep-alive, a refresh loop): in a stop-the-world pause
// nothing the process does reaches the world. Each client talks to the
// servers only through loopback proxies of its own (hold), one per
// server; a pause holds the client's traffic in both directions until the
// pause ends, and lets it through at once then, as a process woken from a
// pause sends what it had queued.
//
// Why a proxy and not a process per client stopped with SIGSTOP: the
// client stays in this process, so the conductor keeps reading its state
// between steps and the run needs no wire protocol for it; and the proxy
// is also the place for network faults (a partition is a hold that ends
// in a drop). What differs from SIGSTOP: a library's timers still run
// during the hold, so a library may notice during the pause what a frozen
// one would notice right at its end (etcd's client gives up a keep-alive
// that got no answer within the lease's TTL and closes the session's Done
// channel). The caller is frozen either way (the conductor gives it no
// step until the pause ends): it learns nothing earlier.

// proxy forwards TCP connections from a free loopback port to one server,
// and holds every byte in both directions while held.
type proxy struct {
	l        net.Listener
	upstream string

	mu   sync.Mutex
	cond *sync.Cond
	held bool
	// replies: only the server's replies are held (an acquire whose reply
	// the network holds); got is signalled when one came and was held
	replies bool
	got     chan struct{}
	// waiting is how many replies the hold of replies keeps back now
	waiting int
	// drop: the client's requests are dropped and their connection
	// closed, never forwarded (a request lost before it reaches the
	// server, lose=request); dropped is signalled when one was;
	// leakDrop: planted bug: the dropped request is forwarded first
	drop, leakDrop bool
	dropped        chan struct{}
	// cut: a partition: every byte either way is dropped and its
	// connection closed (a request fails at once, as the model's cut-off
	// client's does); leakCut: planted bug: the cut lets requests through
	cut, leakCut bool
	// dropReplies: the server's replies are dropped and their connection
	// closed (a request applied whose reply is lost, lose=reply);
	// droppedReply is signalled when one was
	dropReplies  bool
	droppedReply chan struct{}
	// gated: the client's requests wait (its replies do not), apart from
	// a pause's hold: a Redlock node not yet asked (world_redlock.go,
	// redlockUser), a library's release held in the network
	// (client.holdRelease); gotRequest is signalled when one came and waits
	gated      bool
	gotRequest chan struct{}
	// acks: a replication link's REPLCONF ACKs wait (the replica's other
	// requests do not): a rejoin's, so that the ACKs of every replica
	// rejoining at one tick reach the primary together (replicaSet.rejoin);
	// acksIn is how many wait, or are on their way to the primary
	acks   bool
	acksIn int
	// halfClose: a client that closes its connection closes only the
	// upstream's write side, so the reply to a request it left behind
	// (let through after the close: an abandoned acquire's) still comes
	// back to the proxy
	halfClose bool
	// discard: the run is over (client.close): a request a pause, a crash
	// or a gate still holds is dropped with its connection, never sent,
	// so that nothing of this run lands in the next one on the same
	// databases
	discard bool
	// h2: an HTTP/2 (gRPC: etcd) proxy, frame by frame (h2hold.go): a
	// hold of replies holds the reply of the first request of method
	// holdPath (heldStream on heldConn), not the connection's
	h2         bool
	holdPath   string
	heldConn   *h2Conn
	heldStream uint32
	// leak: planted bug: an HTTP/2 hold lets the held reply through at
	// once (and says it holds it)
	leak  bool
	conns map[net.Conn]bool
	done  bool
	wg    sync.WaitGroup
	// zkPing: the upstream is ZooKeeper, and a hold first sends a ping
	// on each of the client's sessions (see zkPingPacket); talked is the
	// upstream connections the client has sent on, wmu orders the writes
	// to them
	zkPing bool
	talked map[net.Conn]bool
	wmu    sync.Mutex
}

// zkPingPacket is a ZooKeeper ping (length 8, xid -2, opcode 11), as
// go-zookeeper's sendLoop sends one every pingInterval (a third of the
// session timeout, conn.go), whose reply the client ignores (recvLoop:
// xid -2). A session expires a session timeout after the server last
// heard of it, which for a paused client is its last ping, up to a third
// of the timeout before the pause began: the model's session lives a
// session timeout from the pause (zkPaused; a crash: zkCrashed). So a hold
// of a ZooKeeper proxy sends a ping of its own on each session first, as
// if the client's last heartbeat had gone at the pause.
var zkPingPacket = []byte{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11}

func newProxy(upstream string) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("client proxy: no free loopback port: %v", err)
	}
	p := &proxy{l: l, upstream: upstream, conns: map[net.Conn]bool{}, talked: map[net.Conn]bool{}, got: make(chan struct{}, 1), gotRequest: make(chan struct{}, 1), dropped: make(chan struct{}, 1), droppedReply: make(chan struct{}, 1)}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// addr is where the client connects instead of the server.
func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		upstream := p.upstream
		p.mu.Unlock()
		u, err := net.Dial("tcp", upstream)
		if err != nil { // the server is down: the client sees a refused connection
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.done {
			p.mu.Unlock()
			c.Close()
			u.Close()
			return
		}
		p.conns[c], p.conns[u] = true, true
		h2 := p.h2
		p.mu.Unlock()
		p.wg.Add(2)
		if h2 {
			h := newH2Conn(p, c)
			go p.h2Pipe(u, c, func() error { return h.requests(u, c) })
			go p.h2Pipe(c, u, func() error { return h.replies(u) })
			continue
		}
		go p.pipe(u, c, false)
		go p.pipe(c, u, true)
	}
}

// pipe copies from src to dst, waiting while the proxy holds traffic
// (reply: src is the server, and a hold of replies only holds it too).
func (p *proxy) pipe(dst, src net.Conn, reply bool) {
	defer p.wg.Done()
	half := false // the client closed: the upstream keeps its read side (halfClose)
	defer func() {
		if !half {
			p.closePair(dst, src)
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if reply && p.replies && !p.done {
				select { // the server has answered: the request was applied
				case p.got <- struct{}{}:
				default:
				}
			}
			if !reply && p.gated && !p.done {
				select { // the client has sent it: it waits here
				case p.gotRequest <- struct{}{}:
				default:
				}
			}
			kept := reply && p.replies && !p.done
			if kept {
				p.waiting++
			}
			heldRequest := !reply && (p.held || p.gated)
			ack := !reply && p.acks && bytes.Contains(buf[:n], replconfAck)
			if ack {
				p.acksIn++
			}
			for (p.held || reply && p.replies || !reply && p.gated || ack && p.acks) && !p.done {
				p.cond.Wait()
			}
			if kept {
				p.waiting--
			}
			if heldRequest && p.discard { // held when the run ended: dropped
				p.mu.Unlock()
				return
			}
			if p.cut && !p.leakCut && !p.done { // a partition: nothing gets through, either way
				p.mu.Unlock()
				return
			}
			push := pushes(buf[:n])
			if p.zkPing {
				push = zkEvents(buf[:n])
			}
			if (reply && p.dropReplies || !reply && p.drop && p.zkPing) && !p.done && push > 0 {
				// a RESP3 push (an invalidation of a key the client
				// tracks) is no reply, nor a ZooKeeper ping's reply or
				// watch event, nor a ZooKeeper ping (xid -2, the frame
				// layout of a reply's) a request of the caller's: it
				// goes on, the rest is dropped
				p.mu.Unlock()
				if !reply {
					p.wmu.Lock()
				}
				_, werr := dst.Write(buf[:push])
				if !reply {
					p.wmu.Unlock()
				}
				if werr != nil {
					return
				}
				if push == n {
					continue
				}
				copy(buf, buf[push:n])
				n -= push
				p.mu.Lock()
			}
			if reply && p.dropReplies && !p.done && !bytes.HasPrefix(buf[:n], noScript) { // applied, its reply lost: the connection goes with it
				select {
				case p.droppedReply <- struct{}{}:
				default:
				}
				if p.zkPing { // one reply: the client's reconnect (its session's handshake) goes through
					p.dropReplies = false
				}
				p.mu.Unlock()
				return
			}
			if !reply && p.drop && !p.done { // lost on the way: the connection goes with it
				select {
				case p.dropped <- struct{}{}:
				default:
				}
				if p.zkPing { // one request: the client's reconnect (its session's handshake) goes through
					p.drop = false
				}
				leak := p.leakDrop
				p.mu.Unlock()
				if leak {
					p.wmu.Lock()
					dst.Write(buf[:n])
					p.wmu.Unlock()
				}
				return
			}
			done := p.done
			p.mu.Unlock()
			if done {
				return
			}
			if !reply {
				p.wmu.Lock()
			}
			_, werr := dst.Write(buf[:n])
			if !reply {
				p.mu.Lock()
				p.talked[dst] = true
				if ack {
					p.acksIn--
				}
				p.mu.Unlock()
				p.wmu.Unlock()
			}
			if werr != nil {
				return
			}
		}
		if err != nil { // EOF or a closed connection: close both sides
			p.mu.Lock()
			hc := p.halfClose && !reply && !p.done
			p.mu.Unlock()
			if tc, ok := dst.(*net.TCPConn); ok && hc && errors.Is(err, io.EOF) {
				half = tc.CloseWrite() == nil // the reply's pipe closes both once the server has answered
			}
			return
		}
	}
}

// noScript begins Redis's answer to an EVALSHA of a script it has not
// loaded: nothing was applied, and the client sends EVAL next (go-redis's
// Script.Run), so a drop of replies lets it through and drops the EVAL's.
var noScript = []byte("-NOSCRIPT")

// pushes is the length of the whole RESP3 push messages at the start of b
// (">2 invalidate [key]": client-side caching, rueidis), 0 if none.
func pushes(b []byte) int {
	at := 0
	for at < len(b) && b[at] == '>' {
		n := respLen(b[at:], 0)
		if n <= 0 {
			break
		}
		at += n
	}
	return at
}

// respLen is the length of the one whole RESP value at the start of b, or
// 0 when it is cut short or not one respLen reads (depth bounds nesting).
func respLen(b []byte, depth int) int {
	end := bytes.Index(b, []byte("\r\n"))
	if end < 1 || depth > 8 {
		return 0
	}
	head := b[:end]
	n, err := strconv.Atoi(string(head[1:]))
	switch head[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return end + 2
	case '$', '=', '!':
		if err != nil {
			return 0
		}
		if n < 0 {
			return end + 2
		}
		if len(b) < end+2+n+2 {
			return 0
		}
		return end + 2 + n + 2
	case '*', '>', '~', '%', '|':
		if err != nil {
			return 0
		}
		if head[0] == '%' || head[0] == '|' {
			n *= 2
		}
		at := end + 2
		for k := 0; k < n; k++ {
			m := respLen(b[at:], depth+1)
			if m == 0 {
				return 0
			}
			at += m
		}
		return at
	}
	return 0
}

// closePair closes both sides of a proxied connection and forgets them.
func (p *proxy) closePair(dst, src net.Conn) {
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	delete(p.talked, dst)
	p.mu.Unlock()
}

// h2Pipe runs one direction of an HTTP/2 connection (copy) and closes
// both sides when it ends.
func (p *proxy) h2Pipe(dst, src net.Conn, copy func() error) {
	defer p.wg.Done()
	defer p.closePair(dst, src)
	_ = copy() // EOF, a closed connection, or a frame the proxy cannot read: the connection ends
}

// wait waits while a pause holds all traffic; false once the proxy is
// closed.
func (p *proxy) wait() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	waited := p.held
	for p.held && !p.done {
		p.cond.Wait()
	}
	return !p.done && !(waited && p.discard)
}

// discardHeld drops what is held from now on instead of sending it when
// the hold ends (the run is over).
func (p *proxy) discardHeld() {
	p.mu.Lock()
	p.discard = true
	p.mu.Unlock()
}

// hold stops all traffic, in both directions, until resume (a
// ZooKeeper proxy sends a ping of its own first: zkPingPacket).
func (p *proxy) hold() {
	p.mu.Lock()
	p.held = true
	var talked []net.Conn
	if p.zkPing && !p.done {
		for u := range p.talked {
			talked = append(talked, u)
		}
	}
	p.mu.Unlock()
	if len(talked) > 0 {
		p.wmu.Lock() // after a write under way, not inside it
		for _, u := range talked {
			_, _ = u.Write(zkPingPacket) // a closed one is the client's reconnect: nothing to ping
		}
		p.wmu.Unlock()
	}
}

// holdReplies holds the server's replies (not the client's requests)
// until resume.
func (p *proxy) holdReplies() {
	p.mu.Lock()
	p.replies = true
	select { // forget a reply signalled before
	case <-p.got:
	default:
	}
	p.mu.Unlock()
}

// resumeReplies lets held replies through (unless a hold of all traffic
// holds them still).
func (p *proxy) resumeReplies() {
	p.mu.Lock()
	p.replies = false
	p.cond.Broadcast()
	p.mu.Unlock()
	p.flushHeld()
}

// keeps reports whether a hold of replies keeps one back now.
func (p *proxy) keeps() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting > 0
}

// setGate makes the client's requests wait (true) or go (false).
func (p *proxy) setGate(on bool) {
	p.mu.Lock()
	if on {
		select { // forget a request signalled before
		case <-p.gotRequest:
		default:
		}
	}
	p.gated = on
	p.cond.Broadcast()
	p.mu.Unlock()
}

// replconfAck begins a replica's REPLCONF ACK offset, as Redis sends it
// (replicationSendAck).
var replconfAck = []byte("$8\r\nREPLCONF\r\n$3\r\nACK\r\n")

// holdAcks makes a replication link's REPLCONF ACKs wait (true) or go
// (false); the replica's other requests (its handshake, PSYNC) go.
func (p *proxy) holdAcks(on bool) {
	p.mu.Lock()
	p.acks = on
	p.cond.Broadcast()
	p.mu.Unlock()
}

// acksOnTheWay is how many REPLCONF ACKs wait in the link, or are being
// written to the primary.
func (p *proxy) acksOnTheWay() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acksIn
}

// dropRequests drops the client's requests (and closes their
// connections) from now until stopDrops.
func (p *proxy) dropRequests() {
	p.mu.Lock()
	p.drop = true
	select { // forget a drop signalled before
	case <-p.dropped:
	default:
	}
	p.mu.Unlock()
}

// setCut starts (on) or ends a partition: while it lasts every byte
// either way is dropped, its connection closed (and every open one now).
func (p *proxy) setCut(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = on
	if on && !p.leakCut {
		for c := range p.conns {
			c.Close()
		}
	}
}

// dropReplyBack drops the server's replies (and closes their
// connections) from now until stopDrops.
func (p *proxy) dropReplyBack() {
	p.mu.Lock()
	p.dropReplies = true
	select { // forget a drop signalled before
	case <-p.droppedReply:
	default:
	}
	p.mu.Unlock()
}

// stopDrops forwards the client's requests and the server's replies
// again.
func (p *proxy) stopDrops() {
	p.mu.Lock()
	p.drop, p.dropReplies = false, false
	p.mu.Unlock()
}

// resume lets held traffic through.
func (p *proxy) resume() {
	p.mu.Lock()
	p.held = false
	p.cond.Broadcast()
	p.mu.Unlock()
	p.flushHeld()
}

// close stops the proxy and its connections.
func (p *proxy) close() {
	p.mu.Lock()
	p.done = true
	p.cond.Broadcast()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.l.Close()
	p.wg.Wait()
}

// netHold is one client's set of proxies, one per server it talks to.
type netHold struct {
	proxies map[string]*proxy
	order   []string
	store   string // the storage's proxy (newRedisStore), which holdLock leaves open
	row     string // the storage row's proxy when the fence is apart (rowProxyKey), left open too
	leak    bool   // planted bug: its HTTP/2 proxies leak held replies (proxy.leak)
	leakCut bool   // planted bug: a partition lets the client's requests through (proxy.leakCut)
	// leakDrop: planted bug: a drop of requests forwards the request it
	// drops before it cuts the connection (proxy.leakDrop)
	leakDrop bool
	// unheld are the proxies of another process beside the client's (a
	// sidecar renewer's, sidecarProxyKey): a pause of the client does not
	// hold them, a partition of its host cuts them too
	unheld map[string]bool
}

// via returns the address the client uses for upstream, starting a proxy
// for it on first use.
func (h *netHold) via(upstream string) (string, error) { return h.viaKey(upstream, upstream) }

// viaH2 is via for an HTTP/2 server (etcd's gRPC): its proxy reads the
// connection frame by frame, and a hold of replies holds the reply of
// the first request of method holdPath only (h2hold.go).
func (h *netHold) viaH2(upstream, holdPath string) (string, error) {
	addr, err := h.viaKey(upstream, upstream)
	if err != nil {
		return "", err
	}
	p := h.proxies[upstream]
	p.mu.Lock()
	p.h2, p.holdPath, p.leak = true, holdPath, h.leak
	p.mu.Unlock()
	return addr, nil
}

// viaKey is via with a proxy of its own for key: a client's lock traffic
// apart from its storage traffic on the same server (lockProxyKey).
func (h *netHold) viaKey(key, upstream string) (string, error) {
	if h.proxies == nil {
		h.proxies = map[string]*proxy{}
	}
	if p, ok := h.proxies[key]; ok {
		return p.addr(), nil
	}
	p, err := newProxy(upstream)
	if err != nil {
		return "", err
	}
	h.proxies[key] = p
	h.order = append(h.order, key)
	return p.addr(), nil
}

// lockProxyKey names a user's client's lock proxy to the lock's server,
// apart from its storage's proxy when both are one server: a crashed
// client's lock traffic is held while its delayed write still arrives.
func lockProxyKey(upstream string) string { return "lock@" + upstream }

// rowProxyKey names a client's proxy to the storage's row when the
// fencing state is kept apart from it (fenceApart), on the server the
// lock may use too.
func rowProxyKey(upstream string) string { return "row@" + upstream }

// holdLock holds the traffic of every proxy but the storage's.
func (h *netHold) holdLock() {
	for _, u := range h.order {
		if u != h.store && u != h.row {
			h.proxies[u].hold()
		}
	}
}

func (h *netHold) hold() {
	for _, u := range h.order {
		if !h.unheld[u] {
			h.proxies[u].hold()
		}
	}
}

// holds reports whether key's proxy holds all traffic now (a pause).
func (h *netHold) holds(key string) bool {
	p, ok := h.proxies[key]
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// halfCloseOn makes key's proxy keep the upstream's read side open when
// the client closes (proxy.halfClose).
func (h *netHold) halfCloseOn(key string) {
	if p, ok := h.proxies[key]; ok {
		p.mu.Lock()
		p.halfClose = true
		p.mu.Unlock()
	}
}

// abandonProxyKey names the proxy of a client's acquires that their caller
// abandons (abandon=retry|fail), whose gate holds the request.
func abandonProxyKey(upstream string) string { return "abandon@" + upstream }

// sidecarProxyKey names the proxy of a client's sidecar renewer to the
// lock's server (watchdog=sidecar): a process of its own beside the
// client's, whose traffic the client's pauses do not hold.
func sidecarProxyKey(upstream string) string { return "sidecar@" + upstream }

// viaUnheld is viaKey for a proxy that the client's pauses do not hold
// (another process's: sidecarProxyKey).
func (h *netHold) viaUnheld(key, upstream string) (string, error) {
	addr, err := h.viaKey(key, upstream)
	if err != nil {
		return "", err
	}
	if h.unheld == nil {
		h.unheld = map[string]bool{}
	}
	h.unheld[key] = true
	return addr, nil
}

// pingOnHold makes a hold of upstream's proxy send a ZooKeeper ping
// first (zkPingPacket).
func (h *netHold) pingOnHold(upstream string) {
	if p, ok := h.proxies[upstream]; ok {
		p.mu.Lock()
		p.zkPing = true
		p.mu.Unlock()
	}
}

// holdReplies holds the replies of the client's server upstream.
func (h *netHold) holdReplies(upstream string) error {
	p, ok := h.proxies[upstream]
	if !ok {
		return fmt.Errorf("no proxy to %s", upstream)
	}
	p.holdReplies()
	return nil
}

// replyHeld waits until a reply from upstream is held (the server has
// applied the request), or done closes.
func (h *netHold) replyHeld(upstream string, done <-chan struct{}) bool {
	select {
	case <-h.proxies[upstream].got:
		return true
	case <-done:
		return false
	}
}

// requestWaits is signalled when a request to upstream waits at its gate
// (the client has sent it); gate(upstream, true) must have succeeded.
func (h *netHold) requestWaits(upstream string) <-chan struct{} {
	return h.proxies[upstream].gotRequest
}

// keepsReply reports whether upstream's proxy keeps a reply back now (a
// hold of replies, not yet let through).
func (h *netHold) keepsReply(upstream string) bool {
	p, ok := h.proxies[upstream]
	return ok && p.keeps()
}

// dropRequests drops the client's requests to upstream until stopDrops
// (see proxy.dropRequests).
func (h *netHold) dropRequests(upstream string) error {
	p, ok := h.proxies[upstream]
	if !ok {
		return fmt.Errorf("no proxy to %s", upstream)
	}
	p.mu.Lock()
	p.leakDrop = h.leakDrop
	p.mu.Unlock()
	p.dropRequests()
	return nil
}

// dropReplies drops the replies of upstream until stopDrops (see
// proxy.dropReplyBack).
func (h *netHold) dropReplies(upstream string) error {
	p, ok := h.proxies[upstream]
	if !ok {
		return fmt.Errorf("no proxy to %s", upstream)
	}
	p.dropReplyBack()
	return nil
}

// droppedReply reports whether a reply of upstream was dropped since
// dropReplies.
func (h *netHold) droppedReply(upstream string) bool {
	select {
	case <-h.proxies[upstream].droppedReply:
		return true
	default:
		return false
	}
}

// dropped reports whether a request to upstream was dropped since
// dropRequests.
func (h *netHold) dropped(upstream string) bool {
	select {
	case <-h.proxies[upstream].dropped:
		return true
	default:
		return false
	}
}

// gate makes the client's requests to upstream wait (on) or go (see
// proxy.gated).
func (h *netHold) gate(upstream string, on bool) error {
	p, ok := h.proxies[upstream]
	if !ok {
		return fmt.Errorf("no proxy to %s", upstream)
	}
	p.setGate(on)
	return nil
}

// cut starts (on) or ends a partition of the client from upstream (see
// proxy.setCut).
func (h *netHold) cut(upstream string, on bool) error {
	p, ok := h.proxies[upstream]
	if !ok {
		return fmt.Errorf("no proxy to %s", upstream)
	}
	p.mu.Lock()
	p.leakCut = h.leakCut
	p.mu.Unlock()
	p.setCut(on)
	return nil
}

// stopDrops forwards the client's requests to every server again.
func (h *netHold) stopDrops() {
	for _, u := range h.order {
		h.proxies[u].stopDrops()
	}
}

// resumeReplies lets the held replies of every server through.
func (h *netHold) resumeReplies() {
	for _, u := range h.order {
		h.proxies[u].resumeReplies()
	}
}

// discardHeld drops every request the client's proxies hold (close).
func (h *netHold) discardHeld() {
	for _, u := range h.order {
		h.proxies[u].discardHeld()
	}
}

func (h *netHold) resume() {
	for _, u := range h.order {
		h.proxies[u].resume()
	}
}

func (h *netHold) close() {
	for _, u := range h.order {
		h.proxies[u].close()
	}
}
