package reality

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// Holder values besides a client index.
const (
	HolderNone    = -1 // the key does not exist
	HolderUnknown = -2 // the key holds a value no client of the run wrote
	// HolderNotLooked: nobody looked (the step touches neither storage nor
	// the key's owner).
	HolderNotLooked = -3
	// HolderDown: the lock node is down (crashed, not yet restarted): nobody
	// can see its key.
	HolderDown = -4
)

// client is one real client process running its one job. Its program is
// the model's own (model.Client: Next says what it sends, Take how the
// answer changes it): what it does next follows from its own state and
// the real replies, not from the schedule. Each request goes to the real
// servers through lk, the real lock its world made for it. The conductor
// only says when it acts; faults are injected.
type client struct {
	i   int
	d   *model.Design
	clk *clock
	m   model.Client // the client's own state, run by the model's program
	lk  realLock
	obs looker
	net *netHold // the client's proxies: a pause holds its traffic
	// noHold: planted bug: a pause does not hold the traffic
	noHold bool
	// crashLives: planted bug: a crash leaves the library's goroutines running
	crashLives bool
	// noReplyHold: planted bug: a held acquire reply is not held
	noReplyHold bool
	// noReleaseHold: planted bug: a library's held release is not held
	noReleaseHold bool
	// since is when it sent its last acquire, by the real clock
	// (check=validity and Redlock's count measure what is left from it)
	since time.Time
	px    time.Duration // the TTL it sends
	// held is the acquire whose reply the network holds (delay-at=acquire):
	// sent at tick heldAt, answered on held once the reply is let through
	held   chan heldReply
	heldAt uint8
	heldP  uint8 // the hold's ticks
	// orphan: watchdog=sidecar, the worker crashed holding the lock and
	// nobody told its sidecar, which goes on renewing the key at its beat
	// (the next at tick orphanDue); sidecarDies: planted bug: the sidecar
	// stops with the crash
	orphan      bool
	orphanDue   int
	sidecarDies bool
	// stray is the first copy of a resent release still on its way (a
	// release held past the timeout: the model's Client.Stray), sent for
	// real when it arrives, with the value of the job that sent it
	stray *strayRelease
	// abandoned is the answer of an acquire its caller abandoned
	// (abandon=retry|fail), whose request waits in the client's proxy
	// until it lands (the model's Client.Stray)
	abandoned <-chan error
	// strayCall is the answer of the call that sent the first copy of a
	// failed acquire attempt's release (stray), whose request waits in
	// the client's proxy until it lands (attemptReleasePlayed)
	strayCall <-chan error
}

// abandoner is a lock whose acquires a caller can abandon (keyLock): the
// acquire sent into a hold, under its caller's deadline, and its landing.
type abandoner interface {
	abandonAcquire(ctx context.Context, deadline time.Time) (<-chan error, error)
	landAbandoned(wait time.Duration) error
}

// lateSender is a lock whose release a caller can send into a hold and
// give up on at its deadline (keyLock, attemptReleasePlayed): the
// request waits in the client's proxy and lands with landAbandoned.
type lateSender interface {
	abandoner
	sendLateRelease(ctx context.Context, k model.ActionKind, value string, deadline time.Time) (<-chan error, error)
}

// strayRelease is the late first copy of a resent release: its kind and
// the lock value it carries.
type strayRelease struct {
	k     model.ActionKind
	value string
}

// lateReleaser is a lock whose releases the network can hold (keyLock):
// the value a release sent now carries, and a release of that value
// applied later, whatever the client has done since.
type lateReleaser interface {
	lockValue() string
	releaseCopy(ctx context.Context, c *client, k model.ActionKind, value string, ob *Obs) (model.Reply, error)
}

// sidecarLock is a lock whose renewals a sidecar process sends
// (keyLock, watchdog=sidecar): the proxy key of its connection ("":
// none), and whether it is alive and reaches the server.
type sidecarLock interface {
	sidecarUpstream() string
	sidecarPing(ctx context.Context) bool
}

// sidecarUp is the proxy key of the client's sidecar renewer, "" when
// the watchdog is not a sidecar.
func (c *client) sidecarUp() string {
	if sl, ok := c.lk.(sidecarLock); ok {
		return sl.sidecarUpstream()
	}
	return ""
}

// heldReply is the answer to an acquire whose reply was held.
type heldReply struct {
	r    model.Reply
	ob   Obs
	err  error
	took time.Duration // from the call to its return
}

// replyHolder is a lock whose acquire's reply the client's proxy can hold:
// upstream is the server its acquire goes to.
type replyHolder interface{ lockUpstream() string }

// order tells a client to take its next step (or to suffer a fault) at
// tick now.
type order struct {
	a   model.Action
	now int
}

// reply is what the step did.
type reply struct {
	obs   Obs
	err   error
	phase model.Phase
}

func newClient(i int, d *model.Design, clk *clock, lk realLock, obs looker, h *netHold, px time.Duration) *client {
	c := &client{i: i, d: d, clk: clk, lk: lk, obs: obs, net: h, px: px}
	init := model.Init(d).Clients[i]
	c.m.Phase, c.m.Marks = init.Phase, init.Marks // Marks: a reader's role (readers=K)
	return c
}

func (c *client) close() {
	if c.net != nil {
		// what a pause or a crash still holds is dropped: sent now, it
		// would land in the next run on the same databases (seen in a long
		// locktest run: a late DEL of a previous run's client deleted the
		// next run's key, a late SET NX set one)
		c.net.discardHeld()
		c.net.resume() // a client still paused must not hold its own closing
		c.net.resumeReplies()
		defer c.net.close()
	}
	c.lk.close()
}

