package reality

import (
	"fmt"
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

// TestStorageFaultSchedulesAgree: seeded random schedules with a storage
// failover in them, played for real, agree step by step.
func TestStorageFaultSchedulesAgree(t *testing.T) {
	for _, tc := range []struct {
		design string
		kind   model.ActionKind
	}{
		{"redis/cad/rw/max-token,clients=2,storage-failovers=1,horizon=20", model.ActStorageFailover},
		{"redis/del/none/cas,clients=2,pauses=0,storage-failovers=1,horizon=20", model.ActStorageFailover},
	} {
		d, err := model.ParseDesign(tc.design)
		if err != nil {
			t.Fatal(err)
		}
		var seed uint64
		for s := uint64(1); s <= 40 && seed == 0; s++ {
			if slices.ContainsFunc(randomSchedule(&d, s), func(a model.Action) bool { return a.Kind == tc.kind }) {
				seed = s
			}
		}
		if seed == 0 {
			t.Fatalf("%s: no seed of 1 to 40 draws a %s", tc.design, tc.kind)
		}
		trace := randomSchedule(&d, seed)
		t.Run(fmt.Sprintf("%s/seed%d", tc.design, seed), func(t *testing.T) {
			sc := &model.Scenario{Design: d, DesignName: tc.design, Trace: trace}
			in, err := Load(fmt.Sprintf("random schedule (seed %d)", seed), sc.Format())
			if err != nil {
				t.Fatal(err)
			}
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model on this schedule:\n%s\n%s", model.FormatTrace(trace), c.Text())
			}
		})
	}
}
