package reality

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"lockcheck/explore"
	"lockcheck/model"
)

// TestEtcdRWMutex plays etcd's recipe.RWMutex (world_etcd_rwmutex.go)
// against the model's readers=K design, step by step: the shortest
// counterexample of every property the recipe as it is violates (a reader
// whose session expired in the queue reads while a writer holds), and the
// story of it (testdata/etcd-rwmutex-no-get.txt). Planted: the recipe with
// the queued Mutex's Get of its own key once its wait ends must differ at
// the reader's acquire after its pause (step 15, t=6 A acquire).
func TestEtcdRWMutex(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: etcd runs of 10 to 30s (2s ticks), side by side")
	}
	t.Parallel()
	bin, err := FindServer()
	if err != nil {
		needServer(t)
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	srv, err := StartServer(sctx, bin)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })

	type run struct {
		name  string
		in    *Input
		shows string // a property the real run must show too
		rwGet bool   // planted: a Get of its own key after the wait
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
	runs = append(runs, run{name: "story", in: story, shows: "exclusive"}, run{name: "planted Get of its own key", in: story, rwGet: true})

	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, r := range runs {
		wg.Add(1)
		go func(k int, r run) {
			defer wg.Done()
			c, err := playQueued(srv, 2*k, 2*k+1, r.in, plant{rwGet: r.rwGet})
			mu.Lock()
			defer mu.Unlock()
			t.Run(r.name, func(t *testing.T) {
				if err != nil {
					t.Fatal(err)
				}
				if c.Late {
					t.Fatalf("two void runs in a row (step %d answered %.1fms into its tick, window %.1fms): the machine is too loaded to keep the timing", c.LateSeq, c.LatestMS, c.WindowMS)
				}
				if r.rwGet {
					want := "step 15 (t=6 A acquire): "
					if c.Agree || len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], want) {
						t.Fatalf("an RWMutex that Gets its own key went unnoticed: want first difference at %q, got %q\n%s", want, c.Differences, c.Text())
					}
					return
				}
				if !c.Agree {
					t.Fatalf("reality differs from the model:\n%s", c.Text())
				}
				shown := false
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
