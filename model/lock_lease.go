package model

import "fmt"

// lock_lease.go: Kubernetes Lease leader election (k8s.io/client-go/tools/
// leaderelection, read in v0.31.3 and v0.20.0). The Lease record (node 0)
// holds holderIdentity (Owner), its resourceVersion (Fence: every write
// adds one) and leaseTransitions (State.CounterFence). The server has no
// TTL: nothing ever expires there. Each candidate judges expiry on its own
// clock, from when it last saw the record change: tryAcquireOrRenew Gets
// the record and, if its raw bytes differ from the last it saw
// (observedRawRecord), sets observedTime to its clock now
// (setObservedRecord); isLeaseValid is observedTime + duration > now. The
// duration is the one written in the record by its holder
// (LeaseDurationSeconds, v0.31.3, duration=record) or the candidate's own
// configured LeaseDuration (v0.20.0 tryAcquireOrRenew, duration=own). A
// candidate that finds the record free or expired updates it: a
// compare-and-swap on the resourceVersion it read (LeaseLock.Update sends
// the object it last got), leaseTransitions + 1 if the holder changes; it
// is then the leader and leaseTransitions is its fencing token. The leader
// renews every retry period (renew=k, in the elector's goroutine of its
// own process: a pause freezes it): first the fast path, an Update with
// the version it wrote last, then the slow path (Get, judge, Update). If
// it cannot renew within renew deadline ticks (deadline=, by its own
// clock, since its last renewal) it gives up: its leader context is
// cancelled (LeaderElector.renew). A finished job cancels it too, and
// with ReleaseOnCancel the leader releases: an Update to an empty holder
// with LeaseDurationSeconds 1, itself a compare-and-swap (release).
//
// Candidates are alike but for candidate B, which may run another
// configuration: its own lease duration and renew deadline (lease-b=,
// deadline-b=) and a clock at another rate (rate-b=, percent of real
// time). The mark travels with the client,
// so that symmetric states stay alike (MarkConfigB). check=validity is a
// worker that checks its leader context before each storage access; the
// grace property says that no worker touches storage once its context is
// cancelled.
//
// State: a candidate's Votes is the resourceVersion it saw last (a byte:
// two reads of one candidate are a few writes apart), Since its
// observedTime and Asked the time of its last renewal, both on its own
// clock; Token is leaseTransitions when it took the lead.

// leaseService is the Lease's words.
var leaseService = ServiceFacts{
	Noun: "lease", Renewer: "renew loop", Beat: "renew",
	BeatLegend: "renew: X renewed the Lease (X! failed); x = due, but frozen with X (paused)",
	Frozen:     "'s renew loop is due but frozen with it: no renewal",
	Node:       "Lease", NodeStory: "the Lease record",
	Acquire: "update", Refused: "held", Renew: "renew",
	Poll:      "get the Lease → held, not expired by its clock",
	Expiry:    "%s's lease is judged expired by another candidate's clock",
	Contended: "a candidate finds the Lease held and, by its own clock, not yet expired",
	Bound:     "lease duration",
	Unplayed:  "no Kubernetes API server runs here: the Lease is modelled only",
}

// Client marks of lease designs.
const (
	MarkConfigB   uint8 = 1 << 5 // lease: candidate B's configuration (lease-b=, rate-b=)
	MarkCancelled uint8 = 1 << 6 // lease: its leader context was cancelled (the renew deadline passed)
)

// LeaseDuration is which lease duration a candidate judges expiry by.
type LeaseDuration uint8

const (
	DurationRecord LeaseDuration = iota // the holder's, written in the record (client-go v0.31)
	DurationOwn                         // the candidate's own configured one (client-go v0.20)
	numLeaseDurations
)

var durationAxis = axis{"duration", []string{"record", "own"}, []string{
	"lease: judge expiry by the LeaseDurationSeconds written in the record (default; client-go v0.31 isLeaseValid)",
	"lease: judge expiry by the candidate's own configured LeaseDuration (client-go v0.20 tryAcquireOrRenew)",
}}