// run serves orders until the channel closes, the client crashes or ctx
// ends. A pause, or the work between read and write, keeps it from acting
// until a tick (see busy); faults can still strike meanwhile (a GC pause in
// the middle of the work), and its watchdog still renews while it works
// (not while it is paused).
func (c *client) run(ctx context.Context, orders <-chan order, replies chan<- reply) {
	for {
		var o order
		select {
		case <-ctx.Done():
			return
		case got, ok := <-orders:
			if !ok {
				return
			}
			o = got
		}
		var r reply
		if why := c.busy(o); why != "" {
			// reality has left the model's path: the schedule orders a step
			// the real client cannot take yet
			r = reply{obs: Obs{Action: o.a, Took: o.a.Kind, Tick: o.now, Before: HolderNotLooked, Skipped: true, Why: why}}
			r.obs.Start, r.obs.End = c.clk.since(), c.clk.since()
		} else {
			r = c.do(ctx, o)
		}
		r.phase = c.m.Phase
		select {
		case replies <- r:
		case <-ctx.Done():
			return
		}
		if r.err != nil || c.m.Phase == model.PhaseCrashed {
			return
		}
	}
}

// busy says why the client cannot act at the order's tick: it is paused,
// or (for a main step) still working, backing off or its write still in
// the network, until a later tick. "" when it can.
func (c *client) busy(o order) string {
	k := o.a.Kind
	if k.IsFault() || int(c.m.Ready) <= o.now || k == model.ActArrive && c.strayDue(o.now) {
		return "" // (a stray copy arrives whatever its client does)
	}
	if k == model.ActRenew && c.d.Watchdog == model.WatchdogSidecar {
		return "" // its sidecar is not paused with it
	}
	if c.m.Flags&model.FlagPaused != 0 {
		return fmt.Sprintf("still paused until t=%d", c.m.Ready)
	}
	if k != model.ActRenew {
		return fmt.Sprintf("still working until t=%d", c.m.Ready)
	}
	return ""
}

// tick is the start of tick now for the client: a pause that ends now
// lets its held traffic through, and the sidecar of a worker that
// crashed holding the lock renews it when its beat is due (orphanBeat).
func (c *client) tick(ctx context.Context, now int) error {
	if c.m.Tick(uint8(now)) && c.net != nil {
		c.net.resume()
	}
	if c.m.Cut != 0 && int(c.m.Cut) <= now { // the partition heals (model: heal)
		c.m.Cut, c.m.Group = 0, 0
		if rh, ok := c.lk.(replyHolder); ok && c.net != nil {
			_ = c.net.cut(rh.lockUpstream(), false)
			if up := c.sidecarUp(); up != "" {
				_ = c.net.cut(up, false)
			}
		}
	}
	return c.orphanBeat(ctx, now)
}

// orphaned is the client's worker crashed while it believed it held the
// lock: if the key is its own, its sidecar goes on renewing it from tick
// due on (orphanBeat), and ob.Value counts the key, as the model's crash
// counts the keys renewed for ever.
func (c *client) orphaned(ctx context.Context, ob *Obs, due int) error {
	h, err := c.obs.holder(ctx)
	if err != nil {
		return err
	}
	if h == c.i {
		c.orphan, c.orphanDue, ob.Value = true, due, 1
	}
	return nil
}

// orphanBeat is the renewal of a sidecar whose worker crashed holding
// the lock (model: fault_client.go, crash): nobody told it, so it renews
// the key every renew ticks, for ever, as the model's key without
// expiry; a renewal that finds the key not the worker's any more ends
// it. The client's goroutine has ended: the conductor calls this.
func (c *client) orphanBeat(ctx context.Context, now int) error {
	if !c.orphan || now < c.orphanDue {
		return nil
	}
	var ob Obs
	rep, err := c.lk.renew(ctx, c, &ob)
	if err != nil {
		return fmt.Errorf("client %s's sidecar, its worker gone: %v", model.ClientName(c.i), err)
	}
	if ob.Skipped || rep.Result != model.ResOK {
		c.orphan = false
	}
	c.orphanDue = now + c.d.RenewTicks
	return nil
}

// kept reports whether client c crashed holding the lock and its sidecar
// still renews the key (see Obs.Kept): it is alive and reaches the
// server.
func (c *client) kept(ctx context.Context) bool {
	sl, ok := c.lk.(sidecarLock)
	return c.orphan && ok && sl.sidecarPing(ctx)
}

// partition cuts the client off from the lock's server for the design's
// partition ticks (lock=redis, partition=service; model: fault_network.go,
// partition): its proxy drops every byte either way and closes the
// connection, so each lock request fails at once, as the model's does
// (ResUnreachable); its storage stays in reach.
func (c *client) partition(now, g uint8) error {
	rh, ok := c.lk.(replyHolder)
	if !ok || c.net == nil || c.d.Lock != model.LockRedis || c.d.Partition != model.PartitionService {
		return fmt.Errorf("client %s: a partition is played for real on one Redis node, from the lock service (partition=service) only", model.ClientName(c.i))
	}
	c.m.Cut, c.m.Group = now+uint8(c.d.PartitionTicks), g+1
	if up := c.sidecarUp(); up != "" { // the sidecar beside it is cut off with it (model: keyRenew's reach)
		if err := c.net.cut(up, true); err != nil {
			return err
		}
	}
	return c.net.cut(rh.lockUpstream(), true)
}

// cutOff reports whether a lock request's answer while the client is cut
// off is the model's unreachable one: an error (not a failure of the
// run), or a library's "not done" without one (rueidislock's Unlock
// reports false, not the connection's error): the request cannot have
// reached the server.
func (c *client) cutOff(k model.ActionKind, r model.Reply, err error) bool {
	if c.m.Cut == 0 || isDown(err) || err == nil && r.Result != model.ResNoop && r.Result != model.ResRefused {
		return false
	}
	switch k {
	case model.ActAcquire, model.ActIncr, model.ActExpire, model.ActRelease, model.ActDel, model.ActRenew:
		return true
	}
	return false
}

