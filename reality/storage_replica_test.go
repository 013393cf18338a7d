package reality

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"lockcheck/model"
)

// storageFailoverFiles are the catalogue's storage failovers that real
// runs play (storage-loses=unsynced, the default).
var storageFailoverFiles = []string{
	"../counterexamples/redis-cad-rw-max-token_clients-2_storage-failovers-1--exclusive.txt",
	"../counterexamples/redis-cad-rw-max-token_clients-2_storage-failovers-1--mutex.txt",
	"../counterexamples/redis-cad-rw-max-token_clients-2_storage-failovers-1--no-lost-update.txt",
	"../model/scenarios/storage-failover.txt",
}

// TestStorageFailoverOnRealRedis plays the storage failovers on a real
// storage primary and replica: the replica catches up at storage-sync
// steps only (its link held), and a failover promotes it with what it
// had. The no-lost-update file loses A's accepted write for real; the
// story's failover loses B's token 2, so A's late write with token 1 is
// accepted. Then the tester is tested: a failover that lets the replica
// catch up first loses nothing, and the comparison must say so at the
// failover step.
func TestStorageFailoverOnRealRedis(t *testing.T) {
	for _, path := range storageFailoverFiles {
		t.Run(path[strings.LastIndexByte(path, '/')+1:], func(t *testing.T) {
			c := reproduce(t, fileInput(t, path), Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if strings.HasSuffix(path, "no-lost-update.txt") && (!c.Real.LostUpdate || c.Real.Counter != 0 || c.Real.Accepted != 1) {
				t.Fatalf("want the accepted write lost for real (counter 0 of 1 accepted):\n%s", c.Text())
			}
			if strings.HasSuffix(path, "storage-failover.txt") && (!c.Real.LostUpdate || c.Real.Counter != 1 || c.Real.Accepted != 2) {
				t.Fatalf("want a real lost update (counter 1 of 2 accepted):\n%s", c.Text())
			}
		})
	}
	for _, tc := range []struct{ path, at string }{
		{storageFailoverFiles[2], "step 6 (t=3 storage-failover)"},
		{storageFailoverFiles[3], "step 27 (t=11 storage-failover)"},
	} {
		c := reproduce(t, fileInput(t, tc.path), Options{plant: plant{losslessFailover: true}})
		if c.Agree {
			t.Fatalf("%s: a storage failover that loses nothing went unnoticed:\n%s", tc.path, c.Text())
		}
		if len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], tc.at) {
			t.Fatalf("%s: want the first difference at %s, got:\n%s", tc.path, tc.at, strings.Join(c.Differences, "\n"))
		}
	}
}

// TestStaleReadOnRealRedis plays the catalogue's stale read: B's read
// with token 2 is served by the storage's replica, whose link has held
// A's write, and reads 0 for real; B's write then loses A's update with
// the newest token; in stale-read-refused the replica, which has B's
// token 2, refuses A's late read with token 1. Then the tester is tested: a stale read served by the
// primary reads A's write, and the comparison must say so at B's read.
func TestStaleReadOnRealRedis(t *testing.T) {
	file := "../counterexamples/redis-cad-rw-max-token_pauses-0_stale-reads-1--no-lost-update.txt"
	refused := fileInput(t, "testdata/stale-read-refused.txt")
	if c := reproduce(t, refused, Options{}); !c.Agree || c.Real.ReadsRejected != 1 || !strings.Contains(c.Text(), "from the storage's replica → rejected: 1 < 2") {
		t.Fatalf("want agreement and A's stale read refused by the replica:\n%s", c.Text())
	}
	for _, path := range []string{file, "../model/scenarios/stale-read.txt"} {
		c := reproduce(t, fileInput(t, path), Options{})
		if !c.Agree || !c.Real.LostUpdate || c.Real.Counter != 1 || c.Real.Accepted != 2 {
			t.Fatalf("%s: want agreement and a real lost update (counter 1 of 2 accepted), got:\n%s", path, c.Text())
		}
		if !strings.Contains(c.Text(), "read (token 2) from the storage's replica → 0") {
			t.Fatalf("%s: B's stale read is not in the comparison:\n%s", path, c.Text())
		}
	}
	c := reproduce(t, fileInput(t, file), Options{plant: plant{staleAtPrimary: true}})
	if c.Agree || c.Real.LostUpdate {
		t.Fatalf("a stale read served by the primary went unnoticed (real lost update %v):\n%s", c.Real.LostUpdate, c.Text())
	}
	if want := "step 10 (t=3 B stale-read)"; len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], want) {
		t.Fatalf("want the first difference at %s, got:\n%s", want, strings.Join(c.Differences, "\n"))
	}
}

