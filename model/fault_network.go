package model

import "fmt"

// fault_network.go: faults of the network between a client and the
// storage: a write held in the network for a number of ticks (it arrives
// later, whatever the lock did meanwhile).

// delayActions: hold client i's next write for 1 … max-delay ticks.
func delayActions(d *Design, s *State, i int, buf []Action) []Action {
	c := &s.Clients[i]
	if int(s.Delayed) >= d.Delays || c.Phase != PhaseWrite || c.Ready != 0 || (d.Check == CheckValidity && c.Flags&FlagChecked == 0) || inTx(d) {
		return buf
	}
	for p := 1; p <= d.MaxDelayTicks; p++ {
		buf = append(buf, Action{Kind: ActDelay, Client: uint8(i), Arg: uint8(p)})
	}
	return buf
}

// delay sends client i's write and holds it in the network for p ticks.
func delay(d *Design, s *State, i int, p uint8, ev *Event) {
	c := &s.Clients[i]
	s.Delayed++
	c.Phase = PhaseArrive
	c.Ready = s.Now + p
	c.Flags &^= FlagChecked
	ev.Token, ev.Value = sentToken(d, c, false), c.Read+1
}

// Words.

func describeDelay(ev *Event, p uint8) string {
	return fmt.Sprintf("sends write counter = %d%s; the network holds it until t=%d", ev.Value, tokenNote(ev.Token), int(ev.Now)+int(p))
}