func (m LeaseDuration) String() string { return word(durationAxis, int(m)) }

// twoConfigs reports whether candidate B runs a configuration of its own.
func twoConfigs(d *Design) bool {
	return d.Lock == LockLease && (d.LeaseBTicks != 0 || d.DeadlineBTicks != 0 || d.RateB != 100)
}

// NamesInterchangeable reports whether the clients of d start alike, so
// that a trace with its clients renamed is a trace of d: every design but
// a lease whose candidate B runs another configuration (it starts as B),
// and etcd-mutex with readers=K (A … K start as readers). Symmetric search
// is sound either way: the configuration or the role is a mark in the
// client's state (MarkConfigB, MarkReader), permuted with it.
func NamesInterchangeable(d *Design) bool { return !twoConfigs(d) && d.Readers == 0 }

// leaseInit starts leaseTransitions below the first token and gives
// candidate B its configuration's mark.
func leaseInit(d *Design, s *State) {
	s.CounterFence = uint16(d.FirstToken - 1) // leaseTransitions: the first leader's is token=
	if twoConfigs(d) && d.Clients > 1 {
		s.Clients[1].Marks |= MarkConfigB
	}
}

// configDuration is the lease duration candidate c is configured with.
func configDuration(d *Design, c *Client) int {
	if c.Marks&MarkConfigB != 0 && d.LeaseBTicks != 0 {
		return d.LeaseBTicks
	}
	return d.TTLTicks
}

// configDeadline is the renew deadline candidate c is configured with.
func configDeadline(d *Design, c *Client) int {
	if c.Marks&MarkConfigB != 0 && d.DeadlineBTicks != 0 {
		return d.DeadlineBTicks
	}
	return d.RenewDeadlineTicks
}

// ownClock is client i's clock now: real time at its rate, and its jumps.
func ownClock(d *Design, s *State, i int) int {
	c := &s.Clients[i]
	t := int(s.Now)
	if c.Marks&MarkConfigB != 0 {
		t = t * d.RateB / 100
	}
	return t + int(c.Skew)
}

// judgedDuration is the duration client i judges the record's expiry by.
func judgedDuration(d *Design, s *State, i int) int {
	if d.Duration == DurationOwn {
		return configDuration(d, &s.Clients[i])
	}
	o := s.Nodes[0].Owner
	if o == 0 {
		return 1 // a released record: LeaseDurationSeconds 1
	}
	return configDuration(d, &s.Clients[o-1])
}

// observe is the Get of tryAcquireOrRenew: a record changed since the
// candidate's last read sets its observedTime to its clock now.
func observe(d *Design, s *State, i int) {
	c := &s.Clients[i]
	if v := uint8(s.Nodes[0].Fence); v != c.Votes {
		c.Votes = v
		c.Since = uint8(ownClock(d, s, i))
	}
}

// leaseValid is isLeaseValid: observedTime + duration > now, by i's clock.
func leaseValid(d *Design, s *State, i int) bool {
	return int(s.Clients[i].Since)+judgedDuration(d, s, i) > ownClock(d, s, i)
}

// leaseWrite is a successful Update of the record by client i: the holder
// i, a new resourceVersion, leaseTransitions + 1 if the holder changed.
func leaseWrite(d *Design, s *State, i int, ev *Event) {
	rec := &s.Nodes[0]
	c := &s.Clients[i]
	if prev := rec.Owner; prev != uint8(i+1) {
		s.CounterFence++
		if prev != 0 && s.Clients[prev-1].Believes() { // taken over from a believer
			ev.Flags |= EvExpired | EvExpiredHeld
			ev.ExpiredMask |= 1 << (prev - 1)
		}
	}
	rec.Owner = uint8(i + 1)
	rec.Fence++
	c.Votes = uint8(rec.Fence)
	now := uint8(ownClock(d, s, i))
	c.Since, c.Asked = now, now
	c.Timer = s.Now + uint8(d.RenewTicks)
}