func (c *client) do(ctx context.Context, o order) reply {
	r := reply{obs: Obs{Action: o.a, Took: o.a.Kind, Tick: o.now, Before: HolderNotLooked}}
	r.obs.Start = c.clk.since()
	now := uint8(o.now)
	switch o.a.Kind {
	case model.ActPause:
		// a stop-the-world pause: the process is frozen, it sends nothing,
		// its library's goroutines neither (its traffic is held until the
		// conductor resumes it at the start of the tick its pause ends)
		c.m.Pause(now, o.a.Arg)
		if c.net != nil && !c.noHold {
			c.net.hold()
		}
	case model.ActSlow:
		c.m.Slow()
	case model.ActCrash:
		// the process dies: what its library runs by itself dies with it
		if !c.crashLives {
			c.lk.crashed(c)
		}
		held, due := c.m.Believes(), int(c.m.Timer)
		c.m.Crash()
		if held && c.sidecarUp() != "" && !c.sidecarDies { // nobody tells its sidecar
			r.err = c.orphaned(ctx, &r.obs, max(due, int(now)+1))
		}
	case model.ActDelay:
		if c.m.Next(c.d) == model.ActAcquire && c.d.Abandon != model.AbandonNone && c.d.TimeoutTicks > 0 && int(o.a.Arg) > c.d.TimeoutTicks {
			r.err = c.abandonAcquire(ctx, &r.obs, now, o.a.Arg)
			break
		}
		if c.m.Next(c.d) == model.ActAcquire {
			r.err = c.holdAcquire(ctx, &r.obs, now, o.a.Arg)
			break
		}
		if k := c.m.Next(c.d); k == model.ActRelease || k == model.ActDel {
			r.err = c.delayRelease(ctx, &r.obs, k, now, o.a.Arg)
			break
		}
		// the write is sent, and the network holds it until it arrives
		r.obs.Held = model.ActWrite
		tok := c.token(false)
		r.obs.Value, r.obs.Token = int(c.m.Read)+1, tok
		c.m.DelayWrite(now, o.a.Arg)
	case model.ActArrive:
		if c.strayDue(o.now) && c.abandoned != nil {
			r.err = c.lateAcquire(ctx, &r.obs)
			break
		}
		if c.strayDue(o.now) {
			r.err = c.strayArrive(ctx, &r.obs)
			break
		}
		r.err = c.program(ctx, &r.obs, now)
	case model.ActLose:
		r.err = c.loseRequest(ctx, &r.obs, now)
	case model.ActPartition:
		r.err = c.partition(now, o.a.Arg)
	case model.ActRenew:
		var rep model.Reply
		if rep, r.err = c.lk.renew(ctx, c, &r.obs); c.cutOff(model.ActRenew, rep, r.err) {
			r.obs.Result = model.ResUnreachable
			rep, r.err = model.Reply{Result: model.ResUnreachable}, nil
		}
		if r.err == nil && !r.obs.Skipped {
			c.m.Take(c.d, model.ActRenew, rep, now)
		}
	default:
		r.err = c.program(ctx, &r.obs, now)
	}
	r.obs.End = c.clk.since()
	return r
}

// token is the token the client sends with a read or a write, as the
// design's fence says (0: none).
func (c *client) token(read bool) int {
	if c.d.Fence == model.FenceRW || (c.d.Fence == model.FenceWrite && !read) {
		return int(c.m.Token)
	}
	return 0
}

// program takes the client's next step of its job (model.Client.Next)
// against the real servers, records what happened in ob, and hands the
// answer to the model's program (model.Client.Take).
func (c *client) program(ctx context.Context, ob *Obs, now uint8) error {
	d := c.d
	if !c.m.Live() { // done or crashed: nothing left to do
		ob.Took, ob.Skipped, ob.Why = ob.Action.Kind, true, "its job is over"
		return nil
	}
	k := c.m.Next(d)
	ob.Took = k
	stale := ob.Action.Kind == model.ActStaleRead && k == model.ActRead // served by the storage's replica
	if stale {
		ob.Took = model.ActStaleRead
	}
	if k == model.ActArrive && c.m.Flags&model.FlagReply != 0 {
		return c.arriveAcquire(ctx, ob, now)
	}
	if k == model.ActArrive && c.m.Flags&model.FlagInFlight != 0 && c.m.Phase == model.PhaseRelease && c.held != nil {
		return c.arriveRelease(ctx, ob, now) // its call waited in the network (holdRelease)
	}
	if k == model.ActArrive && c.m.Flags&model.FlagInFlight != 0 && (c.m.Phase == model.PhaseRelease || c.m.Phase == model.PhaseDel) {
		// a held release reaches the server now (delayRelease)
		c.m.Flags &^= model.FlagInFlight
		k = model.ActRelease
		if c.m.Phase == model.PhaseDel {
			k = model.ActDel
		}
		ob.Held = k
	}
	c.m.Flags |= model.FlagStarted
	var r model.Reply
	var err error
	switch k {
	case model.ActCheck:
		if u, ok := c.userLock(); ok { // the user's client measures what is left itself
			left, told, err := u.validity(ctx)
			if err != nil {
				return err
			}
			ob.Told = told
			r = c.checkLeft(ob, left)
			break
		}
		r = c.check(ob)
	case model.ActIncr:
		r, err = c.lk.incr(ctx, ob)
	case model.ActAcquire:
		if d.Lock != model.LockRedlock {
			c.since = time.Now()
		} else if c.m.Asked == 0 {
			c.since = time.Now()
		}
		r, err = c.lk.acquire(ctx, c, ob)
		if err == nil && !ob.Skipped {
			c.m.Flags &^= model.FlagWaiting // awake: it asked
		}
	case model.ActExpire:
		r, err = c.lk.expire(ctx, ob)
	case model.ActRead:
		if err := c.lookBefore(ctx, ob); err != nil {
			return err
		}
		tok := c.token(true)
		ob.Token = tok
		if sr, ok := c.lk.(staleReader); ok && stale {
			r, err = sr.staleRead(ctx, c, tok, ob)
			break
		}
		if stale {
			return fmt.Errorf("client %s: its storage has no replica to read from (stale-reads are played on the Redis storage only)", model.ClientName(c.i))
		}
		r, err = c.lk.read(ctx, c, tok, ob)
	case model.ActWrite, model.ActArrive:
		if err := c.lookBefore(ctx, ob); err != nil {
			return err
		}
		r, err = c.lk.write(ctx, c, int(c.m.Read)+1, c.token(false), int(c.m.Version), ob)
		if k == model.ActArrive {
			ob.Held = model.ActWrite
		}
		k = model.ActWrite
	case model.ActApply:
		// fence-check=two-step: the write after its token check passed
		if err := c.lookBefore(ctx, ob); err != nil {
			return err
		}
		ap, ok := c.lk.(applier)
		if !ok {
			return fmt.Errorf("client %s: its storage has no apply step (fence-check=two-step is played on the Redis storage only)", model.ClientName(c.i))
		}
		r, err = ap.apply(ctx, c, int(c.m.Read)+1, c.token(false), ob)
	case model.ActRelease, model.ActDel:
		r, err = c.lk.release(ctx, c, k, ob)
	case model.ActAck:
		wl, ok := c.lk.(waiter)
		if !ok {
			return fmt.Errorf("client %s: its lock sends no WAIT", model.ClientName(c.i))
		}
		r, err = wl.ack(ctx, c, now, ob)
	}
	if c.cutOff(k, r, err) && !ob.Skipped {
		r, err = model.Reply{Result: model.ResUnreachable}, nil
		ob.Result = model.ResUnreachable
	}
	if err != nil || ob.Skipped {
		return err
	}
	before := c.m.Phase
	t := c.m.Take(d, k, r, now)
	if c.m.Phase == model.PhaseAck && before != model.PhaseAck { // the acquire's last write is applied: WAIT
		wl, ok := c.lk.(waiter)
		if !ok {
			return fmt.Errorf("client %s: its lock sends no WAIT", model.ClientName(c.i))
		}
		return wl.sendWait(ctx, c)
	}
	if k == model.ActAcquire && d.Lock == model.LockRedlock {
		ob.Value = int(t.Votes)
		ob.Won = t.Flags&model.EvWon != 0
		if rl, ok := c.lk.(*redlockLock); ok { // a user's client: its own word on the attempt
			if won, ok := rl.userWon(ob.Node); ok {
				ob.Won = won
			}
		}
		if t.Unlock != 0 {
			return c.lk.unlock(ctx, c, t.Unlock)
		}
	}
	return nil
}

