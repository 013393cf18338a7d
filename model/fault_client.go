package model

import "fmt"

// fault_client.go: faults of a client process, each drawn from its budget:
// a pause (GC, VM migration, swapping) between any two of its steps, a slow
// job (work takes slow-work ticks), a crash for good, and a jump of its own
// clock (the one its validity check reads: check=validity, Redlock). Pauses
// and crashes fall where pause-at= and crash-at= allow.

// pauseActions: pauses of 1 … max-pause ticks that delay client i.
func pauseActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if int(s.Used[FaultPause]) >= d.Pauses || c.Phase == PhaseArrive || c.Flags&FlagInFlight != 0 || !at(d, s, i, d.PauseAt) {
		return buf
	}
	for p := 1; p <= d.MaxPauseTicks; p++ {
		if int(s.Now)+p > int(c.Ready) { // only pauses that delay it
			buf = append(buf, Action{Kind: ActPause, Client: uint8(i), Arg: uint8(p)})
		}
	}
	return buf
}

// slowActions: make client i's job slow, before its read.
func slowActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if int(s.Used[FaultSlow]) < d.SlowJobs && c.Phase == PhaseRead && c.Flags&FlagSlow == 0 && d.SlowWorkTicks != d.WorkTicks {
		buf = append(buf, Action{Kind: ActSlow, Client: uint8(i)})
	}
	return buf
}

// crashActions: client i crashes for good.
// (A crash while a request other than a write is in flight is not drawn.
// Nor is a crash of a paused client whose lock is a session (ZooKeeper,
// etcd's Mutex): its session stopped hearing from it when the pause
// began, so it expires a session timeout after that, as it does after a
// crash at the pause's start, which is drawn; the frozen client does
// nothing in between, so no run is lost.)
func crashActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if sessionQueue(d) && c.Flags&FlagPaused != 0 {
		return buf
	}
	if int(s.Used[FaultCrash]) < d.Crashes && c.Flags&FlagInFlight == 0 && at(d, s, i, d.CrashAt) {
		buf = append(buf, Action{Kind: ActCrash, Client: uint8(i)})
	}
	return buf
}

// pause freezes client i (its watchdog and heartbeats too) for p ticks.
// What that means for its session (paused, service.go) stepTo asks next:
// with that call in it, pause would not be inlined, and pauses are more
// than a third of the SPIN comparison's steps.
func pause(s *State, i int, p uint8) {
	s.Used[FaultPause]++
	s.Clients[i].Pause(s.Now, p)
}

// slow makes client i's work take slow-work ticks.
func slow(s *State, i int) {
	s.Used[FaultSlow]++
	s.Clients[i].Slow()
}

// crash ends client i for good; a write already on its way still arrives.
func crash(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	s.Used[FaultCrash]++
	held := c.Believes()
	if c.Phase == PhaseArrive {
		c.Crash()
	} else {
		crashed(d, s, i, c.Crash())
	}
	if held && d.Watchdog == WatchdogSidecar { // nobody tells its sidecar
		renewedForEver(d, s, i, ev)
	}
}

// pausedFreezes is FlagPaused when a pause freezes the client's renewal
// (its watchdog in the worker or a thread of it), 0 when a sidecar renews.
func pausedFreezes(d *Design) uint16 {
	if d.Watchdog == WatchdogSidecar {
		return 0
	}
	return FlagPaused
}

// renewedForEver: client i, gone (crashed, hung) while it held the lock,
// leaves a renewer that goes on (a watchdog thread, a sidecar): its keys
// never expire. ev.Value counts them.
func renewedForEver(d *Design, s *State, i int, ev *Event) {
	for k := 0; k < lockNodes(d); k++ {
		if n := &s.Nodes[k]; n.Owner == uint8(i+1) {
			n.Exp = 0
			ev.Value++
		}
	}
}

// skewActions: client i's own clock jumps, while it holds a lock whose
// validity it will check by that clock (or, for Redlock, while it counts
// votes).
func skewActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if int(s.Used[FaultClientJump]) >= d.ClientJumps || !(c.Believes() || c.Asked != 0 && !measuresBypass(d) || c.Flags&FlagReply != 0) {
		return buf
	}
	return append(buf, Action{Kind: ActSkew, Client: uint8(i)})
}

