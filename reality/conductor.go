package reality

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lockcheck/model"
)

// PlaySchedule plays trace for design d on real servers: the design's
// world (world.go: its servers, its observer, each client's real lock),
// one goroutine per client running the model's client program against
// it (client.go), and a conductor that keeps the schedule's order: it
// orders each client's step and waits for its reply, sleeps until the
// next tick starts for a tick, and injects the faults. The conductor knows
// no lock service: it calls the world. The trace must replay in the model
// (the caller checks). Keys of the run are reset first; nothing else on
// the servers is touched.
func PlaySchedule(ctx context.Context, d *model.Design, trace []model.Action, opts Options) (*Play, error) {
	if err := Playable(d); err != nil {
		return nil, err
	}
	if opts.Client == "" {
		opts.Client = ClientReference
	}
	if err := CheckClient(opts.Client, d); err != nil {
		return nil, fmt.Errorf("design %s: %v", d.Name(), err)
	}
	if opts.Tick == 0 {
		opts.Tick = DefaultTickFor(d)
	}
	if err := CheckTickFor(d, opts.Tick); err != nil {
		return nil, err
	}
	if etcdDesign(d) && opts.Etcd == "" {
		return nil, fmt.Errorf("design %s: an etcd design needs an etcd endpoint", d.Name())
	}
	if opts.LockDB == opts.StoreDB {
		return nil, fmt.Errorf("lock and storage databases are both %d: want two different ones", opts.LockDB)
	}
	if opts.UserKey != "" && (opts.Client != ClientUser || d.Lock != model.LockRedis) {
		return nil, fmt.Errorf("a lock key of the client's own (%q) is looked at for a user's client on one Redis node only: want client %s and lock=redis, not client %s and lock=%s", clipText(opts.UserKey), ClientUser, opts.Client, d.Lock)
	}
	ticks := 0
	for _, a := range trace {
		if a.Kind == model.ActTick {
			ticks++
		}
	}
	// bounded: the schedule's ticks, the longest pause or work, and slack
	budget := time.Duration(ticks+2*model.MaxWaitTicks+2)*opts.Tick + 30*time.Second
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	ttl := d.TTLTicks + opts.plant.ttlTicks
	p := &Play{Design: *d, Client: opts.Client, Tick: opts.Tick, PX: TTL(ttl, opts.Tick), Window: window(d, opts.Tick)}
	opts.px = p.PX
	sc := storageFor(d)
	if opts.plant.storage != nil {
		sc = *opts.plant.storage
	}
	w, err := newWorld(d, &opts, sc)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	if err := w.start(ctx); err != nil {
		return nil, err
	}
	obs := w.observer()
	if _, _, err := obs.look(ctx); err != nil { // connects before the clock starts
		return nil, err
	}
	p.TokenOffset = w.tokenOffset()

	clk := &clock{tick: opts.Tick}
	clients := make([]*client, d.Clients)
	for i := range clients {
		// every connection of the client goes through its own proxies
		h := &netHold{leak: opts.plant.leakReply, leakCut: opts.plant.leakCut, leakDrop: opts.plant.zkLost.leakRequest}
		lk, err := w.lock(ctx, i, h)
		if err != nil {
			h.close()
			return nil, err
		}
		clients[i] = newClient(i, d, clk, lk, obs, h, p.PX)
		clients[i].noHold = opts.plant.noHold
		clients[i].crashLives = opts.plant.crashLives
		clients[i].noReplyHold = opts.plant.noReplyHold
		clients[i].noReleaseHold = opts.plant.noReleaseHold
		clients[i].sidecarDies = opts.plant.sidecarDies
		defer clients[i].close()
		if err := lk.connect(ctx); err != nil {
			return nil, err
		}
	}
	retarget := func(from, to string) {
		for _, c := range clients {
			c.net.retarget(from, to)
		}
	}
	k := &conductor{d: d, p: p, w: w, obs: obs, clk: clk, clients: clients, retarget: retarget, plant: opts.plant,
		downUntil: make([]int, w.nodes()), crashed: make([]bool, d.Clients)}
	if err := k.play(ctx, trace, budget); err != nil {
		return nil, err
	}
	if p.Counter, err = w.counter(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// conductor plays a schedule in order over the clients and the world.
type conductor struct {
	d         *model.Design
	p         *Play
	w         world
	obs       looker
	clk       *clock
	clients   []*client
	retarget  func(from, to string)
	plant     plant
	downUntil []int // a crashed lock node restarts when this tick starts (0: up)
	crashed   []bool
	now       int
	// the clients' masks after the last step (see Obs)
	believes, inside, done, crashedMask, waiting, forgot uint8
	// the key as the last look saw it
	after      int
	afterPTTL  int64
	afterNodes string
}

// nodesNow is each Redlock node's holder, as the last look saw them ("" for
// the other services).
func (k *conductor) nodesNow() string {
	if ro, ok := k.obs.(*redlockObserver); ok {
		return ro.last
	}
	return ""
}

// look is the observer's look after a step: the key's holder and PTTL.
func (k *conductor) look(ctx context.Context, ob *Obs) error {
	var err error
	if ob.After, ob.AfterPTTL, err = k.obs.look(ctx); err != nil {
		return err
	}
	ob.Nodes = k.nodesNow()
	ob.End = k.clk.since()
	return nil
}

func (k *conductor) play(ctx context.Context, trace []model.Action, budget time.Duration) error {
	d, p, clk := k.d, k.p, k.clk
	// start: tick 1 begins a little after everything is connected (etcd's
	// Mutex: where its sessions' keep-alives fit the ticks)
	clk.t0 = time.Now().Add(5 * time.Millisecond)
	if a, ok := k.w.(interface {
		clockStart(time.Time, time.Duration) time.Time
	}); ok {
		clk.t0 = a.clockStart(clk.t0, clk.tick)
	}
	runCtx, stop := context.WithCancel(ctx)
	orders := make([]chan order, d.Clients)
	replies := make([]chan reply, d.Clients)
	finished := make(chan struct{}, d.Clients)
	for i, c := range k.clients {
		orders[i], replies[i] = make(chan order), make(chan reply)
		go func(c *client, o chan order, r chan reply) {
			defer func() { finished <- struct{}{} }()
			c.run(runCtx, o, r)
		}(c, orders[i], replies[i])
	}
	defer func() {
		// wake sleepers, let every goroutine end, bounded in time
		stop()
		for range k.clients {
			select {
			case <-finished:
			case <-time.After(5 * time.Second):
			}
		}
	}()

	k.now = 1
	clk.sleepUntil(ctx, k.now)
	start := Obs{Seq: 0, Tick: 1, Took: model.ActTick, Before: HolderNotLooked}
	start.Start = clk.since()
	h, pttl, err := k.obs.look(ctx)
	if err != nil {
		return err
	}
	start.After, start.AfterPTTL, start.End = h, pttl, clk.since()
	p.Steps = append(p.Steps, start)
	p.late(&start, clk.offset(k.now))
	start.Nodes = k.nodesNow()
	k.after, k.afterPTTL, k.afterNodes = start.After, start.AfterPTTL, start.Nodes

	for n, a := range trace {
		seq := n + 1
		var ob Obs
		var err error
		switch {
		case a.Kind == model.ActTick:
			ob, err = k.tick(ctx, seq, a, budget)
		case a.Kind == model.ActNodeCrash:
			ob, err = k.nodeCrash(ctx, seq, a)
		case !a.Kind.ByClient():
			ob, err = k.serviceStep(ctx, seq, a)
		default:
			ob, err = k.clientStep(ctx, seq, a, orders, replies)
		}
		if err != nil {
			return err
		}
		if ob.After >= 0 && ob.After < len(k.clients) { // a crashed holder's sidecar renews its key for ever
			ob.Kept = k.clients[ob.After].kept(ctx)
		}
		ob.Seq, ob.Believes, ob.Inside, ob.Done, ob.Crashed, ob.Waiting = seq, k.believes, k.inside, k.done, k.crashedMask, k.waiting
		ob.Forgot = k.forgot
		k.after, k.afterPTTL, k.afterNodes = ob.After, ob.AfterPTTL, ob.Nodes
		p.late(&ob, clk.offset(k.now))
		if ob.Void && !p.Late {
			p.Late, p.LateSeq = true, ob.Seq
		}
		p.Steps = append(p.Steps, ob)
	}
	return nil
}

// tick sleeps until the next tick starts: paused clients whose pause ends
// resume (their held traffic goes through), crashed lock nodes due back
// restart, and the observer looks.
func (k *conductor) tick(ctx context.Context, seq int, a model.Action, budget time.Duration) (Obs, error) {
	k.now++
	k.clk.sleepUntil(ctx, k.now)
	if err := ctx.Err(); err != nil {
		return Obs{}, fmt.Errorf("step %d (tick to t=%d): run budget of %v exceeded", seq, k.now, budget)
	}
	ob := Obs{Action: a, Took: model.ActTick, Tick: k.now, Before: HolderNotLooked}
	ob.Start = k.clk.since()
	if b, ok := k.w.(nodesBacker); ok { // the model's nodeBack, before its clients' tick
		if err := b.nodesBack(ctx, k.now, k.retarget); err != nil {
			return Obs{}, fmt.Errorf("step %d (tick to t=%d): %v", seq, k.now, err)
		}
	}
	for _, c := range k.clients {
		if err := c.tick(ctx, k.now); err != nil {
			return Obs{}, fmt.Errorf("step %d (tick to t=%d): %v", seq, k.now, err)
		}
	}
	for n := range k.downUntil {
		if k.downUntil[n] == k.now { // the crashed lock node comes back
			k.downUntil[n] = 0
			if err := k.w.restart(ctx, n); err != nil {
				return Obs{}, fmt.Errorf("step %d (tick to t=%d): restart the lock node: %v", seq, k.now, err)
			}
		}
	}
	if k.plant.lookLate > 0 {
		time.Sleep(k.plant.lookLate)
	}
	if err := k.look(ctx, &ob); err != nil {
		return Obs{}, fmt.Errorf("step %d (tick to t=%d): %v", seq, k.now, err)
	}
	return ob, nil
}

// nodesBacker is a world whose nodes come back at a tick by themselves
// (a replica set's failed primaries, rejoin=K: replicaWorld.nodesBack).
type nodesBacker interface {
	nodesBack(ctx context.Context, now int, retarget func(from, to string)) error
}

// nodeCrash kills lock node a.Arg (SIGKILL); it restarts now or after
// restart ticks.
func (k *conductor) nodeCrash(ctx context.Context, seq int, a model.Action) (Obs, error) {
	ob := Obs{Action: a, Took: a.Kind, Tick: k.now, Before: HolderNotLooked}
	ob.Start = k.clk.since()
	n := int(a.Arg)
	if n >= k.w.nodes() {
		return Obs{}, fmt.Errorf("step %d (%s): no lock node %d to crash", seq, a, n+1)
	}
	if err := k.w.crash(ctx, n); err != nil {
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, k.now, err)
	}
	if k.d.RestartTicks == 0 {
		if err := k.w.restart(ctx, n); err != nil {
			return Obs{}, fmt.Errorf("step %d (%s at t=%d): restart: %v", seq, a, k.now, err)
		}
	} else {
		k.downUntil[n] = k.now + k.d.RestartTicks
	}
	if err := k.look(ctx, &ob); err != nil {
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, k.now, err)
	}
	return ob, nil
}

