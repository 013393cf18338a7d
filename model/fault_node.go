package model

import "fmt"

// fault_node.go: faults of a lock node, each drawn from its budget: a crash
// (losing its keys and fence counter unless persist=1; back at once or after
// restart ticks) and a clock jump forward (its keys expire early). The
// replica's failover is in lock_replica.go.

// nodeFaultActions: node crashes and clock jumps on every crashable node.
func nodeFaultActions(d *Design, s *State, buf []Action) []Action {
	for k := 0; k < crashableNodes(d); k++ {
		n := &s.Nodes[k]
		if int(s.NodeCrashed) < d.NodeCrashes && n.Back == 0 {
			buf = append(buf, Action{Kind: ActNodeCrash, Arg: uint8(k)})
		}
		if int(s.Jumped) < d.ClockJumps && n.Owner != 0 && n.Exp != 0 {
			buf = append(buf, Action{Kind: ActClockJump, Arg: uint8(k)})
		}
	}
	return buf
}

// nodeCrash: lock node k crashes and restarts (at once or restart ticks later).
func nodeCrash(d *Design, s *State, k int, ev *Event) {
	s.NodeCrashed++
	n := &s.Nodes[k]
	ev.Other = n.Owner
	if d.Persist == 0 {
		n.Owner, n.Exp = 0, 0
		n.Fence = uint16(d.FirstToken - 1)
	}
	if d.RestartTicks > 0 {
		n.Back = s.Now + uint8(d.RestartTicks)
	}
	// the replica's primary restarts in place and the replica resyncs from
	// it: without persistence the restarted, empty primary empties it too
	nodeRestarted(d, s)
}

// clockJump: lock node k's clock jumps forward by jump ticks.
func clockJump(d *Design, s *State, k int, ev *Event) {
	s.Jumped++
	n := &s.Nodes[k]
	ev.Other = n.Owner
	if int(n.Exp) <= int(s.Now)+d.JumpTicks {
		expireKey(d, s, k, ev)
	} else {
		n.Exp -= uint8(d.JumpTicks)
	}
}

// Words.

func describeNodeCrash(d *Design, ev *Event, k int) string {
	s := nodeName(d, k) + " crashes"
	if d.Persist == 0 {
		s += " and loses its keys"
		if nodeHoldsFence(d) {
			s += " and its fence counter"
		}
	} else {
		s += ", its keys kept on disk"
	}
	if d.RestartTicks > 0 {
		s += fmt.Sprintf("; back at t=%d", int(ev.Now)+d.RestartTicks)
	} else {
		s += "; restarts at once"
	}
	return s
}

func describeClockJump(d *Design, ev *Event, k int) string {
	return fmt.Sprintf("%s's clock jumps %d ticks forward (key %s)", nodeName(d, k), d.JumpTicks, owner(ev.Other))
}