// TestStorageFaultSchedulesAgree: seeded random schedules with storage
// faults in them, played for real, agree step by step: a failover, stale
// reads, and a stale read after a failover (the old primary back as the
// new replica), on one Redis node, beside a replica lock and ZooKeeper.
func TestStorageFaultSchedulesAgree(t *testing.T) {
	for _, tc := range []struct {
		design string
		want   func([]model.Action, *model.Design) bool
		faults int // per cent of steps that are faults, where any is enabled (randomSchedule: 6)
	}{
		{"redis/cad/rw/max-token,clients=2,storage-failovers=1,horizon=20", has(model.ActStorageFailover), 6},
		{"redis/del/none/cas,clients=2,pauses=0,storage-failovers=1,horizon=20", has(model.ActStorageFailover), 6},
		{"redis/cad/rw/max-write,clients=2,stale-reads=2,horizon=24", has(model.ActStaleRead), 40}, // a read is due for one step: few are stale at 6%
		{"redis/cad/rw/max-token,clients=2,pauses=0,storage-failovers=1,stale-reads=1,horizon=20", staleAfterFailover, 40},
		// the storage is the same beside other locks: a replica lock's own
		// replica set, and ZooKeeper
		{"replica/cad/rw/max-token,clients=2,storage-failovers=1,stale-reads=1,horizon=20", staleAfterFailover, 40},
		{"zookeeper/cad/rw/max-token,clients=2,storage-failovers=1,stale-reads=1,horizon=20", staleAfterFailover, 40},
	} {
		d, err := model.ParseDesign(tc.design)
		if err != nil {
			t.Fatal(err)
		}
		var seed uint64
		for s := uint64(1); s <= 300 && seed == 0; s++ {
			if tc.want(storageSchedule(&d, s, tc.faults), &d) {
				seed = s
			}
		}
		if seed == 0 {
			t.Fatalf("%s: no seed of 1 to 300 draws the schedule wanted", tc.design)
		}
		trace := storageSchedule(&d, seed, tc.faults)
		t.Run(fmt.Sprintf("%s/seed%d", tc.design, seed), func(t *testing.T) { playAgrees(t, d, tc.design, seed, trace) })
	}
}

// staleAfterFailover: the schedule has a stale read after a storage
// failover (served by the old primary, back as the new replica).
func staleAfterFailover(tr []model.Action, _ *model.Design) bool {
	f := slices.IndexFunc(tr, func(a model.Action) bool { return a.Kind == model.ActStorageFailover })
	return f >= 0 && slices.ContainsFunc(tr[f:], func(a model.Action) bool { return a.Kind == model.ActStaleRead })
}

// has: the schedule has a step of kind k.
func has(k model.ActionKind) func([]model.Action, *model.Design) bool {
	return func(tr []model.Action, _ *model.Design) bool {
		return slices.ContainsFunc(tr, func(a model.Action) bool { return a.Kind == k })
	}
}

// storageSchedule is randomSchedule with faults per cent of the steps
// faults.
func storageSchedule(d *model.Design, seed uint64, faults int) []model.Action {
	return RandomSchedule(d, rand.New(rand.NewPCG(seed, 0x6c6f636b)), faults)
}
