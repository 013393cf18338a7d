package reality

import (
	"errors"
	"fmt"
	"strings"

	"lockcheck/counterexamples"
	"lockcheck/model"
)

// maxInputBytes bounds what Load reads.
const maxInputBytes = 4 << 20

// Load reads a scenario file ("design NAME" and action lines, as in
// model/scenarios) or a counterexample file, and checks that its schedule
// replays in the model (a scenario: giving what its expect lines say) and
// can be played for real. Errors are one line and name the source.
func Load(source, text string) (*Input, error) {
	if len(text) > maxInputBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a scenario may have", source, len(text), maxInputBytes)
	}
	var in *Input
	var expect *model.Scenario // a scenario whose expect lines the model must meet
	if firstLine(text) == counterexamples.Magic {
		f, err := counterexamples.Parse(text)
		if err != nil {
			var pe *counterexamples.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %s", source, pe.Line, pe.Msg)
			}
			return nil, fmt.Errorf("%s: %v", source, err)
		}
		in = &Input{Source: source, Kind: "counterexample", DesignName: f.Design.Name(), Design: f.Design, Trace: f.Trace,
			Doc: "counterexample: " + f.Property}
	} else {
		sc, err := model.ParseScenario(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", source, err)
		}
		in = &Input{Source: source, Kind: "scenario", DesignName: sc.DesignName, Design: sc.Design, Trace: sc.Trace, Doc: sc.Doc}
		expect = sc
	}
	if len(in.Trace) == 0 {
		return nil, fmt.Errorf("%s: no steps to play (want action lines after the design line)", source)
	}
	if err := Playable(&in.Design); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	run, err := model.Replay(&in.Design, in.Trace)
	if err != nil {
		return nil, fmt.Errorf("%s: the schedule does not replay in the model: %v", source, err)
	}
	if expect != nil {
		// a cut or edited scenario must not be played as if it were the one
		// its expect lines describe
		if bad := expect.CheckExpect(run); len(bad) > 0 {
			return nil, fmt.Errorf("%s: the model's replay does not give what the file expects (%s; truncated or edited?)", source, strings.Join(bad, "; "))
		}
	}
	if err := heldPlayable(&in.Design, "", run); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return in, nil
}

// SessionRace reports whether a pauses a client of a session lock
// (ZooKeeper, etcd's Mutex) for exactly its session's ticks: the model's
// session lives (the client resumes in the tick its session would end),
// a real one, whose timeout is half a tick shorter, has expired. Such a
// schedule says nothing about the client.
func SessionRace(d *model.Design, a model.Action) bool {
	return (d.Lock == model.LockZooKeeper || d.Lock == model.LockEtcdMutex) && a.Kind == model.ActPause && int(a.Arg) == d.SessionTicks
}

// heldPlayable reports whether the requests the schedule's delays hold can
// be held for real: writes, the replies of a Redis or etcd lock's
// acquires, and releases to one Redis node (a *NotPlayable if not). client is the lock client ("" any).
func heldPlayable(d *model.Design, client string, run *model.Run) error {
	for _, st := range run.Steps {
		if d.Lock == model.LockEtcdMutex && SessionRace(d, st.Action) {
			return &NotPlayable{Design: d.Name(), Client: client,
				Because: fmt.Sprintf("step %d (%s) pauses for exactly the session's %d ticks: the model's session lives (it resumes in the tick its lease would run out), a real lease kept alive just before each tick has run out half a tick before; pause shorter or longer", st.Seq, st.Action, d.SessionTicks)}
		}
		if queueRace(d, &st) {
			return &NotPlayable{Design: d.Name(), Client: client,
				Because: fmt.Sprintf("step %d (%s) pauses a waiter past its session once its key is the first: a real Lock returns within milliseconds of its predecessor's delete, before the pause holds it, or not; pause shorter, or after its acquire", st.Seq, st.Action)}
		}
		if st.Action.Kind != model.ActDelay {
			continue
		}
		k := model.RequestKind(d, &st)
		// an etcd lock's acquire is a transaction on a gRPC stream, whose
		// reply the client's HTTP/2 proxy holds (h2hold.go)
		single := d.Lock == model.LockRedis || d.Lock == model.LockReplica || d.Lock == model.LockEtcd
		release := (k == model.ActRelease || k == model.ActDel) && d.Lock == model.LockRedis // client.delayRelease
		if release && client != "" && client != ClientReference {
			if err := heldReleasePlayable(d, client, run, st.Seq); err != nil {
				return err
			}
		}
		if k != model.ActWrite && (k != model.ActAcquire || !single) && !release {
			return &NotPlayable{Design: d.Name(), Client: client,
				Because: fmt.Sprintf("step %d (%s) holds its %s, and real runs hold writes, the replies of a Redis or etcd lock's acquires and releases to one Redis node only", st.Seq, st.Action, k)}
		}
		if k == model.ActAcquire && client == ClientRedsync && int(st.Action.Arg) >= d.TTLTicks && d.Check != model.CheckAcquire {
			// found by playing reality/testdata/acquire-reply-ttl.txt
			// (TestHeldAcquireReply): the model's client trusts the late OK
			return &NotPlayable{Design: d.Name(), Client: client,
				Because: fmt.Sprintf("step %d (%s) holds the acquire's reply for %d ticks, a whole TTL: redsync measures its validity at the acquire (the TTL less the time since it sent, less its drift: Mutex.lockContext) and refuses, where the design's client trusts the late OK; play it with check=acquire, the model's redsync", st.Seq, st.Action, st.Action.Arg)}
		}
	}
	return nil
}

// heldReleasePlayable reports whether a library's release held at step
// seq can be held for real: its call waits in the client's proxy until
// the arrive (client.holdRelease), so nothing else of that client may
// reach the lock before: no renewal, pause, crash, loss or partition of
// it comes between the two (the model's watchdog renews while the release
// is on its way; for real the renewal would wait behind it at the gate).
func heldReleasePlayable(d *model.Design, client string, run *model.Run, seq int) error {
	held := run.Steps[seq-1].Action
	for _, st := range run.Steps[seq:] {
		a := st.Action
		if a.Kind == model.ActNodeCrash {
			return &NotPlayable{Design: d.Name(), Client: client,
				Because: fmt.Sprintf("step %d (%s) comes while client %s's release, held at step %d, is on its way: a library's held release is played with the lock's server up until it lands (its request waits on a connection the crash would close)", st.Seq, a, model.ClientName(int(held.Client)), seq)}
		}
		if a.Client != held.Client || !a.Kind.ByClient() {
			continue
		}
		if a.Kind == model.ActArrive {
			return nil
		}
		return &NotPlayable{Design: d.Name(), Client: client,
			Because: fmt.Sprintf("step %d (%s) comes while client %s's release, held at step %d, is on its way: a library's held release is played with nothing else of its client in between (no renewal, pause, crash, loss or partition)", st.Seq, a, model.ClientName(int(held.Client)), seq)}
	}
	return nil
}

func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