// holdAcquire is an acquire whose reply the network holds for p ticks
// (delay-at=acquire on a single-key lock): the client sends it at once,
// the server applies it, and the client's proxy holds the reply until
// tick now+p, so that the TTL runs while the client does not know it
// holds the lock (model: fault_network.go, delay). The client, a library
// included, is left waiting in its call; the conductor goes on once the
// server has answered, and the observer looks at the key.
func (c *client) holdAcquire(ctx context.Context, ob *Obs, now, p uint8) error {
	rh, ok := c.lk.(replyHolder)
	if !ok || c.net == nil {
		return fmt.Errorf("client %s: its lock cannot have its acquire reply held", model.ClientName(c.i))
	}
	up := rh.lockUpstream()
	if !c.noReplyHold {
		if err := c.net.holdReplies(up); err != nil {
			return err
		}
	}
	ob.Held = model.ActAcquire
	c.since = time.Now()
	c.held, c.heldAt, c.heldP = make(chan heldReply, 1), now, p
	held := context.WithValue(ctx, heldKey{}, time.Duration(p)*c.clk.tick)
	go func(ch chan<- heldReply) {
		var h heldReply
		h.ob.Action, h.ob.Took = ob.Action, model.ActAcquire
		sent := time.Now()
		h.r, h.err = c.lk.acquire(held, c, &h.ob)
		h.took = time.Since(sent)
		ch <- h
	}(c.held)
	wait, cancel := context.WithTimeout(ctx, c.clk.tick)
	defer cancel()
	if c.noReplyHold { // the reply comes back now: keep it for the arrive step
		select {
		case h := <-c.held:
			c.held <- h
		case <-wait.Done():
			return fmt.Errorf("client %s: its acquire got no reply within a tick", model.ClientName(c.i))
		}
	} else if !c.net.replyHeld(up, wait.Done()) {
		return fmt.Errorf("client %s: its acquire got no reply from %s within a tick", model.ClientName(c.i), up)
	}
	c.m.Flags |= model.FlagStarted | model.FlagInFlight | model.FlagReply
	c.m.Ready = now + p
	return nil
}

// delayRelease is a release of kind k that the network holds for p ticks
// (delay-at=release on one Redis node; model: fault_network.go, delay):
// nothing reaches the server now. Held no longer than the client's
// timeout (or with none), it reaches the server at the client's arrive
// step, as the model's does. Held longer, the client gives up waiting at
// its timeout and sends the release again (its next step), and the first
// copy, carrying the value of the job that sent it, lands at its own
// arrive step whatever the client has done since (strayArrive): with a
// value per process it finds the same value in the client's next lock.
func (c *client) delayRelease(ctx context.Context, ob *Obs, k model.ActionKind, now, p uint8) error {
	lr, ok := c.lk.(lateReleaser)
	if !ok {
		return fmt.Errorf("client %s: a held release is played on one Redis node only", model.ClientName(c.i))
	}
	ob.Held = k
	if c.d.TimeoutTicks > 0 && int(p) > c.d.TimeoutTicks {
		ob.Token, ob.Value = c.token(false), int(c.m.Read)+1 // what the model's delay tells of the request
		c.stray = &strayRelease{k: k, value: lr.lockValue()}
		if ls, ok := c.lk.(lateSender); ok && attemptReleasePlayed(c.d) && c.lib() == nil {
			// a failed attempt's release: sent now, held in the network,
			// given up on at the caller's timeout (lateRelease lands it)
			done, err := ls.sendLateRelease(ctx, k, c.stray.value, c.clk.start(int(now)+c.d.TimeoutTicks))
			if err != nil {
				return err
			}
			c.strayCall = done
		}
		c.m.SendResent(c.d, k, now, p)
		return nil
	}
	if c.lib() != nil { // a library's or a user's call: it waits in the network (holdRelease)
		return c.holdRelease(ctx, ob, now, p)
	}
	c.m.Flags |= model.FlagInFlight
	c.m.Ready = now + p
	return nil
}

