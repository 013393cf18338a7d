package locktest

import (
	"errors"
	"fmt"

	"lockcheck/explore"
	"lockcheck/model"
	"lockcheck/reality"
)

// Why EtcdMutex is a Service of its own and not an option of Etcd: it is
// another lock. Etcd's design is a lease per acquire and a put-if-absent
// of one key, its Acquire answers at once, its TTL is the key's, and
// Extend renews it; EtcdMutex's is a queue of sessions under a prefix
// (the model's lock=etcd-mutex), its Acquire blocks until its turn, its
// TTL is the session's, kept alive by the session itself, and a lock is
// lost only with the session. An option would leave half of Etcd's
// fields meaning something else, and most of its options refused.

// etcdMutexDesign is EtcdMutex's design: etcd's queued Mutex with a
// 3-tick session (a 5s lease on 2s ticks, kept alive every 2.0s: one
// keep-alive a tick), Unlock's delete by name and Lock's Get of its own
// key once waitDeletes returns (session-check=get); a pause alone, or a
// slow job and a crash too.
func etcdMutexDesign(faults bool) string {
	s := "etcd-mutex/del/none/plain,session=3"
	if faults {
		s += ",slow=1,crashes=1"
	}
	return s
}

// checkEtcdMutex refuses the options locktest.EtcdMutex does not play.
func (cfg Config) checkEtcdMutex() error {
	if cfg.Service != EtcdMutex {
		return nil
	}
	switch {
	case cfg.Key != "":
		return fmt.Errorf("Config.Key %q with locktest.EtcdMutex: want it unset (the queue's prefix is Target.Key)", clip(cfg.Key))
	case cfg.Storage != NoFencing:
		return fmt.Errorf("Config.Storage %d with locktest.EtcdMutex: want NoFencing (a token would be the key's create revision, which Acquire does not report)", cfg.Storage)
	case cfg.LoseReleases || cfg.CheckValidity || cfg.RenewTicks != 0:
		return errors.New("Config.LoseReleases, CheckValidity and RenewTicks with locktest.EtcdMutex: not played (the Session keeps its lease alive itself; lost requests are played on Redis only); want them unset")
	case cfg.Parallel > maxEtcd:
		return fmt.Errorf("Config.Parallel %d with locktest.EtcdMutex: want 0 (%d) to %d schedules at once (an etcd member each)", cfg.Parallel, defaultEtcd, maxEtcd)
	case cfg.Tick != 0 && cfg.Tick != reality.EtcdTick:
		return fmt.Errorf("Config.Tick %v with locktest.EtcdMutex: want 0 or %v (a session's 5s lease is kept alive every 2.0s, one keep-alive a tick)", cfg.Tick, reality.EtcdTick)
	}
	return nil
}

// relocked is a behaviour for locktest.EtcdMutex: an acquire that wins
// with a key put after every client's first (jobs=1, no restarts: a key
// of a new session), that is, a waiter whose session ran out in the
// queue, whose Lock answered ErrSessionExpired, locks again on a new
// Session and holds: the run that tells a client which keeps its dead
// session.
var relocked = model.Property{Name: "relocked", Expect: model.Sometimes,
	Doc: "a waiter whose session ran out in the queue holds the lock on a new session",
	Bad: func(d *model.Design, s *model.State, ev *model.Event) bool {
		return ev != nil && d.Lock == model.LockEtcdMutex && ev.Action.Kind == model.ActAcquire && ev.Result == model.ResOK &&
			int(ev.Token) >= d.FirstToken+d.Clients*d.Jobs
	}}

// etcdMutexSchedules is, for locktest.EtcdMutex, the shortest run of
// relocked in the design with the pause alone (base), compared with the
// model of Design (full).
func (cfg Config) etcdMutexSchedules(base, full *model.Design) ([]Schedule, error) {
	if cfg.Service != EtcdMutex {
		return nil, nil
	}
	rep, err := explore.Check(explore.Config{Design: *base, Properties: []model.Property{relocked}, Bounds: explore.Bounds{Symmetry: true, Workers: 1}})
	if err != nil {
		return nil, fmt.Errorf("explore %s: %v", base.Name(), err)
	}
	var out []Schedule
	for _, r := range rep.Results {
		if len(r.Trace) > 0 && !sessionRace(base, r.Trace) {
			out = append(out, schedule(relocked.Name, r.Trace, cfg.Design(), full))
		}
	}
	return out, nil
}
