package model

import "fmt"

// fence_counter.go: an external fencing counter (counter=external) for the
// lock services that hand out no token (redlock, db): a separate single
// Redis node. A client that has won the lock sends INCR fence to it as its
// own request and sends the answer with its storage requests. Its node's
// crash (counter-crashes, a budgeted fault) restarts it empty: tokens
// repeat, as with a Redis lock node without persistence.

// externalCounter reports whether the design takes its tokens from the
// external counter.
func externalCounter(d *Design) bool { return d.Counter == CounterExternal }

// counterActions: the counter node's crash, while the budget lasts and the
// counter has something to lose.
func counterActions(d *Design, s *State, buf []Action) []Action {
	if int(s.Used[FaultCounterCrash]) < d.CounterCrashes && s.CounterFence != uint16(d.FirstToken-1) {
		buf = append(buf, Action{Kind: ActCounterCrash})
	}
	return buf
}

// counterIncr is client i's INCR fence on the counter node, after it won
// the lock.
func counterIncr(s *State, i int, ev *Event) {
	c := &s.Clients[i]
	s.CounterFence++
	c.Token = s.CounterFence
	ev.Token, ev.Result = c.Token, ResOK
	c.Phase = PhaseRead
}

// counterCrash: the counter's node crashes and restarts empty.
func counterCrash(d *Design, s *State, ev *Event) {
	s.Used[FaultCounterCrash]++
	ev.Token = s.CounterFence
	s.CounterFence = uint16(d.FirstToken - 1)
	ev.Result = ResOK
}

// Words.

func describeCounterIncr(ev *Event) string {
	return fmt.Sprintf("INCR fence on the fencing-counter node → %d", ev.Token)
}

func describeCounterCrash(st *StepRecord) string {
	return fmt.Sprintf("the fencing-counter node crashes and restarts empty (it had reached %d): tokens repeat", st.Event.Token)
}