// holdRelease is a library's or a user's release that the network holds
// for p ticks, for real: the client calls its Release now, and its proxy
// to the lock's server keeps the request back (its gate) until the arrive
// step, when it lands and deletes what the key holds then. A client that
// decides by its own clock whether to send, or what (a plain DEL while its
// lock seems valid), decides at the send, as it would on a slow network;
// it waits in its call meanwhile. The run goes on once the request waits
// at the gate, or once the call returned without sending one (its answer
// is told at the arrive step). A call that has done neither within a
// tick could not be played as scheduled: the run is void (played again
// with a longer tick), not failed.
func (c *client) holdRelease(ctx context.Context, ob *Obs, now, p uint8) error {
	rh, ok := c.lk.(replyHolder)
	if !ok || c.net == nil {
		return fmt.Errorf("client %s: its lock cannot have its release held", model.ClientName(c.i))
	}
	up := rh.lockUpstream()
	if err := c.net.gate(up, !c.noReleaseHold); err != nil {
		return err
	}
	held, returned := make(chan heldReply, 1), make(chan struct{})
	c.held, c.heldAt, c.heldP = held, now, p
	hctx := context.WithValue(ctx, heldKey{}, time.Duration(p)*c.clk.tick)
	go func() {
		var h heldReply
		h.ob.Action, h.ob.Took = ob.Action, model.ActRelease
		sent := time.Now()
		h.r, h.err = c.lk.release(hctx, c, model.ActRelease, &h.ob)
		h.took = time.Since(sent)
		held <- h
		close(returned)
	}()
	wait, cancel := context.WithTimeout(ctx, c.clk.tick)
	defer cancel()
	var request <-chan struct{}
	if !c.noReleaseHold { // planted: it lands now, and its call returns (its reply is kept for the arrive step)
		request = c.net.requestWaits(up)
	}
	select {
	case <-request:
	case <-returned:
	case <-wait.Done():
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("client %s: its held release: %v", model.ClientName(c.i), err)
		}
		ob.Void = true // its request reached its proxy within no tick
	}
	c.m.Flags |= model.FlagInFlight
	c.m.Ready = now + p
	return nil
}

// arriveRelease is the release holdRelease held landing: the observer
// looks at the key right before (what it finds is what the key holds
// now, not at the send), the gate lets the request through, and the
// client takes the reply as the model's does at its arrive. A call that
// failed, while its request was held (a timeout of its own, shorter than
// the hold) or as it landed, is a HeldError.
func (c *client) arriveRelease(ctx context.Context, ob *Obs, now uint8) error {
	ob.Held = model.ActRelease
	select {
	case h := <-c.held:
		if h.err != nil {
			return &HeldError{Call: "Release", Client: c.i, Ticks: int(c.heldP), Tick: c.clk.tick, Took: h.took, Err: h.err}
		}
		c.held <- h
	default:
	}
	if err := c.lookBefore(ctx, ob); err != nil {
		return err
	}
	rh, _ := c.lk.(replyHolder)
	if err := c.net.gate(rh.lockUpstream(), false); err != nil {
		return err
	}
	var h heldReply
	select {
	case h = <-c.held:
	case <-ctx.Done():
		return fmt.Errorf("client %s: its held release never returned", model.ClientName(c.i))
	}
	c.held = nil
	if h.err != nil {
		return &HeldError{Call: "Release", Client: c.i, Ticks: int(c.heldP), Tick: c.clk.tick, Took: h.took, Err: h.err}
	}
	ob.Told, ob.Result, ob.Notified = h.ob.Told, h.ob.Result, h.ob.Notified
	ob.RemovedOther = h.ob.Result == model.ResOK && ob.Before != c.i
	c.m.Flags &^= model.FlagInFlight
	c.m.Take(c.d, model.ActRelease, h.r, now)
	return nil
}

// strayDue reports whether the first copy of the client's resent release
// arrives at tick now (model: strayDue).
func (c *client) strayDue(now int) bool {
	return (c.stray != nil || c.abandoned != nil) && c.m.Stray != 0 && int(c.m.Stray) <= now && c.m.Flags&model.FlagInFlight == 0 && c.m.Phase != model.PhaseArrive
}

// strayArrive is the late first copy of the client's resent release
// reaching the server now: check-and-delete of the value it carries (or
// a plain DEL), whatever the client holds now (model: strayArrive).
func (c *client) strayArrive(ctx context.Context, ob *Obs) error {
	lr, ok := c.lk.(lateReleaser)
	if !ok {
		return fmt.Errorf("client %s: a late release is played on one Redis node only", model.ClientName(c.i))
	}
	ob.Took, ob.Held = model.ActArrive, model.ActRelease
	if c.strayCall != nil {
		return c.lateRelease(ctx, ob)
	}
	if _, err := lr.releaseCopy(ctx, c, c.stray.k, c.stray.value, ob); err != nil {
		return err
	}
	c.stray = nil
	c.m.StrayArrived()
	return nil
}