// leaseAcquire is a candidate's tryAcquireOrRenew: Get the record, and
// take it if it is free or expired by its clock.
func leaseAcquire(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	if !reach(d, s, i, 0) {
		ev.Result = ResUnreachable
		c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
		return
	}
	observe(d, s, i)
	rec := &s.Nodes[0]
	ev.Other = rec.Owner
	if rec.Owner != 0 && rec.Owner != uint8(i+1) && leaseValid(d, s, i) {
		ev.Result = ResRefused
		c.Take(d, ActAcquire, Reply{Result: ev.Result}, s.Now)
		c.Ready = s.Now + uint8(d.RenewTicks) // it tries again after the retry period
		return
	}
	leaseWrite(d, s, i, ev)
	ev.Result, ev.Token = ResOK, s.CounterFence
	c.Marks &^= MarkCancelled
	c.Take(d, ActAcquire, Reply{Result: ev.Result, Token: ev.Token}, s.Now)
	c.Timer = s.Now + uint8(d.RenewTicks)
}

// leaseRenew is one try of the leader's renew loop.
func leaseRenew(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	rec := &s.Nodes[0]
	switch {
	case !reach(d, s, i, 0):
		ev.Result = ResUnreachable
	case rec.Owner == uint8(i+1) && uint8(rec.Fence) == c.Votes: // the fast path's CAS holds
		ev.Result = ResOK
	default: // the slow path: Get, judge, Update
		observe(d, s, i)
		ev.Result = ResOK
		if rec.Owner != 0 && rec.Owner != uint8(i+1) && leaseValid(d, s, i) {
			ev.Result = ResRefused
		}
	}
	ev.Other = rec.Owner
	if ev.Result == ResOK {
		leaseWrite(d, s, i, ev)
		return
	}
	if ownClock(d, s, i)-int(c.Asked) >= configDeadline(d, c) { // it gives up: its leader context is cancelled
		c.Flags &^= FlagBelieves
		c.Marks |= MarkCancelled
		c.Timer = 0
		ev.Flags |= EvGiveUp
		return
	}
	c.Timer = s.Now + uint8(d.RenewTicks)
}

// leaseRelease is the release of ReleaseOnCancel: an Update to an empty
// holder, a CAS on the version the leader wrote last; nothing if it is no
// longer the leader.
func leaseRelease(d *Design, s *State, i int, ev *Event) {
	c := &s.Clients[i]
	rec := &s.Nodes[0]
	ev.Result = ResNoop
	switch {
	case !c.Believes():
	case !reach(d, s, i, 0):
		ev.Result = ResUnreachable
	case rec.Owner == uint8(i+1) && uint8(rec.Fence) == c.Votes:
		rec.Owner = 0
		rec.Fence++
		ev.Result = ResOK
	}
	r := ev.Result
	if r == ResUnreachable {
		r = ResNoop // it gives the release up: the lease expires by the others' clocks
	}
	c.Timer = 0
	ev.Flags |= c.Take(d, ActRelease, Reply{Result: r}, s.Now).Flags
}

// leaseCheck is check=validity for a lease: the worker looks at its leader
// context before a storage access.
func leaseCheck(c *Client) int {
	if c.Marks&MarkCancelled != 0 {
		return 0
	}
	return 1
}

// Grace is the lease's grace property: a holder stops touching storage
// once its leader context is cancelled.
var Grace = Property{"grace", Always,
	"lease: no client reads or writes storage after its leader context was cancelled (its renew deadline passed)",
	func(d *Design, s *State, ev *Event) bool {
		if ev == nil || !ev.Action.Kind.ByClient() {
			return false
		}
		switch ev.Action.Kind {
		case ActRead, ActWrite, ActArrive, ActStaleRead, ActApply:
		default:
			return false
		}
		return ev.Result != ResUnreachable && s.Clients[ev.Action.Client].Marks&MarkCancelled != 0
	}}

