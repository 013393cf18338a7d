package reality

import (
	"context"
	"errors"
	"fmt"
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

// client is one real client process: its own connections to the lock
// server and to the storage, and its one job, run as the design says (its
// next step follows from its own state and the real replies, not from the
// schedule). The conductor only says when it acts; faults are injected.
type client struct {
	i      int
	d      *model.Design
	clk    *clock
	lock   *redis.Client   // lock database: lock:order-42, lock:fence
	store  *redis.Client   // storage database: the counter
	sub    *redis.PubSub   // wait=notify: release notices
	etcd   *etcdLock       // lock=etcd: the lock is an etcd key with a lease
	lib    lockAPI         // a lock library's acquire, renew and release (nil: the reference client's)
	net    *netHold        // the client's proxies: a pause holds its traffic
	noHold bool            // planted bug: a pause does not hold the traffic
	nodes  []*redis.Client // lock=redlock: one connection per node
	zk     *zkLock         // lock=zookeeper: its session and node
	db     *dbLock         // lock=db: its lock session (and counter connection)

	asked int   // redlock: the node the next acquire step asks
	votes uint8 // redlock: nodes won in this attempt
	// redlock with a library: each node's answer to the library's one call
	// (which asked every node at once), and whether it won
	libNodes []model.Result
	libWon   bool
	obs      looker
	scripts  storageScripts
	px       time.Duration // the TTL the client sends with SET … PX
	value    string        // its value in the lock key, e.g. "B:91ab"

	phase    model.Phase
	token    int
	read     int
	version  int
	believes bool
	slow     bool
	sawMine  bool      // get-del: the GET said the key was ours
	since    time.Time // check=validity: when it sent its last SET NX
	checked  bool      // check=validity: checked for the next access
	waiting  bool      // wait=notify: refused, asleep until a release notice
	lost     bool      // crashed with its write held in the network
	inflight [3]int    // a delayed write: value, token, version

	pausedUntil int // a pause: no step at all before this tick
	workUntil   int // its work, or its delayed write: no main step before this tick
}

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

func newClient(i int, d *model.Design, clk *clock, lockAddr, storeAddr string, lockDB, storeDB int, obs looker, sc storageScripts, px time.Duration) *client {
	first := model.PhaseAcquire
	if d.Acquire == model.AcquireIncrBefore {
		first = model.PhaseIncr
	}
	c := &client{
		i: i, d: d, clk: clk,
		lock:    redis.NewClient(lockOptions(d, lockAddr, lockDB)),
		store:   redis.NewClient(clientOptions(storeAddr, storeDB)),
		obs:     obs,
		scripts: sc,
		px:      px,
		value:   model.LockValue(i),
		phase:   first,
	}
	if d.Wait == model.WaitNotify {
		c.sub = redis.NewClient(lockOptions(d, lockAddr, lockDB)).Subscribe(context.Background())
	}
	return c
}

// connect opens the client's connections before the clock starts.
func (c *client) connect(ctx context.Context) error {
	for _, r := range []*redis.Client{c.lock, c.store} {
		if err := r.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("client %s: PING: %v", model.ClientName(c.i), err)
		}
	}
	if c.sub != nil {
		if err := c.sub.Subscribe(ctx, NoticeChannel); err != nil {
			return fmt.Errorf("client %s: SUBSCRIBE %s: %v", model.ClientName(c.i), NoticeChannel, err)
		}
		if _, err := c.sub.Receive(ctx); err != nil { // the subscription's confirmation
			return fmt.Errorf("client %s: SUBSCRIBE %s: %v", model.ClientName(c.i), NoticeChannel, err)
		}
	}
	return nil
}

func (c *client) close() {
	for _, n := range c.nodes {
		n.Close()
	}
	if c.lib != nil {
		c.lib.close()
	}
	if c.net != nil {
		c.net.resume() // a client still paused must not hold its own closing
		defer c.net.close()
	}
	c.lock.Close()
	c.store.Close()
	if c.zk != nil {
		c.zk.c.Close()
	}
	if c.db != nil {
		c.db.close()
	}
	if c.sub != nil {
		c.sub.Close()
	}
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
		r.phase = c.phase
		select {
		case replies <- r:
		case <-ctx.Done():
			return
		}
		if r.err != nil || c.phase == model.PhaseCrashed {
			return
		}
	}
}

