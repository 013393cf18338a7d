package reality

import (
	"path/filepath"
	"strings"
	"testing"

	"lockcheck/model"
)

// TestRepeatedJobsOnRealRedis plays repeated jobs (jobs=2) on a real
// Redis: each client runs its job twice, writing a lock value per job or
// one per process (value=), and a release held past the client's timeout
// (delay-at=release) is sent again while its first copy lands later. In
// late-release-process the late copy finds A's own value in A's next lock
// and deletes it: two holders, B's update lost; in late-release-job it
// carries job 1's value and leaves job 2's lock alone. The catalogue's
// counterexamples of the per-process row show their violation for real
// too; every run must agree with the model step by step.
func TestRepeatedJobsOnRealRedis(t *testing.T) {
	files, err := filepath.Glob("../counterexamples/redis-cad-none-plain_value-process_delay-at-release_clients-2_jobs-2_*.txt")
	if err != nil || len(files) != 3 {
		t.Fatalf("want the 3 counterexamples of the per-process row, got %v (%v)", files, err)
	}
	files = append(files, "../model/scenarios/late-release-process.txt", "../model/scenarios/late-release-job.txt",
		"../counterexamples/redis-cad-none-plain_clients-2_jobs-2_pauses-0_bypass-0--bypass.txt")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in := fileInput(t, path)
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if prop, ok := strings.CutPrefix(in.Doc, "counterexample: "); ok && prop != "bypass" && shownAt(c.Real, prop) < 0 {
				t.Fatalf("the real run does not show %s:\n%s", prop, c.Text())
			}
			switch filepath.Base(path) {
			case "late-release-process.txt":
				if !c.Real.LostUpdate || c.Real.Counter != 3 {
					t.Fatalf("want B's update lost (counter 3), got counter %d\n%s", c.Real.Counter, c.Text())
				}
			case "late-release-job.txt":
				if c.Real.LostUpdate || c.Real.Counter != 4 || shownAt(c.Real, "mutex") >= 0 {
					t.Fatalf("want four jobs, counter 4, one holder at a time, got counter %d\n%s", c.Real.Counter, c.Text())
				}
			}
		})
	}
}

// TestPlantedProcessValueIsCaught tests the tester: clients that write one
// value per process where the design says one per job (value=job) let the
// late first copy of A's release delete A's job-2 lock in
// late-release-job (step 22, t=8 A arrive); the model leaves it alone.
func TestPlantedProcessValueIsCaught(t *testing.T) {
	c := reproduce(t, fileInput(t, "../model/scenarios/late-release-job.txt"), Options{plant: plant{processValue: true}})
	if c.Agree {
		t.Fatalf("a value per process went unnoticed:\n%s", c.Text())
	}
	if want := "step 22 (t=8 A arrive)"; len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], want) {
		t.Fatalf("want the first difference at %s, got:\n%s", want, strings.Join(c.Differences, "\n"))
	}
}

// TestRepeatedJobRefusals: repeated jobs and resent releases are played
// on one Redis node with lockcheck's own client; elsewhere they are
// refused in one line.
func TestRepeatedJobRefusals(t *testing.T) {
	for name, want := range map[string]string{
		"zookeeper/cad/none/plain,jobs=2":                                       "repeated jobs are played for real on one Redis node only",
		"redis/cad/none/plain,delay-at=write,pauses=0,delays=1,timeout=3":       "resends after a timeout are not played for real yet",
		"redis/get-del/none/plain,delay-at=release,pauses=0,delays=1,timeout=3": "resends after a timeout are not played for real yet",
	} {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		if np, ok := IsNotPlayable(Playable(&d)); !ok || !strings.Contains(np.Because, want) {
			t.Errorf("%s: want a NotPlayable saying %q, got %v", name, want, np)
		}
	}
	d, err := model.ParseDesign("redis/cad/none/plain,delay-at=release,clients=2,jobs=2,pauses=0,delays=1,timeout=3")
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	for _, lib := range []string{ClientRedsync, ClientRedislock, ClientUser} {
		if err := CheckClient(lib, &d); err == nil || !strings.Contains(err.Error(), "want jobs=1") {
			t.Errorf("client %s: %v", lib, err)
		}
	}
}
