package model

import (
	"fmt"
	"strconv"
	"strings"
)

// ActionKind names what happens in one step. The words are the project's
// one vocabulary: the same in traces, scenario files, rapid's action labels
// and the timeline.
type ActionKind uint8

const (
	ActTick    ActionKind = iota // time moves one tick: keys expire, pauses end
	ActAcquire                   // SET lock NX PX (with INCR when acquire=script)
	ActIncr                      // INCR lock:fence as its own request
	ActExpire                    // EXPIRE lock TTL (acquire=set-expire)
	ActRead                      // read the counter from storage
	ActWrite                     // write read+1 to storage
	ActRelease                   // release: DEL, check-and-delete, or the GET of get-del
	ActDel                       // the DEL of get-del
	ActPause                     // fault: freeze the client for Arg ticks
	ActSlow                      // fault: the client's job is slow (work = slow-work)
	ActCrash                     // fault: the client crashes for good
	numActionKinds
)

var actionWords = [numActionKinds]string{"tick", "acquire", "incr", "expire", "read", "write", "release", "del", "pause", "slow", "crash"}

func (k ActionKind) String() string {
	if k < numActionKinds {
		return actionWords[k]
	}
	return "action(" + strconv.Itoa(int(k)) + ")"
}

// IsFault reports whether the action is a fault drawn from the budget rather
// than a step of a client's program or of time.
func (k ActionKind) IsFault() bool { return k == ActPause || k == ActSlow || k == ActCrash }

// Action is one thing that can happen: a comparable value.
type Action struct {
	Kind   ActionKind
	Client uint8 // which client (not used by tick)
	Arg    uint8 // pause length in ticks
}

// ClientName is A, B, C, … for client 0, 1, 2, ….
func ClientName(i int) string { return string(rune('A' + i)) }

// String is the action in scenario-file words: "tick", "A acquire", "B pause 14".
func (a Action) String() string {
	if a.Kind == ActTick {
		return "tick"
	}
	s := ClientName(int(a.Client)) + " " + a.Kind.String()
	if a.Kind == ActPause {
		s += " " + strconv.Itoa(int(a.Arg))
	}
	return s
}

// ParseAction reads an action written by Action.String.
func ParseAction(s string) (Action, error) {
	f := strings.Fields(s)
	if len(f) == 1 && f[0] == "tick" {
		return Action{Kind: ActTick}, nil
	}
	if len(f) < 2 || len(f[0]) != 1 || f[0][0] < 'A' || f[0][0] >= 'A'+MaxClients {
		return Action{}, fmt.Errorf("action %q: want \"tick\" or \"<client A-%c> <verb>\" (verbs: %s)", clip(s), 'A'+MaxClients-1, strings.Join(actionWords[1:], ", "))
	}
	a := Action{Client: f[0][0] - 'A'}
	kind := -1
	for i, w := range actionWords {
		if i > 0 && w == f[1] {
			kind = i
		}
	}
	if kind < 0 {
		return Action{}, fmt.Errorf("action %q: unknown verb %q (verbs: %s)", clip(s), clip(f[1]), strings.Join(actionWords[1:], ", "))
	}
	a.Kind = ActionKind(kind)
	want := 2
	if a.Kind == ActPause {
		want = 3
	}
	if len(f) != want {
		if a.Kind == ActPause {
			return Action{}, fmt.Errorf("action %q: want \"%s pause <ticks 1-%d>\"", clip(s), f[0], MaxWaitTicks)
		}
		return Action{}, fmt.Errorf("action %q: %q takes no argument", clip(s), f[1])
	}
	if a.Kind == ActPause {
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 1 || n > MaxWaitTicks {
			return Action{}, fmt.Errorf("action %q: pause length %q: want 1 to %d ticks", clip(s), clip(f[2]), MaxWaitTicks)
		}
		a.Arg = uint8(n)
	}
	return a, nil
}

// Result is the answer a request got.
type Result uint8

const (
	ResNone     Result = iota
	ResOK              // SET NX won, INCR/EXPIRE/GET answered, DEL removed the key
	ResRefused         // SET NX found the key: retry next tick
	ResAccepted        // storage accepted the read or write
	ResRejected        // storage refused the read or write (fencing, CAS)
	ResNoop            // release found nothing to delete, EXPIRE found no key
)

// Event flags: what a step caused that properties and the timeline need.
const (
	EvUnsafe       uint16 = 1 << iota // ✗: the client acted on storage without holding the key
	EvRemovedOther                    // a release removed another client's key
	EvExpired                         // tick: a key expired
	EvExpiredHeld                     // tick: a key expired while its holder still believes in it
	EvResumed                         // tick: a paused client resumed
	EvJobDone                         // the client's job finished (release done)
)

// Event is what one step did. It is a fixed-size value: no allocation.
type Event struct {
	Action Action
	Now    uint8  // the tick the step happened at (for tick: the new tick)
	Result Result // the answer to the request
	Flags  uint16 // EvUnsafe, …
	Token  uint16 // token sent or received
	MaxTok uint16 // storage's highest token, when it refused
	Value  uint8  // value read or written; GET: owner+1 seen
	Other  uint8  // the key's holder (client+1) at the step; 0 none
	// For ticks: masks of clients whose key expired / who resumed.
	ExpiredMask uint8
	ResumedMask uint8
}