// busy says why the client cannot act at the order's tick: it is paused,
// or (for a main step) still working or its write still in the network,
// until a later tick. "" when it can.
func (c *client) busy(o order) string {
	k := o.a.Kind
	if k.IsFault() {
		return ""
	}
	if c.pausedUntil > o.now {
		return fmt.Sprintf("still paused until t=%d", c.pausedUntil)
	}
	if k != model.ActRenew && c.workUntil > o.now {
		return fmt.Sprintf("still working until t=%d", c.workUntil)
	}
	return ""
}

func (c *client) do(ctx context.Context, o order) reply {
	r := reply{obs: Obs{Action: o.a, Took: o.a.Kind, Tick: o.now, Before: HolderNotLooked}}
	r.obs.Start = c.clk.since()
	switch o.a.Kind {
	case model.ActPause:
		// a stop-the-world pause: the process is frozen, it sends nothing,
		// its library's goroutines neither (its traffic is held until the
		// conductor resumes it at the start of tick pausedUntil)
		c.pausedUntil = o.now + int(o.a.Arg)
		if c.net != nil && !c.noHold {
			c.net.hold()
		}
	case model.ActSlow:
		c.slow = true
	case model.ActCrash:
		if c.zk != nil && c.net != nil {
			c.net.hold() // a dead process sends no heartbeats: its session will expire
		}
		c.believes = false
		if c.phase == model.PhaseArrive {
			c.lost = true // its write is still on its way
		} else {
			c.phase = model.PhaseCrashed
		}
	case model.ActDelay:
		// the write is sent, and the network holds it until it arrives
		tok := 0
		if c.d.Fence != model.FenceNone {
			tok = c.token
		}
		c.inflight = [3]int{c.read + 1, tok, c.version}
		r.obs.Value, r.obs.Token = c.read+1, tok
		c.phase, c.checked = model.PhaseArrive, false
		c.workUntil = o.now + int(o.a.Arg)
	case model.ActRenew:
		r.err = c.renew(ctx, &r.obs)
	default:
		r.err = c.program(ctx, &r.obs, o.now)
	}
	r.obs.End = c.clk.since()
	return r
}