// lateRelease is the first copy of a failed acquire attempt's release
// landing now (attemptReleasePlayed; model: strayArrive): its call gave
// up at the caller's timeout (it must have failed by now: else the
// network did not hold it), the proxy lets the request through, and the
// server applies it to the key as it is now: check-and-delete of the
// failed attempt's value (or a plain DEL). Its reply stays in the proxy
// (its caller has gone): what it did is told by the looks right before
// and after it, the key the client's before and not after.
func (c *client) lateRelease(ctx context.Context, ob *Obs) error {
	ls, ok := c.lk.(lateSender)
	if !ok {
		return fmt.Errorf("client %s: a failed attempt's late release is played on one Redis node only", model.ClientName(c.i))
	}
	wait, cancel := context.WithTimeout(ctx, c.clk.tick/2) // its deadline passed a tick ago at least
	defer cancel()
	var err error
	select {
	case err = <-c.strayCall:
	case <-wait.Done():
		return fmt.Errorf("client %s: its failed attempt's release call has not given up by its arrive step, past its deadline", model.ClientName(c.i))
	}
	c.strayCall, c.stray = nil, nil
	if err == nil { // answered: the network let it through when it was sent
		ob.Skipped, ob.Why = true, "its failed attempt's release was answered when it was sent: the network did not hold it"
		c.m.StrayArrived()
		return nil
	}
	ob.Told = "release → " + clipTold(err.Error())
	if err := c.lookBefore(ctx, ob); err != nil {
		return err
	}
	if err := ls.landAbandoned(c.clk.tick); err != nil {
		return err
	}
	after, err := c.obs.holder(ctx)
	if err != nil {
		return err
	}
	n := int64(0)
	if ob.Before >= 0 && after != ob.Before {
		n = 1
	}
	deletedReply(c.d, c, ob, n)
	c.m.StrayArrived()
	return nil
}

// abandonAcquire is an acquire the network holds for p ticks, longer than
// the client's timeout, whose caller abandons it (abandon=retry|fail;
// model: fault_network.go, abandon): the client sends its SET NX, which
// waits in its proxy, not applied; at the start of tick now+timeout the
// call's deadline passes and go-redis gives up on it, while the command
// is still on its way; the client tries again then (retry) or ends its
// job without the lock (fail), as the model's (Client.Abandon). The
// request lands at the client's arrive step (lateAcquire).
func (c *client) abandonAcquire(ctx context.Context, ob *Obs, now, p uint8) error {
	ab, ok := c.lk.(abandoner)
	if !ok {
		return fmt.Errorf("client %s: an abandoned acquire is played on one Redis node only", model.ClientName(c.i))
	}
	done, err := ab.abandonAcquire(ctx, c.clk.start(int(now)+c.d.TimeoutTicks))
	if err != nil {
		return err
	}
	ob.Held, c.abandoned = model.ActAcquire, done
	c.m.Abandon(c.d, now, p)
	return nil
}

// lateAcquire is the abandoned acquire landing now (model: lateAcquire):
// its caller gave up on it at its deadline (the call must have failed by
// now: else the network did not hold it), the proxy lets the SET NX
// through, and the server applies it to the key as it is now: it takes a
// free key for a client that does not know it holds it. Result says
// whether it did (the key is the client's after, and was not before).
func (c *client) lateAcquire(ctx context.Context, ob *Obs) error {
	ab, ok := c.lk.(abandoner)
	if !ok {
		return fmt.Errorf("client %s: an abandoned acquire is played on one Redis node only", model.ClientName(c.i))
	}
	ob.Took, ob.Held = model.ActArrive, model.ActAcquire
	wait, cancel := context.WithTimeout(ctx, c.clk.tick/2) // its deadline passed a tick ago at least
	defer cancel()
	var err error
	select {
	case err = <-c.abandoned:
	case <-wait.Done():
		return fmt.Errorf("client %s: its abandoned acquire's call has not given up by its arrive step, past its deadline", model.ClientName(c.i))
	}
	c.abandoned = nil
	if err == nil { // answered: the network let it through at once (planted bug leakAbandoned)
		ob.Skipped, ob.Why = true, "its abandoned acquire was answered when it was sent: the network did not hold it"
		c.m.StrayArrived()
		return nil
	}
	ob.Told = "SET NX → " + clipTold(err.Error())
	before, err := c.obs.holder(ctx)
	if err != nil {
		return err
	}
	if err := ab.landAbandoned(c.clk.tick); err != nil {
		return err
	}
	after, err := c.obs.holder(ctx)
	if err != nil {
		return err
	}
	ob.Result = model.ResRefused
	if after == c.i && before != c.i {
		ob.Result = model.ResOK
	}
	c.m.StrayArrived()
	return nil
}

// loseRequest is a release lost before it reaches the lock's server
// (lose=request, lose-at=release; model: fault_network.go, lose): the
// client sends it, its proxy drops the request and closes the
// connection, so nothing is applied and the client's call fails; the
// client then goes on as the model's does (model.Client.LoseRequest): it
// sends the release again after its timeout (release-fail=retry), or
// takes it as done and forgets its lock (release-fail=forget). A client
// that clears its lock value with the failed call has nothing left to
// send when it retries, which is what the schedule shows. A ZooKeeper
// create lost on its way, or its reply, is zookeeper_lost.go's.
func (c *client) loseRequest(ctx context.Context, ob *Obs, now uint8) error {
	k := c.m.Next(c.d)
	if cl, ok := c.lk.(createLoser); ok && c.net != nil && k == model.ActAcquire && c.d.Lose == model.LoseReply {
		return cl.loseCreate(ctx, c, ob, now) // a ZooKeeper create's reply (zookeeper_lost.go)
	}
	if cl, ok := c.lk.(createRequestLoser); ok && c.net != nil && k == model.ActAcquire && c.d.Lose == model.LoseRequest {
		return cl.loseCreateRequest(ctx, c, ob, now) // a ZooKeeper create lost on its way (zookeeper_lost.go)
	}
	rh, ok := c.lk.(replyHolder)
	if !ok || c.net == nil || k != model.ActRelease {
		return fmt.Errorf("client %s: a lost %s is not played for real (a release lost on the way to one Redis node is, or its reply, and a ZooKeeper create of lockcheck's own client or its reply)", model.ClientName(c.i), k)
	}
	up := rh.lockUpstream()
	if c.d.Lose == model.LoseReply {
		return c.loseReply(ctx, ob, now, k, up)
	}
	if err := c.net.dropRequests(up); err != nil {
		return err
	}
	shadow := Obs{Action: ob.Action, Took: k}
	_, err := c.lk.release(ctx, c, k, &shadow)
	c.net.stopDrops()
	if !c.net.dropped(up) {
		return fmt.Errorf("client %s: its release never reached its proxy, which was to drop it (%v)", model.ClientName(c.i), err)
	}
	if err == nil { // a client that reports success for a release that went nowhere
		ob.Told = shadow.Told + " (for a release that never reached the server)"
	} else {
		ob.Told = "Release → error: " + clipTold(err.Error())
	}
	ob.Before, ob.Result = shadow.Before, model.ResNoop
	c.m.LoseRequest(c.d, k, now)
	return nil
}