// leaseApplies refuses lease designs that could not act.
func (d Design) leaseApplies() error {
	if d.Lock != LockLease {
		return nil
	}
	if d.RenewTicks == 0 {
		return designErr("lock lease needs renew ≥ 1: the retry period, how often the leader renews and a candidate retries")
	}
	for _, cfg := range []struct {
		who             string
		lease, deadline int
	}{{"", d.TTLTicks, d.RenewDeadlineTicks}, {"candidate B's ", d.LeaseBTicks, d.DeadlineBTicks}} {
		if cfg.lease == 0 {
			cfg.lease = d.TTLTicks
		}
		if cfg.deadline == 0 {
			cfg.deadline = d.RenewDeadlineTicks
		}
		if cfg.deadline <= d.RenewTicks || cfg.lease <= cfg.deadline {
			return designErr("lock lease: %slease duration %d, renew deadline %d and retry period renew=%d: client-go requires LeaseDuration > RenewDeadline > RetryPeriod (NewLeaderElector)", cfg.who, cfg.lease, cfg.deadline, d.RenewTicks)
		}
	}
	if twoConfigs(&d) && d.Clients < 2 {
		return designErr("design parameters lease-b, deadline-b and rate-b configure candidate B: they need clients ≥ 2")
	}
	if top := d.HorizonTicks*max(d.RateB, 100)/100 + abs(d.ClientJumpTicks)*d.ClientJumps; top > 250 {
		return designErr("design parameter rate-b=%d with horizon=%d: candidate B's clock would pass 250 ticks (want rate-b × horizon / 100 at most 250)", d.RateB, d.HorizonTicks)
	}
	return nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Words.

func describeLeaseAcquire(d *Design, st *StepRecord) string {
	ev := &st.Event
	i := int(st.Action.Client)
	if ev.Result == ResUnreachable {
		return fmt.Sprintf("get the Lease → error: cut off (a partition); retry at t=%d", int(ev.Now)+1)
	}
	a := &st.After.Clients[i]
	clock := ownClock(d, &st.After, i)
	if ev.Result == ResRefused {
		return fmt.Sprintf("get the Lease (version %d) → held by %s, not expired by its clock (%d < observed %d + duration %d); retry at t=%d",
			st.After.Nodes[0].Fence, ClientName(int(ev.Other)-1), clock, a.Since, judgedDuration(d, &st.After, i), int(ev.Now)+d.RenewTicks)
	}
	s := "get the Lease → free"
	if o := ev.Other; o != 0 && o != uint8(i+1) {
		s = fmt.Sprintf("get the Lease → held by %s, expired by its clock", ClientName(int(o)-1))
	}
	s += fmt.Sprintf("; update (CAS on its version) → version %d, holder %s", st.After.Nodes[0].Fence, ClientName(i))
	if ev.Flags&EvExpiredHeld != 0 {
		s += fmt.Sprintf(", while %s still believes it leads", ClientName(int(ev.Other)-1))
	}
	return s + tokenSuffix(d, ev.Token, "leaseTransitions")
}

func describeLeaseRenew(d *Design, st *StepRecord) string {
	ev := &st.Event
	switch {
	case ev.Result == ResOK:
		return fmt.Sprintf("renew: update (CAS) → version %d", st.After.Nodes[0].Fence)
	case ev.Flags&EvGiveUp != 0:
		return "renew fails and its renew deadline has passed: it stops leading (its leader context is cancelled)"
	case ev.Result == ResUnreachable:
		return "renew: cut off from the API server (a partition); it retries"
	}
	return fmt.Sprintf("renew: the CAS fails (version %d is not its own), the Lease is %s and not expired by its clock; it retries", st.After.Nodes[0].Fence, owner(ev.Other))
}

func describeLeaseRelease(ev *Event) string {
	switch ev.Result {
	case ResOK:
		return "release: update the holder to empty, duration 1 (CAS) → released"
	case ResUnreachable:
		return "release: cut off from the API server; the lease is left to expire"
	}
	return "release: it is not the leader (or the CAS fails): nothing"
}
