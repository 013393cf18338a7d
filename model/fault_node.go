package model

import (
	"fmt"
	"strings"
)

// fault_node.go: faults of a lock node, each drawn from its budget: a crash
// (losing its keys and fence counter unless persist=1; back at once or after
// restart ticks) and a clock jump forward (its keys expire early). The
// replica's failover is in lock_replica.go.

// nodeFaultActions: node crashes and clock jumps on every crashable node
// (or the one of fault-node=K), at any time (or as node-at= says).
func nodeFaultActions(d *Design, s *State, buf []Action) []Action {
	for k := 0; k < crashableNodes(d); k++ {
		if !nodeFaultAt(d, s, k) {
			continue
		}
		n := &s.Nodes[k]
		if int(s.Used[FaultNodeCrash]) < d.NodeCrashes && n.Back == 0 {
			buf = append(buf, Action{Kind: ActNodeCrash, Arg: uint8(k)})
		}
		if int(s.Used[FaultClockJump]) < d.ClockJumps && n.Owner != 0 && n.Exp != 0 {
			buf = append(buf, Action{Kind: ActClockJump, Arg: uint8(k)})
		}
	}
	return buf
}

// nodeFaultAt reports whether a node fault may fall on lock node k now:
// k is the node of fault-node=K (or any), and with node-at=P the client
// whose key node k holds is alive and its next step is of kind P (its
// phase: a holder at work before its write is "at write"). A node whose
// key nobody holds takes no placed fault. As client faults' pause-at=…,
// placing a fault where it matters shrinks the search; the replica's
// failover (lock_replica.go) asks the same of the primary.
func nodeFaultAt(d *Design, s *State, k int) bool {
	if d.FaultNode != 0 && k != d.FaultNode-1 {
		return false
	}
	if d.NodeAt == PlaceAny {
		return true
	}
	o := int(s.Nodes[k].Owner) - 1
	return o >= 0 && s.Clients[o].Live() && at(d, s, o, d.NodeAt)
}

// nodeFaultsApply refuses node-at and fault-node where they cannot act.
func (d Design) nodeFaultsApply() error {
	budget := d.NodeCrashes + d.ClockJumps
	if d.Lock == LockReplica {
		budget += d.Failovers
	}
	switch {
	case budget == 0 && d.NodeAt != PlaceAny:
		return designErr("design parameter node-at applies only with node-crashes, jumps or (replica) failovers ≥ 1")
	case budget == 0 && d.FaultNode != 0:
		return designErr("design parameter fault-node applies only with node-crashes, jumps or (replica) failovers ≥ 1")
	case d.FaultNode > crashableNodes(&d):
		return designErr("design parameter fault-node=%d: lock %s has %d node(s) that fail (want 1 to %d, or 0: any)", d.FaultNode, d.Lock, crashableNodes(&d), crashableNodes(&d))
	case d.NodeAt == PlaceAcquire && d.Reenter == ReenterNone:
		return designErr("node-at=acquire: a key's holder takes no acquire step (it needs reenter=nx or owner: a nested acquire)")
	}
	return nil
}

// nodeNote is the bounds line's words for node-at and fault-node.
func nodeNote(d *Design) string {
	var w []string
	if d.FaultNode != 0 {
		w = append(w, fmt.Sprintf("node %d", d.FaultNode))
	}
	if d.NodeAt != PlaceAny {
		w = append(w, "before the holder's "+placeKinds[d.NodeAt].String())
	}
	if len(w) == 0 {
		return ""
	}
	return " (" + strings.Join(w, ", ") + ")"
}

// nodeCrash: lock node k crashes and restarts (at once or restart ticks later).
func nodeCrash(d *Design, s *State, k int, ev *Event) {
	s.Used[FaultNodeCrash]++
	n := &s.Nodes[k]
	ev.Other = n.Owner
	switch {
	case d.Persist == 0:
		n.Owner, n.Exp = 0, 0
		n.Fence = uint16(d.FirstToken - 1)
	case d.FsyncTicks > 0:
		reload(s, n, &s.Nodes[diskNode(d)])
	}
	if d.RestartTicks > 0 {
		n.Back = s.Now + uint8(d.RestartTicks)
	}
	// the replica's primary restarts in place and the replica resyncs from
	// it: without persistence the restarted, empty primary empties it too
	nodeRestarted(d, s)
	if d.Lock == LockReplica {
		ackBroken(d, s, ev)
	}
}

