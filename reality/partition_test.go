package reality

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"lockcheck/model"
)

// partitionDesign is a client cut off from the one Redis node for 3
// ticks (partition=service, the default).
const partitionDesign = "redis/cad/none/plain,clients=2,pauses=0,partitions=1,partition-ticks=3,horizon=20"

// partitionSchedules are the first want random schedules of
// partitionDesign in which a cut-off client sends a lock request (the
// model answers it unreachable), each with the kinds of those requests.
func partitionSchedules(t *testing.T, d *model.Design, want int) (traces [][]model.Action, kinds []string) {
	t.Helper()
	for seed := uint64(1); len(traces) < want && seed <= 400; seed++ {
		trace := randomSchedule(d, seed)
		s := model.Init(d)
		var cut []string
		for _, a := range trace {
			var ev model.Event
			s, ev = model.Step(d, s, a)
			if ev.Result == model.ResUnreachable {
				cut = append(cut, a.Kind.String())
			}
		}
		if len(cut) > 0 {
			traces, kinds = append(traces, trace), append(kinds, strings.Join(cut, ", "))
		}
	}
	if len(traces) < want {
		t.Fatalf("%s: %d of the %d schedules wanted have a cut-off client ask the lock (seeds 1 to 400)", d.Name(), len(traces), want)
	}
	return traces, kinds
}

// TestPartitionOnRealRedis plays a client cut off from the lock's
// redis-server (partitions=1): its proxy drops every byte either way for
// the partition's ticks and closes the connection, so its acquire,
// release or renewal fails at once, as the model's (unreachable), while
// its storage stays in reach; at the heal its next request goes through.
// lockcheck's own client and a user's client (the locktest shape) must
// agree with the model step by step. A planted cut that lets the
// client's requests through is caught: the cut-off request is answered.
func TestPartitionOnRealRedis(t *testing.T) {
	d, err := model.ParseDesign(partitionDesign)
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	// A's acquires fail while it is cut off; it wins after the heal
	story, err := os.ReadFile("testdata/partition-acquire.txt")
	if err != nil {
		t.Fatal(err)
	}
	in, err := Load("testdata/partition-acquire.txt", string(story))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("partition-acquire", func(t *testing.T) {
		if c := reproduce(t, in, Options{}); !c.Agree {
			t.Fatalf("reality differs from the model:\n%s", c.Text())
		}
	})

	traces, kinds := partitionSchedules(t, &d, 3)
	for k, trace := range traces {
		sc := &model.Scenario{Design: d, DesignName: partitionDesign, Trace: trace}
		in, err := Load(fmt.Sprintf("partition schedule %d", k+1), sc.Format())
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("schedule%d", k+1), func(t *testing.T) {
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model (cut off at: %s):\n%s\n%s", kinds[k], model.FormatTrace(trace), c.Text())
			}
			t.Logf("agrees; cut-off requests: %s", kinds[k])
		})
	}

	// the planted bug: the cut lets the client's requests through
	sc := &model.Scenario{Design: d, DesignName: partitionDesign, Trace: traces[0]}
	in, err = Load("partition schedule 1, leaking cut", sc.Format())
	if err != nil {
		t.Fatal(err)
	}
	s := needServer(t)
	lockDB, storeDB := dbPair(t)
	opts := Options{Addr: s.Addr(), Tick: 2 * testTick, LockDB: lockDB, StoreDB: storeDB}
	opts.plant.leakCut = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Reproduce(ctx, in, "redis-server "+s.Version(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agree {
		t.Fatalf("a cut that lets requests through: want a difference, got agreement:\n%s", c.Text())
	}
	// schedule 1's cut-off request is B's release: the model's fails,
	// the leaking cut's deletes the key
	if want := "reply: model release → 0, real release → 1 (deleted)"; kinds[0] != "release" || !strings.Contains(c.Text(), want) {
		t.Errorf("a cut that lets requests through: want the cut-off release's difference %q, got:\n%s", want, c.Text())
	}
	t.Logf("a leaking cut is caught:\n%s", c.Text())
}