// serviceStep is a step of the service itself (replicate, failover).
func (k *conductor) serviceStep(ctx context.Context, seq int, a model.Action) (Obs, error) {
	ob := Obs{Action: a, Took: a.Kind, Tick: k.now, Before: HolderNotLooked}
	ob.Start = k.clk.since()
	if err := k.w.serviceStep(ctx, a, &ob, k.retarget); err != nil {
		if errors.Is(err, errNotPlayed) {
			return Obs{}, fmt.Errorf("step %d (%s): not played for real", seq, a)
		}
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, k.now, err)
	}
	if err := k.look(ctx, &ob); err != nil {
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, k.now, err)
	}
	if a.Kind == model.ActFailover {
		ob.Value = ob.After + 1 // the key's holder on the promoted replica
		if ob.After < 0 {
			ob.Value = 0
		}
		for _, c := range k.clients { // safe: every client is between steps
			if wl, ok := c.lk.(waiter); ok && !k.crashed[c.i] {
				if err := wl.primaryDied(ctx, c, uint8(k.now)); err != nil {
					return Obs{}, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, k.now, err)
				}
			}
		}
	}
	return ob, nil
}

// clientStep orders client a.Client to take its step (or suffer a fault)
// and waits for its reply.
func (k *conductor) clientStep(ctx context.Context, seq int, a model.Action, orders []chan order, replies []chan reply) (Obs, error) {
	d, clk, now := k.d, k.clk, k.now
	i := int(a.Client)
	if i >= d.Clients {
		return Obs{}, fmt.Errorf("step %d (%s): the design has %d clients", seq, a, d.Clients)
	}
	if k.crashed[i] {
		ob := Obs{Action: a, Took: a.Kind, Skipped: true, Why: "it has crashed", Tick: now, Before: HolderNotLooked, After: k.after, AfterPTTL: k.afterPTTL, Nodes: k.afterNodes}
		ob.Start, ob.End = clk.since(), clk.since()
		return ob, nil
	}
	if seq == k.plant.delaySeq {
		time.Sleep(k.plant.delay)
	}
	sent := clk.since()
	select {
	case orders[i] <- order{a: a, now: now}:
	case <-ctx.Done():
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): client did not take the order within the run budget", seq, a, now)
	}
	var r reply
	select {
	case r = <-replies[i]:
	case <-ctx.Done():
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): no reply within the run budget", seq, a, now)
	}
	if r.err != nil {
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): %w", seq, a, now, r.err)
	}
	ob := r.obs
	ob.Start = sent
	if r.phase == model.PhaseCrashed {
		k.crashed[i] = true
		k.crashedMask |= 1 << i
	}
	if r.phase >= model.PhaseDone {
		k.done |= 1 << i
	}
	// safe to read: the client is between steps
	m := &k.clients[i].m
	k.believes = setBit(k.believes, i, m.Believes())
	k.inside = setBit(k.inside, i, m.InCriticalSection())
	k.waiting = setBit(k.waiting, i, m.Flags&model.FlagWaiting != 0)
	k.forgot = setBit(k.forgot, i, forgets(d, m))
	if nf, ok := k.clients[i].lk.(nodeForgetter); ok && d.Losses > 0 { // a ZooKeeper node of its session it does not know of
		f, err := nf.forgetsNode(ctx)
		if err != nil {
			return Obs{}, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
		}
		k.forgot = setBit(k.forgot, i, f)
	}
	if ob.Notified > 0 {
		k.waiting = 0 // the notice reached every sleeper: they are awake
	}
	// an acquire whose reply is held was applied: the key may have changed;
	// and when the held reply arrives, a library may act on it at once
	// (redsync unlocks a lock whose validity is gone)
	heldAcquire := ob.Held == model.ActAcquire && !ob.Skipped
	lost := a.Kind == model.ActLose && !ob.Skipped // a lost release: the look shows that nothing was applied
	heldRelease := a.Kind == model.ActArrive && (ob.Held == model.ActRelease || ob.Held == model.ActDel) && !ob.Skipped
	if !heldAcquire && !lost && !heldRelease && (a.Kind.IsFault() || ob.Skipped || !touchesKey(ob.Took)) {
		ob.After, ob.AfterPTTL, ob.Nodes = k.after, k.afterPTTL, k.afterNodes
		return ob, nil
	}
	if err := k.look(ctx, &ob); err != nil {
		return Obs{}, fmt.Errorf("step %d (%s at t=%d): %v", seq, a, now, err)
	}
	return ob, nil
}

// forgets reports whether client m, live, is back at its first acquire
// with no belief and no request of its own on its way (model: forgotten):
// a key of its own is one it does not know of, and waits on. Counted on
// one Redis node only, where the model counts it so (a ZooKeeper node
// lives by its session: zkOrphan; one of its session's that the client
// does not know of is nodeForgetter's).
func forgets(d *model.Design, m *model.Client) bool {
	if d.Lock != model.LockRedis {
		return false
	}
	first := m.Phase == model.PhaseAcquire || d.Acquire == model.AcquireIncrBefore && m.Phase == model.PhaseIncr
	return m.Live() && first && m.Flags&(model.FlagBelieves|model.FlagReply|model.FlagInFlight) == 0
}