// skew moves client i's clock by client-jump ticks (negative: back).
func skew(d *Design, s *State, i int) {
	c := &s.Clients[i]
	s.Used[FaultClientJump]++
	c.Skew = int8(max(-100, min(100, int(c.Skew)+d.ClientJumpTicks)))
}

// Words.

func describePause(d *Design, st *StepRecord, p uint8) string {
	ev := &st.Event
	until := int(ev.Now) + int(p)
	s := fmt.Sprintf("pauses for %d ticks (GC, VM migration), frozen until t=%d", p, until) + sessionPauseNote(d, ev, p)
	if c := &st.Before.Clients[st.Action.Client]; d.RenewTicks > 0 && c.Believes() && d.Watchdog == WatchdogSidecar {
		s += "; its sidecar goes on renewing the key"
	} else if d.RenewTicks > 0 && c.Believes() && c.Timer != 0 && int(c.Timer) < until {
		due := fmt.Sprintf("at t=%d", c.Timer)
		if c.Timer <= ev.Now {
			due = "now"
		}
		s += fmt.Sprintf("; its %s freezes with it: the renewal due %s waits until t=%d", renewerName(d), due, until)
	}
	return s
}

func describeSlow(d *Design) string {
	return fmt.Sprintf("its job is slow: the work will take %d ticks (TTL %d)", d.SlowWorkTicks, d.TTLTicks)
}

func describeSkew(d *Design) string {
	if d.ClientJumpTicks < 0 {
		return fmt.Sprintf("its own clock jumps %d ticks back (NTP step, VM resume): it will think less time has passed", -d.ClientJumpTicks)
	}
	return fmt.Sprintf("its own clock jumps %d ticks forward: it will think more time has passed", d.ClientJumpTicks)
}

func describeCrash(d *Design, st *StepRecord) string {
	s := "crashes"
	if st.Before.Clients[st.Action.Client].Phase == PhaseArrive {
		s = "crashes while its write is on the way"
	}
	if d.Watchdog == WatchdogSidecar && st.Event.Value > 0 {
		s += "; its sidecar goes on renewing the key for ever: it never expires"
	}
	return s
}

// hangActions: client i's worker hangs for good (hangs=N), while the budget
// lasts (the hung clients are counted by their FlagHung).
func hangActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if c.Flags&FlagInFlight != 0 || c.Phase == PhaseArrive || c.Stray != 0 {
		return buf
	}
	hung := 0
	for j := 0; j < d.Clients; j++ {
		if s.Clients[j].Flags&FlagHung != 0 {
			hung++
		}
	}
	if hung < d.Hangs {
		buf = append(buf, Action{Kind: ActHang, Client: uint8(i)})
	}
	return buf
}

// hang: client i's worker is stuck for good (a deadlock, a blocking call
// that never returns). With watchdog=worker the renewal stops with it and
// its lock expires, as after a crash; with watchdog=thread the watchdog
// goes on renewing, so its keys never expire: the lock is never freed.
func hang(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	old := *c
	*c = Client{Phase: PhaseCrashed, Flags: FlagHung, Job: old.Job, Marks: old.Marks & MarkRestarts}
	crashed(d, s, i, old)
	if d.Watchdog != WatchdogWorker && old.Believes() {
		renewedForEver(d, s, i, ev) // by its own thread or its sidecar
	}
}

func describeHang(d *Design, st *StepRecord) string {
	renewer := "watchdog thread"
	switch {
	case d.Watchdog == WatchdogWorker:
		return "its worker hangs for good; the watchdog runs in the worker and stops with it"
	case d.Watchdog == WatchdogSidecar:
		renewer = "sidecar"
	case d.Watchdog == WatchdogSession:
		renewer = "session's keep-alive"
	}
	if st.Event.Value == 0 {
		return "its worker hangs for good; its " + renewer + " has no key to renew"
	}
	return "its worker hangs for good; its " + renewer + " goes on renewing the key for ever: it never expires"
}