// program takes the client's next step of its job, against the real
// servers, and records what happened in ob.
func (c *client) program(ctx context.Context, ob *Obs, now int) error {
	d := c.d
	fenced := d.Fence != model.FenceNone
	if (c.phase == model.PhaseRead || c.phase == model.PhaseWrite) && d.Check == model.CheckValidity && !c.checked {
		c.check(ob)
		return nil
	}
	switch c.phase {
	case model.PhaseIncr:
		ob.Took = model.ActIncr
		n, err := c.lock.Incr(ctx, FenceKey).Result()
		if err != nil {
			if err := c.lockErr(err, "INCR "+FenceKey); !isDown(err) {
				return err
			}
			// the model lets INCR succeed on a down node; a real one fails
			ob.Skipped, ob.Why = true, "INCR failed: the lock node is down"
			return nil
		}
		c.token, ob.Result, ob.Token = int(n), model.ResOK, int(n)
		if d.Acquire == model.AcquireIncrBefore {
			c.phase = model.PhaseAcquire
		} else {
			c.phase = model.PhaseRead
		}

	case model.PhaseAcquire:
		ob.Took = model.ActAcquire
		if d.Lock == model.LockRedlock {
			if c.lib != nil {
				return c.redlockLibStep(ctx, ob)
			}
			return c.redlockStep(ctx, ob)
		}
		if c.waiting && !c.notified(ctx) {
			ob.Skipped, ob.Why = true, "still asleep: no release notice came"
			break
		}
		c.waiting = false
		c.drainNotices()
		c.since = time.Now()
		acquire := c.acquire
		if c.etcd != nil {
			acquire = c.etcd.acquire
		}
		if c.zk != nil {
			acquire = c.zk.acquire
		}
		if c.db != nil {
			acquire = c.db.acquire
		}
		var won bool
		var tok int
		var err error
		if c.lib != nil {
			won, tok, ob.Told, err = c.lib.acquire(ctx)
		} else {
			won, tok, err = acquire(ctx)
		}
		if c.zk != nil && err == nil { // the token is the node's, told when it is created
			ob.Token, c.token, tok = tok, c.zk.seq, 0
		}
		if isDown(err) {
			won, err = false, nil // no answer from a down node: try again later
		}
		if err != nil {
			return err
		}
		if !won {
			ob.Result = model.ResRefused // poll again next tick, or sleep until a notice
			c.waiting = d.Wait == model.WaitNotify
			break
		}
		ob.Result, c.believes = model.ResOK, true
		c.phase = model.PhaseRead
		if tok > 0 && fenced { // etcd: the revision is a token only when the design uses one
			c.token, ob.Token = tok, tok
		}
		switch {
		case d.Acquire == model.AcquireSetExpire:
			c.phase = model.PhaseExpire
		case d.Acquire == model.AcquireIncrAfter && fenced:
			c.phase = model.PhaseIncr
		}

	case model.PhaseExpire:
		ob.Took = model.ActExpire
		ok, err := c.lock.PExpire(ctx, LockKey, c.px).Result()
		if err != nil {
			if err := c.lockErr(err, "PEXPIRE "+LockKey); !isDown(err) {
				return err
			}
		}
		ob.Result = model.ResNoop
		if ok {
			ob.Result = model.ResOK
		}
		c.phase = model.PhaseRead

	case model.PhaseRead:
		ob.Took = model.ActRead
		c.checked = false
		if err := c.lookBefore(ctx, ob); err != nil {
			return err
		}
		tok := 0
		if d.Fence == model.FenceRW {
			tok = c.token
		}
		ob.Token = tok
		if c.db != nil {
			v, ok, err := c.db.read(ctx, d.Tx == model.TxInside)
			if err != nil {
				return err
			}
			if !ok { // the lock's session was killed: the SELECT fails
				ob.Result = model.ResRejected
				c.phase = model.PhaseRelease
				break
			}
			ob.Result, ob.Value, c.read = model.ResAccepted, v, v
			c.phase = model.PhaseWrite
			if work := d.WorkTicks; work > 0 && !c.slow {
				c.workUntil = now + work
			} else if c.slow && d.SlowWorkTicks > 0 {
				c.workUntil = now + d.SlowWorkTicks
			}
			break
		}
		res, err := c.scripts.read.Run(ctx, c.store, storageKeys, tok).Int64Slice()
		if err != nil || len(res) < 2 {
			return fmt.Errorf("storage read script: %v (reply %v)", err, res)
		}
		if res[0] == 0 {
			ob.Result, ob.MaxTok = model.ResRejected, int(res[1])
			c.phase = model.PhaseRelease
			break
		}
		if len(res) < 3 {
			return fmt.Errorf("storage read script: short reply %v", res)
		}
		ob.Result, ob.Value = model.ResAccepted, int(res[1])
		c.read, c.version = int(res[1]), int(res[2])
		c.phase = model.PhaseWrite
		work := d.WorkTicks
		if c.slow {
			work = d.SlowWorkTicks
		}
		if work > 0 {
			c.workUntil = now + work // the work itself: the client computes read+1
		}

	case model.PhaseWrite:
		ob.Took = model.ActWrite
		c.checked = false
		tok := 0
		if fenced {
			tok = c.token
		}
		if c.db != nil {
			if err := c.lookBefore(ctx, ob); err != nil {
				return err
			}
			inside := d.Tx == model.TxInside
			ok, err := c.db.write(ctx, inside, c.read+1)
			if err != nil {
				return err
			}
			ob.Value = c.read + 1
			switch {
			case !ok:
				ob.Result = model.ResRejected // the session was killed
			case inside:
				ob.Result = model.ResOK // pending until COMMIT
			default:
				ob.Result = model.ResAccepted
			}
			c.phase = model.PhaseRelease
			break
		}
		// client-computed: SET counter = read+1
		if err := c.write(ctx, ob, c.read+1, tok, c.version); err != nil {
			return err
		}
		c.phase = model.PhaseRelease

	case model.PhaseArrive:
		ob.Took = model.ActArrive
		if err := c.write(ctx, ob, c.inflight[0], c.inflight[1], c.inflight[2]); err != nil {
			return err
		}
		c.phase = model.PhaseRelease
		if c.lost {
			c.phase = model.PhaseCrashed
		}

	case model.PhaseRelease:
		ob.Took = model.ActRelease
		if c.lib != nil {
			if err := c.lookBefore(ctx, ob); err != nil {
				return err
			}
			ok, told, err := c.lib.release(ctx, c.i, ob.Before)
			if err != nil {
				return err
			}
			ob.Told = told
			n := int64(0)
			if ok {
				n = 1
			}
			if err := c.deleted(ctx, ob, n); err != nil {
				return err
			}
			c.finish()
			break
		}
		if d.Lock == model.LockRedlock {
			return c.redlockRelease(ctx, ob)
		}
		if c.db != nil { // COMMIT
			if err := c.lookBefore(ctx, ob); err != nil {
				return err
			}
			buffered := c.db.buffered
			ok, err := c.db.release(ctx)
			if err != nil {
				return err
			}
			c.db.buffered = 0
			switch {
			case buffered != 0 && ok:
				ob.Result, ob.Value = model.ResAccepted, buffered
			case buffered != 0:
				ob.Result, ob.Value = model.ResRejected, buffered
			case ok:
				ob.Result = model.ResOK
			default:
				ob.Result = model.ResNoop
			}
			c.finish()
			break
		}
		// ZooKeeper: delete its node, if its session kept it; etcd: delete
		// its key if still its own (the only release etcd designs have)
		var own interface {
			release(ctx context.Context) (bool, error)
		}
		switch {
		case c.zk != nil:
			own = c.zk
		case c.etcd != nil:
			own = c.etcd
		}
		if own != nil {
			if err := c.lookBefore(ctx, ob); err != nil {
				return err
			}
			ok, err := own.release(ctx)
			if err != nil {
				return err
			}
			n := int64(0)
			if ok {
				n = 1
			}
			if err := c.deleted(ctx, ob, n); err != nil {
				return err
			}
			c.finish()
			break
		}
		switch d.Release {
		case model.ReleaseDel:
			if err := c.del(ctx, ob); err != nil {
				return err
			}
			c.finish()
		case model.ReleaseCAD:
			if err := c.lookBefore(ctx, ob); err != nil {
				return err
			}
			script := cadScript
			if d.Bug == model.BugCADNoCheck {
				script = cadNoCheckScript
			}
			n, err := script.Run(ctx, c.lock, []string{LockKey}, c.value).Int64()
			if err != nil {
				if err := c.lockErr(err, "check-and-delete script"); !isDown(err) {
					return err
				}
				n = 0 // the node is down: nothing deleted
			}
			if err := c.deleted(ctx, ob, n); err != nil {
				return err
			}
			c.finish()
		case model.ReleaseGetDel:
			v, err := c.lock.Get(ctx, LockKey).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				if err := c.lockErr(err, "GET "+LockKey); !isDown(err) {
					return err
				}
				ob.Result = model.ResNoop // the node is down: the release fails, the job ends
				c.finish()
				break
			}
			h := holderOf(v, err, c.d.Clients)
			ob.Result, ob.Value = model.ResOK, h+1
			c.sawMine = h == c.i
			c.phase = model.PhaseDel
		}

	case model.PhaseDel:
		ob.Took = model.ActDel
		if c.sawMine {
			if err := c.del(ctx, ob); err != nil {
				return err
			}
		} else {
			ob.Result = model.ResNoop // the GET said it was not ours: no request
		}
		c.finish()

	default: // done or crashed: nothing left to do
		ob.Took, ob.Skipped, ob.Why = ob.Action.Kind, true, "its job is over"
	}
	return nil
}

