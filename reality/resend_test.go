package reality

import (
	"strings"
	"testing"

	"lockcheck/catalogue"
	"lockcheck/model"
)

// attemptStories are the two stories of a failed acquire attempt's late
// release (check=acquire, model/jobs.go attemptRelease): the same
// schedule with a value per acquire attempt (value=acquire, every
// property holds) and with the default value per job (redsync's: the
// late copy deletes the retry's lock).
const (
	attemptAcquireStory = "../model/scenarios/attempt-release-acquire.txt"
	attemptJobStory     = "../model/scenarios/attempt-release-job.txt"
)

// TestAttemptReleaseRowsArePlayable: the catalogue's value=acquire rows
// are played for real with lockcheck's own client; a library, which
// releases its failed attempt itself, is refused in one line.
func TestAttemptReleaseRowsArePlayable(t *testing.T) {
	rows := 0
	for _, e := range catalogue.Entries {
		if !strings.Contains(e.Name, "value=acquire") {
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
		for _, lib := range []string{ClientRedsync, ClientRedislock, ClientUser} {
			if err := CheckClient(lib, &d); err == nil || !strings.Contains(err.Error(), "lockcheck's own client only; want timeout=0") {
				t.Errorf("client %s: %v", lib, err)
			}
		}
	}
	if rows == 0 {
		t.Fatal("no catalogue row with value=acquire: the catalogue moved?")
	}
	// elsewhere than one Redis node it stays refused
	d, err := model.ParseDesign("replica/cad/none/plain,check=acquire,value=acquire,delay-at=acquire,ttl=5,clients=2,pauses=0,drift=2,delays=2,max-delay=6,timeout=3")
	if err != nil {
		t.Fatal(err)
	}
	if np, ok := IsNotPlayable(Playable(&d)); !ok || !strings.Contains(np.Because, "resends after a timeout are not played for real yet") {
		t.Fatalf("%v", np)
	}
}

// TestAttemptReleaseOnRealRedis plays both stories on a real Redis: B's
// SET NX reply is held in its proxy past its validity, B sends the failed
// attempt's release, which waits in the gate of a proxy of its own while
// go-redis gives up on it at B's timeout; B resends it, retries and takes
// the lock, and the first copy lands then. With a value per attempt it
// leaves the retry's lock alone (every property holds, counter 4); with a
// value per job it deletes it (exclusive, mutex and no-lost-update
// violated). Both must agree with the model step for step.
func TestAttemptReleaseOnRealRedis(t *testing.T) {
	for _, tc := range []struct {
		path     string
		violated []string
		counter  int
	}{
		{attemptAcquireStory, nil, 4},
		{attemptJobStory, []string{"exclusive", "mutex", "no-lost-update"}, 3},
	} {
		t.Run(tc.path[strings.LastIndex(tc.path, "/")+1:], func(t *testing.T) {
			c := reproduce(t, fileInput(t, tc.path), Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			for _, p := range []string{"exclusive", "mutex", "no-lost-update"} {
				want := false
				for _, v := range tc.violated {
					want = want || v == p
				}
				if got := shownAt(c.Real, p) >= 0; got != want {
					t.Errorf("%s violated on the real server: %v, want %v\n%s", p, got, want, c.Text())
				}
			}
			if c.Real.Counter != tc.counter {
				t.Errorf("real counter %d, want %d\n%s", c.Real.Counter, tc.counter, c.Text())
			}
			landed := false
			for _, st := range c.Steps {
				if strings.HasSuffix(st.Action, "B arrive") && strings.Contains(st.Told, "release → ") {
					landed = true
				}
			}
			if !landed {
				t.Fatalf("no failed attempt's release that gave up at its deadline:\n%s", c.Text())
			}
		})
	}
}

// TestPlantedAttemptValueIsCaught tests the tester: a client that writes
// one value in every attempt (planted processValue) under value=acquire
// has its retry's lock deleted by the failed attempt's late release, which
// the model's value per attempt leaves alone.
func TestPlantedAttemptValueIsCaught(t *testing.T) {
	c := reproduce(t, fileInput(t, attemptAcquireStory), Options{plant: plant{processValue: true}})
	if c.Agree {
		t.Fatalf("a retry with the failed attempt's value went unnoticed:\n%s", c.Text())
	}
	if len(c.Differences) == 0 || !strings.Contains(c.Differences[0], "B arrive)") {
		t.Fatalf("want the first difference at B's late release, got:\n%s", strings.Join(c.Differences, "\n"))
	}
}