// Actions appends to buf the actions enabled in s, in a fixed order: client
// steps by client, then faults by client, then the tick. The order is
// deterministic, so a path of indices replays.
func Actions(d *Design, s *State, buf []Action) []Action {
	buf = buf[:0]
	anyStep := false
	anyLive := false
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if !c.Live() {
			continue
		}
		anyLive = true
		if c.Ready != 0 {
			continue
		}
		anyStep = true
		buf = append(buf, Action{Kind: phaseAction[c.Phase], Client: uint8(i)})
	}
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if !c.Live() || c.Flags&FlagStarted == 0 {
			continue
		}
		if int(s.PausesUsed) < d.Pauses {
			for p := 1; p <= d.MaxPauseTicks; p++ {
				if int(s.Now)+p > int(c.Ready) { // only pauses that delay it
					buf = append(buf, Action{Kind: ActPause, Client: uint8(i), Arg: uint8(p)})
				}
			}
		}
		if int(s.SlowUsed) < d.SlowJobs && c.Phase == PhaseRead && c.Flags&FlagSlow == 0 && d.SlowWorkTicks != d.WorkTicks {
			buf = append(buf, Action{Kind: ActSlow, Client: uint8(i)})
		}
		if int(s.CrashesUsed) < d.Crashes {
			buf = append(buf, Action{Kind: ActCrash, Client: uint8(i)})
		}
	}
	if anyLive && int(s.Now) < d.HorizonTicks && (d.Clock == ClockFree || !anyStep) {
		buf = append(buf, Action{Kind: ActTick})
	}
	return buf
}

var phaseAction = [numPhases]ActionKind{
	PhaseIncr:    ActIncr,
	PhaseAcquire: ActAcquire,
	PhaseExpire:  ActExpire,
	PhaseRead:    ActRead,
	PhaseWrite:   ActWrite,
	PhaseRelease: ActRelease,
	PhaseDel:     ActDel,
}

// Enabled reports whether a is among Actions(d, s).
func Enabled(d *Design, s *State, a Action) bool {
	var buf [64]Action
	for _, b := range Actions(d, s, buf[:0]) {
		if b == a {
			return true
		}
	}
	return false
}

// Step is the model: the state after a, and what a caused. It is pure: s is
// a copy, nothing else is read or written. a must be enabled in s.
func Step(d *Design, s State, a Action) (State, Event) {
	ev := Event{Action: a, Now: s.Now}
	if a.Kind == ActTick {
		tick(d, &s, &ev)
		return s, ev
	}
	i := int(a.Client)
	c := &s.Clients[i]
	key := &s.Nodes[0]
	me := uint8(i + 1)
	ev.Other = key.Owner
	switch a.Kind {
	case ActPause:
		s.PausesUsed++
		c.Ready = s.Now + a.Arg
		c.Flags |= FlagPaused
		return s, ev
	case ActSlow:
		s.SlowUsed++
		c.Flags |= FlagSlow
		return s, ev
	case ActCrash:
		s.CrashesUsed++
		*c = Client{Phase: PhaseCrashed}
		return s, ev
	}
	c.Flags |= FlagStarted
	switch a.Kind {
	case ActIncr:
		key.Fence++
		c.Token = key.Fence
		ev.Result, ev.Token = ResOK, c.Token
		if d.Acquire == AcquireIncrBefore {
			c.Phase = PhaseAcquire
		} else {
			c.Phase = PhaseRead
		}
	case ActAcquire:
		if key.Owner != 0 && d.Bug != BugSetWithoutNX {
			ev.Result = ResRefused
			c.Ready = s.Now + 1
			break
		}
		ev.Result = ResOK
		key.Owner = me
		key.Exp = s.Now + uint8(d.TTLTicks)
		c.Flags |= FlagBelieves
		c.Phase = PhaseRead
		switch d.Acquire {
		case AcquireScript:
			if d.Fence != FenceNone {
				key.Fence++
				c.Token = key.Fence
				ev.Token = c.Token
			}
		case AcquireIncrAfter:
			if d.Fence != FenceNone {
				c.Phase = PhaseIncr
			}
		case AcquireSetExpire:
			key.Exp = 0
			c.Phase = PhaseExpire
			if d.Fence != FenceNone {
				key.Fence++
				c.Token = key.Fence
				ev.Token = c.Token
			}
		}
	case ActExpire:
		c.Phase = PhaseRead
		if key.Owner == 0 {
			ev.Result = ResNoop
			break
		}
		ev.Result = ResOK
		key.Exp = s.Now + uint8(d.TTLTicks)
	case ActRead:
		if key.Owner != me {
			ev.Flags |= EvUnsafe
		}
		tok := sentToken(d, c, true)
		ev.Token = tok
		if !storageRead(d, &s.Store, tok) {
			ev.Result, ev.MaxTok = ResRejected, s.Store.MaxTok
			c.Phase = PhaseRelease
			break
		}
		ev.Result, ev.Value = ResAccepted, s.Store.Counter
		c.Read, c.Version = s.Store.Counter, s.Store.Version
		c.Phase = PhaseWrite
		work := d.WorkTicks
		if c.Flags&FlagSlow != 0 {
			work = d.SlowWorkTicks
		}
		if work > 0 {
			c.Ready = s.Now + uint8(work)
		}
	case ActWrite:
		if key.Owner != me {
			ev.Flags |= EvUnsafe
		}
		tok := sentToken(d, c, false)
		ev.Token, ev.Value = tok, c.Read+1
		c.Phase = PhaseRelease
		if !storageWrite(d, &s.Store, tok, c.Version) {
			ev.Result, ev.MaxTok = ResRejected, s.Store.MaxTok
			break
		}
		ev.Result = ResAccepted
		s.Store.Counter = c.Read + 1
		s.Store.Accepted++
	case ActRelease:
		switch d.Release {
		case ReleaseDel:
			deleteKey(key, me, &ev)
			finishJob(c, &ev)
		case ReleaseCAD:
			if key.Owner == me || (d.Bug == BugCADNoCheck && key.Owner != 0) {
				deleteKey(key, me, &ev)
			} else {
				ev.Result = ResNoop
			}
			finishJob(c, &ev)
		case ReleaseGetDel:
			ev.Result, ev.Value = ResOK, key.Owner
			if key.Owner == me {
				c.Flags |= FlagSawMine
			}
			c.Phase = PhaseDel
		}
	case ActDel:
		if c.Flags&FlagSawMine != 0 {
			deleteKey(key, me, &ev)
		} else {
			ev.Result = ResNoop
		}
		finishJob(c, &ev)
	}
	return s, ev
}

