package reality

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"lockcheck/explore"
	"lockcheck/model"
)

// TestEtcdQueuedMutex plays etcd's blocking Mutex.Lock, its queue and its
// sessions (world_etcd_mutex.go) against the model's etcd-mutex design,
// step by step: the shortest counterexample of every property the design
// violates (found here by the exhaustive search), the scenario of a
// waiter whose own session expires in the queue (Lock's Get answers
// ErrSessionExpired, in both worlds at the same step), and a few seeded
// random schedules with a pause and a crash. Each run has an etcd member
// of its own and a redis-server of the test's own for the storage, and
// all run at once (mostly sleep: 2s ticks).
func TestEtcdQueuedMutex(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: etcd runs of 10 to 30s (2s ticks), side by side")
	}
	t.Parallel()
	srv := lockServer(t, false)

	type run struct {
		name string
		in   *Input
		want func(t *testing.T, c *Comparison)
		// noQueue: planted TryLock; the run must differ at B's first acquire
		noQueue bool
	}
	var runs []run
	// the shortest counterexamples
	d, err := model.ParseDesign("etcd-mutex/del/none/plain,clients=2,session=3")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := explore.Check(explore.Config{Design: d, Bounds: explore.Bounds{Symmetry: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Status != explore.Violated {
			continue
		}
		prop := r.Property
		runs = append(runs, run{name: prop, in: &Input{Source: "shortest " + prop, Kind: "counterexample", DesignName: d.Name(), Design: d, Trace: r.Trace},
			want: func(t *testing.T, c *Comparison) {
				for _, p := range c.Real.Properties {
					if p.Property == prop && !p.Shown {
						t.Errorf("the real run does not show %s:\n%s", prop, c.Text())
					}
				}
			}})
	}
	if len(runs) < 2 {
		t.Fatalf("%s: want counterexamples of exclusive and no-lost-update at least, got %d", d.Name(), len(runs))
	}
	// the waiter whose session expires in the queue
	waiter := etcdInput(t, "testdata/etcd-mutex-waiter.txt")
	runs = append(runs, run{name: "waiter", in: waiter, want: func(t *testing.T, c *Comparison) {
		st := c.play.Steps[15] // step 15: B's Lock returns
		if st.Took != model.ActAcquire || st.Result != model.ResNoop || st.Told != "Lock → "+errText(concurrency.ErrSessionExpired) {
			t.Errorf("step 15: want B's Lock to answer ErrSessionExpired, got %v %v (%q)", st.Took, st.Result, st.Told)
		}
	}})
	// seeded schedules: a pause (of a holder or a waiter) and a crash
	sd, err := model.ParseDesign("etcd-mutex/del/none/plain,clients=2,session=3,pause-at=acquire,crashes=1,max-pause=5")
	if err != nil {
		t.Fatal(err)
	}
	for seed, seeded := uint64(1), 0; seeded < 3 && seed < 50; seed++ {
		trace := RandomSchedule(&sd, rand.New(rand.NewPCG(seed, 22)), 25)
		r, err := model.Replay(&sd, trace)
		if err != nil {
			t.Fatal(err)
		}
		if err := heldPlayable(&sd, "", r); err != nil {
			continue // a pause of exactly the session's ticks
		}
		seeded++
		runs = append(runs, run{name: fmt.Sprintf("seed %d", seed), in: &Input{Source: fmt.Sprintf("seed %d", seed), Kind: "scenario", DesignName: sd.Name(), Design: sd, Trace: trace}})
	}

	// planted: the Mutex played with TryLock, a waiter that keeps no key in
	// the queue (it deletes its key and polls): B's acquire at step 2 must
	// differ (the model's B waits with its key, token 2)
	runs = append(runs, run{name: "planted TryLock, no queue", in: waiter, noQueue: true})

	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, r := range runs {
		wg.Add(1)
		go func(k int, r run) {
			defer wg.Done()
			c, err := playQueued(srv, 2*k, 2*k+1, r.in, plant{noQueue: r.noQueue})
			mu.Lock()
			defer mu.Unlock()
			t.Run(r.name, func(t *testing.T) {
				if err != nil {
					t.Fatal(err)
				}
				if c.Late {
					t.Fatalf("two void runs in a row (step %d answered %.1fms into its tick, window %.1fms): the machine is too loaded to keep the timing", c.LateSeq, c.LatestMS, c.WindowMS)
				}
				if r.noQueue {
					want := "step 2 (t=1 B acquire): reply: model Lock: key put (token 2), not the first → waits, real "
					if c.Agree || len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], want) {
						t.Fatalf("a Mutex with no queue went unnoticed: want first difference %q, got %q\n%s", want, c.Differences, c.Text())
					}
					return
				}
				if !c.Agree {
					t.Fatalf("reality differs from the model:\n%s", c.Text())
				}
				if r.want != nil {
					r.want(t, c)
				}
				var faults []string
				for _, a := range r.in.Trace {
					if a.Kind.IsFault() {
						faults = append(faults, a.String())
					}
				}
				t.Logf("%d steps, faults %v: %s", len(r.in.Trace), faults, c.Verdict())
			})
		}(k, r)
	}
	wg.Wait()
}

// playQueued plays in on an etcd member of its own, the storage in
// databases lockDB and storeDB of srv, with the planted bugs pl; a void
// run is played again once.
func playQueued(srv *Server, lockDB, storeDB int, in *Input, pl plant) (*Comparison, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := StartEtcd(ctx)
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	for attempt := 1; ; attempt++ {
		opts := Options{Addr: srv.Addr(), Etcd: e.Endpoint(), LockDB: lockDB, StoreDB: storeDB}
		opts.plant = pl
		c, err := Reproduce(ctx, in, "redis-server "+srv.Version()+" on "+srv.Addr(), opts)
		if err != nil || !c.Late || attempt == 2 {
			return c, err
		}
	}
}