// check is check=validity: the client computes how much of its lock is
// left by its own clock, TTL − (now − when it asked) − drift, and gives the
// job up if nothing is. Value is what is left in whole ticks (0: none).
func (c *client) check(ob *Obs) {
	ob.Took = model.ActCheck
	tick := c.clk.tick
	left := c.px - time.Since(c.since) - time.Duration(c.d.DriftTicks)*tick
	if left <= 0 {
		ob.Result = model.ResNoop
		c.phase = model.PhaseRelease
		return
	}
	// the PX is half a tick short of TTL ticks (see TTL), and the client
	// asked within the first half of its tick: left + ½ tick, rounded, is
	// what remains in whole ticks, counted the model's way
	ob.Result, ob.Value = model.ResOK, int((left+tick)/tick)
	c.checked = true
}

// write sends a write with its value, token and version to the storage.
func (c *client) write(ctx context.Context, ob *Obs, v, tok, version int) error {
	if err := c.lookBefore(ctx, ob); err != nil {
		return err
	}
	ob.Token, ob.Value = tok, v
	res, err := c.scripts.write.Run(ctx, c.store, storageKeys, v, tok, version).Int64Slice()
	if err != nil || len(res) < 1 {
		return fmt.Errorf("storage write script: %v (reply %v)", err, res)
	}
	if res[0] == 0 {
		ob.Result = model.ResRejected
		if len(res) > 1 {
			ob.MaxTok = int(res[1])
		}
		return nil
	}
	ob.Result = model.ResAccepted
	return nil
}