// fsync writes node n's key and fence counter to its append-only file
// (persist=1, fsync=N: at every N-th tick, after that tick's expiries).
func fsync(n Node, disk *Node) {
	disk.Owner, disk.Exp, disk.Fence = n.Owner, n.Exp, n.Fence
}

// reload restarts node n from its append-only file: the writes since the
// last fsync are lost. A SET, an INCR, a PEXPIRE, a DEL each count: the
// key can be lost while the fence counter survives (acquire=incr-before),
// the counter's last INCRs lost while the key survives (incr-after), or a
// released key come back. A reloaded key whose expiry has passed is gone
// (Redis stores absolute expiry times).
func reload(s *State, n, disk *Node) {
	n.Owner, n.Exp, n.Fence = disk.Owner, disk.Exp, disk.Fence
	if n.Exp != 0 && n.Exp <= s.Now {
		n.Owner, n.Exp = 0, 0
	}
}

// clockJump: lock node k's clock jumps forward by jump ticks.
func clockJump(d *Design, s *State, k int, ev *Event) {
	s.Used[FaultClockJump]++
	n := &s.Nodes[k]
	ev.Other = n.Owner
	if int(n.Exp) <= int(s.Now)+d.JumpTicks {
		expireKey(d, s, k, ev)
	} else {
		n.Exp -= uint8(d.JumpTicks)
	}
}

// Words.

func describeNodeCrash(d *Design, st *StepRecord, k int) string {
	ev := &st.Event
	s := nodeName(d, k) + " crashes"
	switch {
	case d.Persist == 0:
		s += " and loses its keys"
		if nodeHoldsFence(d) {
			s += " and its fence counter"
		}
	case d.FsyncTicks > 0:
		s += describeReload(d, st)
	default:
		s += ", its keys kept on disk"
	}
	if d.RestartTicks > 0 {
		s += fmt.Sprintf("; back at t=%d", int(ev.Now)+d.RestartTicks)
	} else {
		s += "; restarts at once"
	}
	s += ackBrokenWords(ev)
	return s
}

// describeReload tells what a restart from the append-only file kept and
// lost: the key and the fence counter apart.
func describeReload(d *Design, st *StepRecord) string {
	b, a := &st.Before.Nodes[0], &st.After.Nodes[0]
	sync := int(st.Event.Now) / d.FsyncTicks * d.FsyncTicks
	s := fmt.Sprintf(" and reloads its append-only file, fsynced as t=%d began: ", max(sync, 1))
	var lost, kept []string
	switch {
	case b.Owner == a.Owner && b.Exp == a.Exp:
		kept = append(kept, "the key ("+owner(a.Owner)+")")
	case a.Owner == 0:
		lost = append(lost, "the key ("+owner(b.Owner)+")")
	case b.Owner == a.Owner:
		lost = append(lost, fmt.Sprintf("the key's last renewal (%s's key now ends at t=%d)", owner(a.Owner), a.Exp))
	default:
		lost = append(lost, fmt.Sprintf("the key's last writes (the key is %s's again, was %s)", owner(a.Owner), owner(b.Owner)))
	}
	if b.Fence == a.Fence {
		kept = append(kept, fmt.Sprintf("the fence counter (%d)", a.Fence))
	} else {
		lost = append(lost, fmt.Sprintf("the fence counter's last INCRs (%d → %d: tokens repeat)", b.Fence, a.Fence))
	}
	if len(lost) > 0 {
		s += "lost " + strings.Join(lost, " and ")
		if len(kept) > 0 {
			s += "; kept "
		}
	} else {
		s += "nothing lost; kept "
	}
	return s + strings.Join(kept, " and ")
}

func describeClockJump(d *Design, ev *Event, k int) string {
	return fmt.Sprintf("%s's clock jumps %d ticks forward (key %s)", nodeName(d, k), d.JumpTicks, owner(ev.Other))
}