// loseReply is a release applied whose reply is lost (lose=reply,
// lose-at=release; model: fault_network.go, lose): the client's proxy
// forwards the request, drops the server's reply and closes the
// connection, so the release is done and the client's call fails. What
// it did follows from the look right before it (deleted: the key was
// the client's, or with a plain DEL anyone's); the client then goes on
// as it would after a lost request: it sends the release again after
// its timeout, or forgets its lock (model.Client.LoseRequest).
func (c *client) loseReply(ctx context.Context, ob *Obs, now uint8, k model.ActionKind, up string) error {
	if err := c.net.dropReplies(up); err != nil {
		return err
	}
	shadow := Obs{Action: ob.Action, Took: k}
	_, err := c.lk.release(ctx, c, k, &shadow)
	c.net.stopDrops()
	if !c.net.droppedReply(up) {
		return fmt.Errorf("client %s: its release got a reply, which its proxy was to drop (%v)", model.ClientName(c.i), err)
	}
	if err == nil { // a client that reports success for a release it heard nothing of
		ob.Told = shadow.Told + " (for a release whose reply was lost)"
	} else {
		ob.Told = "Release → error: " + clipTold(err.Error())
	}
	ob.Before, ob.Result = shadow.Before, model.ResNoop
	if shadow.Before >= 0 && (shadow.Before == c.i || c.d.Release == model.ReleaseDel) {
		ob.Result, ob.RemovedOther = model.ResOK, shadow.Before != c.i
	}
	if shadow.Before == c.i { // its own key must be gone: else the reply dropped was another request's
		h, err := c.obs.holder(ctx)
		if err != nil {
			return err
		}
		// a library's own traffic on the lock's connection (rueidislock's
		// renewal, timed by itself) lost it, and with it the connection
		// the release was to go on: the run is void, played again at a
		// longer tick
		ob.Void = h == c.i
	}
	c.m.LoseRequest(c.d, k, now)
	return nil
}

// arriveAcquire is the held acquire reply arriving: the client learns
// what the server did p ticks ago and takes it as the model's client does
// (the reply taken at the tick of the send, belief and renewal timer from
// now).
func (c *client) arriveAcquire(ctx context.Context, ob *Obs, now uint8) error {
	ob.Held = model.ActAcquire
	if !c.noReplyHold {
		select { // a call that returned while its reply was held
		case h := <-c.held:
			rh, _ := c.lk.(replyHolder)
			if rh == nil || !c.net.keepsReply(rh.lockUpstream()) { // the network did not hold it
				return fmt.Errorf("client %s: its held acquire reply came back before its arrive step: the proxy did not hold it", model.ClientName(c.i))
			}
			// the proxy keeps the reply still: the client gave up waiting
			// for it by itself (a timeout of its own, as rueidislock's),
			// and what it answered is its answer, told now
			c.held <- h
		default:
		}
	}
	// the held reply arrives now, in the arrive step, not at the start of
	// its tick: a library that acts on the reply by itself (redsync
	// deletes a key whose validity is gone) must not race the tick's look
	c.net.resumeReplies()
	var h heldReply
	select {
	case h = <-c.held:
	case <-ctx.Done():
		return fmt.Errorf("client %s: its held acquire never returned", model.ClientName(c.i))
	}
	c.held = nil
	if h.err != nil {
		return &HeldError{Call: "Acquire", Client: c.i, Ticks: int(c.heldP), Tick: c.clk.tick, Took: h.took, Err: h.err}
	}
	ob.Told, ob.Result = h.ob.Told, h.r.Result
	c.m.Flags &^= model.FlagInFlight | model.FlagReply
	vl, _ := c.lib().(validityLib)
	// granted, then given up by the library for want of validity: the
	// model's check=acquire give-up (with another check the library did
	// what the design's client does not: its refusal stands, and shows)
	gone := vl != nil && h.r.Result != model.ResOK && vl.validityGone() && c.d.Check == model.CheckAcquire
	granted := h.r.Result == model.ResOK || gone
	if granted || h.r.Result == model.ResRefused {
		c.m.Flags &^= model.FlagWaiting
		r := h.r
		if granted {
			r.Result = model.ResOK
		}
		timer := c.m.Timer                           // a session's keep-alive that renewed the key while the reply was held
		c.m.Take(c.d, model.ActAcquire, r, c.heldAt) // the server's answer, at the send
		if c.d.Watchdog == model.WatchdogSession && timer != 0 {
			c.m.Timer = timer // it keeps its own beat (the model's delay took the answer before the renewals)
		}
		if int(c.m.Ready) <= int(now) { // its poll's back-off from the send is over
			c.m.Ready = 0
		}
	}
	if !granted {
		ob.Result = model.ResRefused
		return nil
	}
	// the reply itself, now, as the model's client takes it: it believes
	// only now, and with check=acquire only if validity is left, measured
	// from the send (model.Client.TakeAcquireReply; the model's arrive)
	c.m.Flags &^= model.FlagBelieves
	left := 0
	switch {
	case gone:
	case vl != nil:
		left = c.ticksLeft(vl.validityLeft())
	default:
		left = c.ticksLeft(c.left())
	}
	t := c.m.TakeAcquireReply(c.d, left, now)
	ob.Result = model.ResOK
	if c.d.Check == model.CheckAcquire {
		ob.Value = max(left, 0)
	}
	if t.Flags&model.EvGiveUp != 0 {
		ob.Result = model.ResRefused
		if c.m.Phase == model.PhaseRelease { // the attempt's release is a step of its own, next (attemptReleasePlayed)
			return nil
		}
		if kl, ok := c.lk.(*keyLock); ok && kl.lib == nil { // a library has deleted its key itself
			return kl.dropOwn(ctx)
		}
	}
	return nil
}