// renew is the watchdog's step: extend the TTL if the key is still ours
// (etcd: one keep-alive of its lease).
func (c *client) renew(ctx context.Context, ob *Obs) error {
	if c.lib != nil {
		ok, told, err := c.lib.renew(ctx)
		if err != nil {
			return err
		}
		ob.Told, ob.Result = told, model.ResNoop
		if ok {
			ob.Result = model.ResOK
		}
		return nil
	}
	if c.etcd != nil {
		ok, err := c.etcd.renew(ctx)
		if err != nil {
			return err
		}
		ob.Result = model.ResNoop
		if ok {
			ob.Result = model.ResOK
		}
		return nil
	}
	n, err := renewScript.Run(ctx, c.lock, []string{LockKey}, c.value, c.px.Milliseconds()).Int64()
	if err != nil {
		if err := c.lockErr(err, "renew script"); !isDown(err) {
			return err
		}
		n = 0
	}
	ob.Result = model.ResNoop // a failed renewal does not stop the worker
	if n == 1 {
		ob.Result = model.ResOK
	}
	return nil
}

// notified reports whether a release notice has come since the client fell
// asleep. Delivery is asynchronous, so it waits a little for one.
func (c *client) notified(ctx context.Context) bool {
	if c.sub == nil {
		return true
	}
	t := time.NewTimer(10 * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.sub.Channel():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// drainNotices forgets notices of releases before this attempt.
func (c *client) drainNotices() {
	if c.sub == nil {
		return
	}
	for {
		select {
		case <-c.sub.Channel():
		default:
			return
		}
	}
}

// acquire sends the design's SET NX (with its token when the design takes
// it in the same step). It reports whether the client won, and the token.
func (c *client) acquire(ctx context.Context) (bool, int, error) {
	d := c.d
	fenced := d.Fence != model.FenceNone
	keys := []string{LockKey, FenceKey}
	switch {
	case d.Bug == model.BugSetWithoutNX && d.Acquire == model.AcquireSetExpire && fenced:
		n, err := setNoNXIncrScript.Run(ctx, c.lock, keys, c.value).Int64()
		return c.scriptWon(n, err, "SET (no NX) + INCR script")
	case d.Bug == model.BugSetWithoutNX && d.Acquire == model.AcquireScript && fenced:
		n, err := acquireNoNXScript.Run(ctx, c.lock, keys, c.value, c.px.Milliseconds()).Int64()
		return c.scriptWon(n, err, "SET (no NX) PX + INCR script")
	case d.Bug == model.BugSetWithoutNX:
		ttl := c.px
		if d.Acquire == model.AcquireSetExpire {
			ttl = 0
		}
		if err := c.lock.Set(ctx, LockKey, c.value, ttl).Err(); err != nil {
			return false, 0, c.lockErr(err, "SET "+LockKey+" (no NX)")
		}
		return true, 0, nil
	case d.Acquire == model.AcquireSetExpire && fenced:
		n, err := setNXIncrScript.Run(ctx, c.lock, keys, c.value).Int64()
		return c.scriptWon(n, err, "SET NX + INCR script")
	case d.Acquire == model.AcquireSetExpire:
		ok, err := c.lock.SetNX(ctx, LockKey, c.value, 0).Result()
		if err != nil {
			return false, 0, c.lockErr(err, "SET "+LockKey+" NX")
		}
		return ok, 0, nil
	case d.Acquire == model.AcquireScript && fenced:
		n, err := acquireScript.Run(ctx, c.lock, keys, c.value, c.px.Milliseconds()).Int64()
		return c.scriptWon(n, err, "SET NX PX + INCR script")
	default:
		ok, err := c.lock.SetNX(ctx, LockKey, c.value, c.px).Result()
		if err != nil {
			return false, 0, c.lockErr(err, "SET "+LockKey+" NX PX")
		}
		return ok, 0, nil
	}
}

func (c *client) scriptWon(n int64, err error, what string) (bool, int, error) {
	if errors.Is(err, redis.Nil) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, c.lockErr(err, what)
	}
	return true, int(n), nil
}

// del is a plain DEL of the lock key.
func (c *client) del(ctx context.Context, ob *Obs) error {
	if err := c.lookBefore(ctx, ob); err != nil {
		return err
	}
	n, err := c.lock.Del(ctx, LockKey).Result()
	if err != nil {
		if err := c.lockErr(err, "DEL "+LockKey); !isDown(err) {
			return err
		}
		n = 0 // the node is down: nothing deleted
	}
	return c.deleted(ctx, ob, n)
}

// deleted records a release's reply: 1 removed the key, 0 found none (or,
// for check-and-delete, not ours). Removing a key that was someone else's
// right before is the seed's "deleted B's lock". With wait=notify, a
// release that removed the key publishes a notice.
func (c *client) deleted(ctx context.Context, ob *Obs, n int64) error {
	ob.Result = model.ResNoop
	if n != 1 {
		return nil
	}
	ob.Result = model.ResOK
	// (Redlock: the check-and-delete only ever deletes the client's own
	// keys; Before is the majority's holder, not each node's)
	ob.RemovedOther = ob.Before != c.i && c.d.Lock != model.LockRedlock
	if c.d.Wait == model.WaitNotify {
		n, err := c.lock.Publish(ctx, NoticeChannel, c.value).Result()
		if err != nil {
			return fmt.Errorf("PUBLISH %s: %v", NoticeChannel, err)
		}
		ob.Notified = int(n)
	}
	return nil
}

func (c *client) finish() {
	c.phase = model.PhaseDone
	c.believes = false
	c.token, c.read, c.version, c.sawMine = 0, 0, 0, false
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
	if ob.Took == model.ActRead || ob.Took == model.ActWrite || ob.Took == model.ActArrive {
		ob.Unsafe = h != c.i
		if ro, ok := c.obs.(*redlockObserver); ok { // the model's rule: down nodes count
			held, err := ro.holds(ctx, c.i)
			if err != nil {
				return err
			}
			ob.Unsafe = !held
		}
	}
	return nil
}

// lockOptions are the options of connections to the lock node.
func lockOptions(d *model.Design, addr string, db int) *redis.Options {
	if d.NodeCrashes > 0 || d.Lock == model.LockReplica {
		return crashableOptions(addr, db)
	}
	return clientOptions(addr, db)
}

// looker is the observer: it asks the lock service who holds the key.
type looker interface {
	// holder is who holds the key now.
	holder(ctx context.Context) (int, error)
	// look is the holder and the key's remaining time to live in ms (-1:
	// no expiry, -2: no key).
	look(ctx context.Context) (int, int64, error)
}

// observer is a connection that only looks: GET and PTTL of the lock key.
type observer struct {
	c       *redis.Client
	clients int
	canFail bool // the lock node can crash: no answer means it is down
}

func (o *observer) holder(ctx context.Context) (int, error) {
	v, err := o.c.Get(ctx, LockKey).Result()
	if o.canFail && networkError(err) {
		return HolderDown, nil
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("observer GET %s: %v", LockKey, err)
	}
	return holderOf(v, err, o.clients), nil
}

// look is the holder and the key's remaining time to live in milliseconds
// (-1: no expiry, -2: no key), read together by one script.
func (o *observer) look(ctx context.Context) (int, int64, error) {
	res, err := lookScript.Run(ctx, o.c, []string{LockKey}).Slice()
	if o.canFail && networkError(err) {
		return HolderDown, -2, nil
	}
	if err != nil || len(res) != 2 {
		return 0, 0, fmt.Errorf("observer GET+PTTL %s: %v (reply %v)", LockKey, err, res)
	}
	pttl, ok := res[1].(int64)
	if !ok {
		return 0, 0, fmt.Errorf("observer PTTL %s: reply %v", LockKey, res[1])
	}
	v, ok := res[0].(string)
	if !ok {
		return 0, 0, fmt.Errorf("observer GET %s: reply %v", LockKey, res[0])
	}
	if v == "" { // no key (no client writes an empty value)
		return HolderNone, pttl, nil
	}
	return holderOf(v, nil, o.clients), pttl, nil
}

// holderOf decodes a GET of the lock key: the client whose value it is.
func holderOf(v string, err error, clients int) int {
	if errors.Is(err, redis.Nil) {
		return HolderNone
	}
	for i := 0; i < clients; i++ {
		if v == model.LockValue(i) {
			return i
		}
	}
	return HolderUnknown
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
// crash is a down node; anything else ends the run.
func (c *client) lockErr(err error, what string) error {
	if c.d.NodeCrashes > 0 && networkError(err) {
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
