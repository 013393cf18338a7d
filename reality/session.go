package reality

import (
	"fmt"

	"lockcheck/model"
)

// etcd's concurrency.Session keeps its lease alive from a goroutine of its
// own: Session's NewSession calls Lessor.KeepAlive, whose
// sendKeepAliveLoop wakes every 500ms (retryConnWait) and sends a
// keep-alive for each lease whose nextKeepAlive has passed, and whose
// recvKeepAlive sets nextKeepAlive to the reply's time plus TTL/3
// (client/v3 v3.6.16 lease.go). The lease's TTL is whole seconds, so the
// keep-alive comes every TTL/3 seconds rounded up to the loop's next wake.
//
// The model says the same with renew=k and watchdog=session: a renewal
// that runs beside the worker (through its slow work; a hung worker does
// not stop it), frozen with the process in a pause (reality holds the
// client's traffic, the keep-alive's too), ended by a crash (the adapter
// orphans the session, etcdMutexLock.crashed), and, unlike watchdog=thread,
// renewing the key while the acquire's reply is held in the network: the
// key is put with the session's lease, which the keep-alive renews
// whether or not the client has heard the reply (the client's HTTP/2
// proxy holds the Txn's stream only, h2hold.go; TestEtcdHeldAcquireReply). ForClient gives etcd-mutex
// designs renew = TTL/3 in whole ticks. With ttl=3 on 2s ticks the lease
// is 5s (TTL), its keep-alive 5s/3 = 1.67s rounded up to the loop's wake:
// every 2.0s, one a tick, the first when the session is made, just before
// the clock starts; each keeps the lease to 5s after it, in the second
// half of the third tick on, as the model's renewal at the tick's start
// does: the two renew and expire at the same ticks. With a longer TTL the
// real keep-alive comes a little later than the model's (ttl=10 on 2s
// ticks: a 19s lease, every 6.5s, 3.25 ticks, where renew=3), and the two
// agree where no expiry hangs on a renewal's phase: while the holder runs
// both keep its key, and a fault before the first renewal is due freezes
// or ends both.

// sessionRenewTicks is the model's renew=k for an etcd Session's
// keep-alive on a lease of ttl ticks: TTL/3, at least one tick.
func sessionRenewTicks(ttl int) int { return max(1, ttl/3) }

// sessionRenewal adapts design d (an etcd lock with no renewal) to the
// session's keep-alive, renew=TTL/3 and watchdog=session, and refits the
// trace to it (refitRenewals): what ForClient does for etcd-mutex.
func sessionRenewal(d *model.Design, trace []model.Action) ([]model.Action, string, error) {
	d.RenewTicks, d.Watchdog = sessionRenewTicks(d.TTLTicks), model.WatchdogSession
	if err := d.Validate(); err != nil {
		return nil, "", err
	}
	out, f, err := refitRenewals(d, trace)
	if err != nil {
		return nil, "", err
	}
	how := fmt.Sprintf("renew=%d, watchdog=session: the Session's keep-alive every TTL/3, beside the worker", d.RenewTicks)
	if f.renewals > 0 {
		how += fmt.Sprintf("; %d renew %s added, each right after the tick it falls due at", f.renewals, plural(f.renewals, "step", "steps"))
	}
	if f.dropped > 0 || f.added > 0 {
		how += fmt.Sprintf("; %d %s that no longer fit dropped, %d added (the polls a tick then waits for, the steps that finish the jobs)", f.dropped, plural(f.dropped, "step", "steps"), f.added)
	}
	return out, how, nil
}

// refit counts what refitRenewals changed: renew steps added, steps
// dropped, and other steps added (the polls a tick waits for, the steps
// that finish the jobs).
type refit struct{ renewals, dropped, added int }

// refitRenewals replays trace on d, a design that renews where the
// trace's did not, and returns the schedule that fits it: every due
// renewal right after the tick it falls due at (where the session's
// keep-alive comes), a step that is no longer enabled dropped (a renewed
// key keeps a poller refused, so its read and write go), the client steps
// that a tick now waits for taken before it (clock=urgent: a poller polls
// each tick), and, when a step was dropped, after the trace the first
// enabled client step (not a fault) or else a tick until no client has
// anything left to do. The result is deterministic and replays in the
// model.
func refitRenewals(d *model.Design, trace []model.Action) (out []model.Action, f refit, err error) {
	s := model.Init(d)
	var buf []model.Action
	take := func(a model.Action) {
		s, _ = model.Step(d, s, a)
		out = append(out, a)
	}
	// first returns the first enabled action of s that pick accepts
	first := func(pick func(model.Action) bool) (model.Action, bool) {
		buf = model.Actions(d, &s, buf)
		for _, b := range buf {
			if pick(b) {
				return b, true
			}
		}
		return model.Action{}, false
	}
	renewals := func() {
		for {
			a, ok := first(func(b model.Action) bool { return b.Kind == model.ActRenew })
			if !ok {
				return
			}
			take(a)
			f.renewals++
		}
	}
	clientStep := func(b model.Action) bool { return b.Kind.ByClient() && !b.Kind.IsFault() }
	const maxSteps = 4096
	for _, a := range trace {
		if len(out) > maxSteps {
			return nil, refit{}, fmt.Errorf("refit for %s: more than %d steps", d.Name(), maxSteps)
		}
		if a.Kind == model.ActTick {
			for !model.Enabled(d, &s, a) {
				b, ok := first(clientStep)
				if !ok {
					break
				}
				take(b)
				f.added++
			}
			if !model.Enabled(d, &s, a) {
				f.dropped++
				continue
			}
			take(a)
			renewals()
			continue
		}
		if !model.Enabled(d, &s, a) {
			f.dropped++
			continue
		}
		take(a)
	}
	for f.dropped > 0 && len(out) <= maxSteps { // the trace's end no longer fits: finish the jobs
		a, ok := first(clientStep)
		if !ok {
			a, ok = first(func(b model.Action) bool { return b.Kind == model.ActTick })
			if !ok {
				return out, f, nil
			}
			take(a)
			f.added++
			renewals()
			continue
		}
		take(a)
		f.added++
	}
	if len(out) > maxSteps {
		return nil, refit{}, fmt.Errorf("refit for %s: more than %d steps", d.Name(), maxSteps)
	}
	return out, f, nil
}