// sentToken is the token the client sends with a read or a write, 0 for none.
func sentToken(d *Design, c *Client, read bool) uint16 {
	if d.Fence == FenceRW || (d.Fence == FenceWrite && !read) {
		return c.Token
	}
	return 0
}

// storageRead applies a read with token tok (0: none); false if refused.
func storageRead(d *Design, st *Storage, tok uint16) bool {
	if tok == 0 {
		return true
	}
	switch d.Storage {
	case StorageMaxToken:
		if tok < st.MaxTok && d.Bug != BugNoTokenCheck {
			return false
		}
		if d.Bug != BugReadNoRecord && tok > st.MaxTok {
			st.MaxTok = tok
		}
	case StorageMaxWrite:
		return tok >= st.MaxTok || d.Bug == BugNoTokenCheck
	}
	return true
}

// storageWrite checks a write with token tok (0: none) and the version the
// client read, records what the storage records, and reports acceptance.
// The caller sets the counter.
func storageWrite(d *Design, st *Storage, tok uint16, version uint8) bool {
	switch d.Storage {
	case StorageCAS:
		if st.Version != version {
			return false
		}
		st.Version++
	case StorageMaxToken, StorageMaxWrite:
		if tok != 0 {
			if tok < st.MaxTok && d.Bug != BugNoTokenCheck {
				return false
			}
			if tok > st.MaxTok {
				st.MaxTok = tok
			}
		}
	case StorageCondUpdate:
		if tok != 0 {
			if tok <= st.MaxTok && d.Bug != BugNoTokenCheck {
				return false
			}
			if tok > st.MaxTok {
				st.MaxTok = tok
			}
		}
	}
	return true
}

func deleteKey(key *Node, me uint8, ev *Event) {
	if key.Owner == 0 {
		ev.Result = ResNoop
		return
	}
	if key.Owner != me {
		ev.Flags |= EvRemovedOther
	}
	ev.Result = ResOK
	key.Owner, key.Exp = 0, 0
}

func finishJob(c *Client, ev *Event) {
	c.Phase = PhaseDone
	*c = Client{Phase: PhaseDone}
	ev.Flags |= EvJobDone
}

// tick moves time: keys whose expiry is reached vanish, waits that end are
// cleared (so equal situations are equal states).
func tick(d *Design, s *State, ev *Event) {
	s.Now++
	ev.Now = s.Now
	for n := range s.Nodes {
		k := &s.Nodes[n]
		if k.Owner != 0 && k.Exp == s.Now {
			ev.Flags |= EvExpired
			ev.ExpiredMask |= 1 << (k.Owner - 1)
			if s.Clients[k.Owner-1].Believes() {
				ev.Flags |= EvExpiredHeld
			}
			k.Owner, k.Exp = 0, 0
		}
	}
	for i := 0; i < d.Clients; i++ {
		c := &s.Clients[i]
		if c.Ready == s.Now {
			c.Ready = 0
			if c.Flags&FlagPaused != 0 {
				c.Flags &^= FlagPaused
				ev.Flags |= EvResumed
				ev.ResumedMask |= 1 << i
			}
		}
	}
}
