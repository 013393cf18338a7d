package reality

import (
	"strings"
	"sync"
	"testing"

	"lockcheck/explore"
	"lockcheck/model"
)

// TestEtcdRWMutex plays etcd's recipe.RWMutex (world_etcd_rwmutex.go)
// against the model's readers=K design, step by step: the shortest
// counterexample of every property the recipe as it is violates (a reader
// whose session expired in the queue reads while a writer holds), and the
// story of it (testdata/etcd-rwmutex-no-get.txt), two readers holding
// together (testdata/etcd-rwmutex-readers.txt) and the recipe with a Get
// of its own key, session-check=get (testdata/etcd-rwmutex-get.txt).
// Planted: the recipe with the queued Mutex's Get of its own key once its
// wait ends must differ at the reader's acquire after its pause (step 15,
// t=6 A acquire); a reader that calls Lock at the second reader's acquire
// (step 2).
func TestEtcdRWMutex(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: etcd runs of 10 to 30s (2s ticks), side by side")
	}
	t.Parallel()
	srv := lockServer(t, false)

	type run struct {
		name  string
		in    *Input
		shows string // a property the real run must show too
		plant plant
		// differ: the planted bug's first difference must start so
		differ string
	}
	var runs []run
	d, err := model.ParseDesign("etcd-mutex/del/none/plain,readers=1,session-check=none,session=3,pause-at=acquire")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := explore.Check(explore.Config{Design: d, Bounds: explore.Bounds{Symmetry: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Status == explore.Violated {
			runs = append(runs, run{name: r.Property, shows: r.Property, in: &Input{Source: "shortest " + r.Property, Kind: "counterexample", DesignName: d.Name(), Design: d, Trace: r.Trace}})
		}
	}
	if len(runs) != 3 {
		t.Fatalf("%s: want counterexamples of exclusive, mutex and no-lost-update, got %d", d.Name(), len(runs))
	}
	story := etcdInput(t, "testdata/etcd-rwmutex-no-get.txt")
	runs = append(runs, run{name: "story", in: story, shows: "exclusive"},
		run{name: "planted Get of its own key", in: story, plant: plant{rwGet: true}, differ: "step 15 (t=6 A acquire): "})
	// two readers together, and the recipe with the Get (session-check=get)
	readers := etcdInput(t, "testdata/etcd-rwmutex-readers.txt")
	runs = append(runs, run{name: "two readers", in: readers},
		run{name: "with get", in: etcdInput(t, "testdata/etcd-rwmutex-get.txt")},
		// planted: B, a reader, calls Lock: its write key waits behind A's
		// read key, where the model's RLock holds a read lock beside A's
		run{name: "planted reader takes the write lock", in: readers, plant: plant{rwAsWriter: true},
			differ: "step 2 (t=1 B acquire): reply: model Lock: key put (token 2), the first → holds, real Lock: key put (token 2), not the first → waits"})

	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, r := range runs {
		wg.Add(1)
		go func(k int, r run) {
			defer wg.Done()
			c, err := playQueued(srv, 2*k, 2*k+1, r.in, r.plant)
			mu.Lock()
			defer mu.Unlock()
			t.Run(r.name, func(t *testing.T) {
				if err != nil {
					t.Fatal(err)
				}
				if r.differ != "" && !c.Agree && len(c.Differences) > 0 && strings.HasPrefix(c.Differences[0], r.differ) {
					t.Logf("caught: %s", c.Differences[0]) // (a run void after the difference still shows it)
					return
				}
				if c.Late {
					t.Fatalf("two void runs in a row (step %d answered %.1fms into its tick, window %.1fms): the machine is too loaded to keep the timing", c.LateSeq, c.LatestMS, c.WindowMS)
				}
				if r.differ != "" {
					t.Fatalf("a planted bug went unnoticed: want first difference %q, got %q\n%s", r.differ, c.Differences, c.Text())
				}
				if !c.Agree {
					t.Fatalf("reality differs from the model:\n%s", c.Text())
				}
				shown := r.shows == ""
				for _, p := range c.Real.Properties {
					shown = shown || p.Property == r.shows && p.Shown
				}
				if !shown {
					t.Errorf("the real run does not show %s:\n%s", r.shows, c.Text())
				}
				t.Logf("%d steps: %s", len(r.in.Trace), c.Verdict())
			})
		}(k, r)
	}
	wg.Wait()
}