// lib is the client's lock library (nil for the reference client).
func (c *client) lib() lockAPI {
	if kl, ok := c.lk.(*keyLock); ok {
		return kl.lib
	}
	return nil
}

// ticksLeft is left, a validity by the real clock, in whole ticks counted
// the model's way (see checkLeft); 0 when none is left.
func (c *client) ticksLeft(left time.Duration) int {
	if left <= 0 {
		return 0
	}
	return int((left + c.clk.tick) / c.clk.tick)
}

// check is check=validity: the client computes how much of its lock is
// left by its own clock, TTL − (now − when it asked) − drift, and gives the
// job up if nothing is. Value is what is left in whole ticks (0: none).
func (c *client) check(ob *Obs) model.Reply { return c.checkLeft(ob, c.left()) }

// checkLeft is the check's answer when left is what is left of the lock.
func (c *client) checkLeft(ob *Obs, left time.Duration) model.Reply {
	if left <= 0 {
		ob.Result = model.ResNoop
		return model.Reply{Result: model.ResNoop}
	}
	// the PX is half a tick short of TTL ticks (see TTL), and the client
	// asked within the first half of its tick: left + ½ tick, rounded, is
	// what remains in whole ticks, counted the model's way
	ob.Result, ob.Value = model.ResOK, c.ticksLeft(left)
	return model.Reply{Result: model.ResOK, Left: ob.Value}
}

// left is the validity the client has left by the real clock: PX − time
// since it sent its acquire − drift.
func (c *client) left() time.Duration {
	return c.px - time.Since(c.since) - time.Duration(c.d.DriftTicks)*c.clk.tick
}

// applier is a storage with fence-check=two-step's second request (the
// Redis storage, redisStore.apply): the write after its token check.
type applier interface {
	apply(ctx context.Context, c *client, v, tok int, ob *Obs) (model.Reply, error)
}

// staleReader is a lock whose storage has a replica that serves a read
// (stale-reads: the Redis storage, redisStore.staleRead).
type staleReader interface {
	staleRead(ctx context.Context, c *client, tok int, ob *Obs) (model.Reply, error)
}

// lookBefore asks the server who holds the key, right before the client
// touches storage or releases (an observer's GET: the client itself does not
// look, it believes). A storage access while the key is not the client's is
// the seed's ✗.
func (c *client) lookBefore(ctx context.Context, ob *Obs) error {
	h, err := c.obs.holder(ctx)
	if err != nil {
		return err
	}
	ob.Before = h
	if ob.Took == model.ActRead || ob.Took == model.ActStaleRead || ob.Took == model.ActWrite || ob.Took == model.ActApply || ob.Took == model.ActArrive && ob.Held != model.ActRelease && ob.Held != model.ActDel {
		ob.Unsafe = h != c.i
		if ro, ok := c.obs.(*redlockObserver); ok { // the model's rule: down nodes count
			held, err := ro.holds(ctx, c.i)
			if err != nil {
				return err
			}
			ob.Unsafe = !held
		}
	}
	if c.d.Lock == model.LockEtcdMutex && c.i < c.d.Readers && (ob.Took == model.ActRead || ob.Took == model.ActWrite) {
		// a reader (recipe.RWMutex): unsafe only while a writer's key is
		// the first, not beside another reader (the model's readSafe)
		ob.Unsafe = h != HolderNone && h >= c.d.Readers
	}
	return nil
}

// looker is the observer: it asks the lock service who holds the key.
type looker interface {
	// holder is who holds the key now.
	holder(ctx context.Context) (int, error)
	// look is the holder and the key's remaining time to live in ms (-1:
	// no expiry, -2: no key).
	look(ctx context.Context) (int, int64, error)
}

// holderOf decodes a GET of the lock key: the client whose value it is.
func holderOf(v string, err error, clients int) int {
	if errors.Is(err, redis.Nil) {
		return HolderNone
	}
	for i := 0; i < clients; i++ {
		if v == model.LockValue(i) || strings.HasPrefix(v, model.LockValue(i)+"/") { // a later job's own (jobValue)
			return i
		}
	}
	return HolderUnknown
}

// jobValue is the value client i writes into the key in its job job (0:
// the first), as the model's (model/jobs.go, jobValue): LockValue(i), and
// with a value per job (value=job) the job's number after the first
// ("/2"); with value=process every job writes LockValue(i).
func jobValue(d *model.Design, i, job int) string {
	if job > 0 && d.Value == model.ValueJob {
		return fmt.Sprintf("%s/%d", model.LockValue(i), job+1)
	}
	return model.LockValue(i)
}

// downError is a lock-node request that got no answer because the node is
// down (design with node-crashes): the client sees an error, as the model's
// client sees a refusal or a failed release.
type downError struct{ err error }

func (e *downError) Error() string { return "the lock node is down: " + e.err.Error() }

func isDown(err error) bool {
	var d *downError
	return errors.As(err, &d)
}

// lockErr wraps a lock-node request's error: a network error when nodes can
// crash (or a replica primary be down: primaryDown) is a down node;
// anything else ends the run.
func lockErr(d *model.Design, err error, what string) error {
	if (d.NodeCrashes > 0 || primaryDown(d)) && networkError(err) {
		return &downError{fmt.Errorf("%s: %v", what, err)}
	}
	return fmt.Errorf("%s: %v", what, err)
}

// networkError reports whether err is a failed connection rather than a
// reply of the server.
func networkError(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	var reply redis.Error
	return !errors.As(err, &reply)
}

// userLock is the client's lock when it is a user's (ClientUser).
func (c *client) userLock() (userAPI, bool) {
	if kl, ok := c.lk.(*keyLock); ok {
		u, ok := kl.lib.(userAPI)
		return u, ok
	}
	return userAPI{}, false
}
