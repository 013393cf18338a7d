package reality

import (
	"path/filepath"
	"strings"
	"testing"

	"lockcheck/catalogue"
	"lockcheck/model"
)

// fenceLossFiles are the catalogue's storage failovers that lose only the
// fencing state (storage-loses=fence), and the story.
const fenceLossGlob = "../counterexamples/redis-*_storage-loses-fence_*.txt"

const fenceLossStory = "../model/scenarios/storage-failover-fence.txt"

// TestFenceLossRowsArePlayable: the catalogue's storage-loses=fence rows
// are played for real, with the fencing state on a storage primary and
// replica of its own and the counter's row apart (storage_replica.go).
func TestFenceLossRowsArePlayable(t *testing.T) {
	rows := 0
	for _, e := range catalogue.Entries {
		if !strings.Contains(e.Name, "storage-loses=fence") {
			continue
		}
		rows++
		d, err := model.ParseDesign(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Playable(&d); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		if !fenceApart(&d) {
			t.Errorf("%s: its fencing state is not kept apart from the row", e.Name)
		}
	}
	if rows == 0 {
		t.Fatal("no catalogue row with storage-loses=fence: the catalogue moved?")
	}
}

// TestFenceLossOnRealRedis plays the storage-loses=fence counterexamples
// and the story on real servers: the token check's highest token lives on
// a storage primary whose replica follows it through a held link, the
// counter on a storage of its own. The failover promotes the fence's
// replica, which lacks B's token 2, while the counter survives: A's late
// write with token 1 is accepted over it. Each file must agree with the
// model step for step and show its property on the real server; the
// story loses B's update (counter 1 of 2 accepted) with no write lost by
// the failover. Then the tester is tested: a failover that keeps the
// fencing state (the replica caught up first) refuses A's write, and the
// comparison must say so at the failover step.
func TestFenceLossOnRealRedis(t *testing.T) {
	files, err := filepath.Glob(fenceLossGlob)
	if err != nil || len(files) != 3 {
		t.Fatalf("want the 3 counterexamples of the storage-loses=fence row, got %v (%v)", files, err)
	}
	for _, path := range append(files, fenceLossStory) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in := fileInput(t, path)
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			want := []string{"exclusive", "mutex", "no-lost-update"} // the story's expect line
			if in.Kind == "counterexample" {
				want = want[:0]
				for _, p := range []string{"exclusive", "mutex", "no-lost-update"} {
					if strings.HasSuffix(path, "--"+p+".txt") {
						want = append(want, p)
					}
				}
			}
			for _, p := range want {
				if shownAt(c.Real, p) < 0 {
					t.Errorf("%s not shown on the real server:\n%s", p, c.Text())
				}
			}
			if path == fenceLossStory && (!c.Real.LostUpdate || c.Real.Counter != 1 || c.Real.Accepted != 2) {
				t.Fatalf("want a real lost update (counter 1 of 2 accepted):\n%s", c.Text())
			}
			// (the exclusive and mutex witnesses end before any failover)
			if (path == fenceLossStory || strings.HasSuffix(path, "--no-lost-update.txt")) && !strings.Contains(c.Text(), "storage primary killed, replica promoted: counter ") {
				t.Fatalf("no storage failover in the comparison:\n%s", c.Text())
			}
		})
	}
	for _, tc := range []struct{ path, at string }{
		{files[2], "step 12 (t=4 storage-failover)"},
		{fenceLossStory, "step 30 (t=13 storage-failover)"},
	} {
		c := reproduce(t, fileInput(t, tc.path), Options{plant: plant{losslessFailover: true}})
		if c.Agree {
			t.Fatalf("%s: a storage failover that keeps the fencing state went unnoticed:\n%s", tc.path, c.Text())
		}
		if len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], tc.at) {
			t.Fatalf("%s: want the first difference at %s, got:\n%s", tc.path, tc.at, strings.Join(c.Differences, "\n"))
		}
	}
	// and a fence kept beside the counter, in one script on the replicated
	// storage (as storage-loses=unsynced plays it): the failover loses B's
	// write too
	in := fileInput(t, fenceLossStory)
	unsplit := in.Design
	unsplit.StorageLoses = model.LossUnsynced
	sc := storageFor(&unsplit)
	c := reproduce(t, in, Options{plant: plant{storage: &sc}})
	if want := "step 30 (t=13 storage-failover)"; c.Agree || !strings.HasPrefix(c.Differences[0], want) || !strings.Contains(c.Differences[0], "real storage primary killed, replica promoted: counter 0") {
		t.Fatalf("a fence kept in the row: want the first difference at %s, counter 0, got:\n%s", want, c.Text())
	}
}
