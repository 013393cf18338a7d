package reality

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lockcheck/model"
)

// TestAbandonedAcquireOnRealRedis plays an acquire abandoned by its
// caller (abandon=retry|fail) on a real Redis: the client's SET NX waits
// in its proxy's gate, go-redis gives up on it at the call's deadline,
// and the command lands at the arrive step, taking the free key for a
// client that does not know it holds it. With acquire=set-expire that
// key has no expiry: the real run shows the progress failure, as the
// model does. The stories and the catalogue's counterexamples must agree
// with the model step by step.
func TestAbandonedAcquireOnRealRedis(t *testing.T) {
	files, err := filepath.Glob("../counterexamples/redis-*_abandon-*.txt")
	if err != nil || len(files) != 2 {
		t.Fatalf("want the 2 counterexamples of the abandon rows, got %v (%v)", files, err)
	}
	files = append(files, "../model/scenarios/abandoned-acquire.txt", "../model/scenarios/abandoned-acquire-fail.txt")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			c := reproduce(t, fileInput(t, path), Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if shownAt(c.Real, "progress") < 0 {
				t.Fatalf("the real run does not show progress violated:\n%s", c.Text())
			}
			landed := false
			for _, st := range c.Steps {
				if strings.HasSuffix(st.Action, " arrive") {
					landed = strings.Contains(st.Told, "SET NX → ")
				}
			}
			if !landed {
				t.Fatalf("no abandoned call that gave up at its deadline:\n%s", c.Text())
			}
		})
	}
}

// TestAbandonedAcquireWithTTL plays the third abandon row: the
// abandoned-acquire-fail schedule with a TTL (acquire=script), run on
// until the orphan expires and C takes the lock. Both worlds must agree,
// the real one seeing D's orphan key expire.
func TestAbandonedAcquireWithTTL(t *testing.T) {
	text, err := os.ReadFile("../model/scenarios/abandoned-acquire-fail.txt")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := model.ParseScenario(string(text))
	if err != nil {
		t.Fatal(err)
	}
	const name = "redis/cad/none/plain,delay-at=acquire,abandon=fail,clients=4,pauses=0,delays=1,timeout=2"
	d, err := model.ParseDesign(name)
	if err != nil {
		t.Fatal(err)
	}
	// acquire=script sets the TTL with the SET NX: no EXPIRE steps
	trace := slices.DeleteFunc(slices.Clone(sc.Trace), func(a model.Action) bool { return a.Kind == model.ActExpire })
	won := false
	for range 2 * d.TTLTicks { // C polls, a tick at a time, until the orphan is gone and it wins
		trace = append(trace, model.Action{Kind: model.ActAcquire, Client: 2})
		run, err := model.Replay(&d, trace)
		if err != nil {
			t.Fatal(err)
		}
		if won = run.Steps[len(run.Steps)-1].Event.Result == model.ResOK; won {
			break
		}
		trace = append(trace, model.Action{Kind: model.ActTick})
	}
	if !won {
		t.Fatal("C never takes the lock in the model: the orphan does not expire")
	}
	out := &model.Scenario{Design: d, DesignName: name, Trace: trace}
	c := reproduce(t, scenarioInput(t, "abandoned-acquire-fail with a TTL", out.Format()), Options{})
	if !c.Agree {
		t.Fatalf("reality differs from the model:\n%s", c.Text())
	}
	if !slices.ContainsFunc(c.Real.Expired, func(m Moment) bool { return m.Client == "D" }) {
		t.Fatalf("want D's orphan key to expire on the real server, expired: %v\n%s", c.Real.Expired, c.Text())
	}
}

// TestPlantedAbandonIsCaught tests the tester: an abandoned acquire the
// network does not hold is answered at once (refused: the key is A's at
// t=2), so nothing lands at C's arrive step (step 21, t=6), where the
// model's SET NX takes the free key.
func TestPlantedAbandonIsCaught(t *testing.T) {
	c := reproduce(t, fileInput(t, "../model/scenarios/abandoned-acquire.txt"), Options{plant: plant{leakAbandoned: true}})
	if c.Agree {
		t.Fatalf("an abandoned acquire let through went unnoticed:\n%s", c.Text())
	}
	if want := "step 21 (t=6 C arrive)"; len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], want) {
		t.Fatalf("want the first difference at %s, got:\n%s", want, strings.Join(c.Differences, "\n"))
	}
}

// TestAbandonRefusals: abandoned acquires are played on one Redis node,
// with lockcheck's own client and one job; elsewhere they are refused in
// one line.
func TestAbandonRefusals(t *testing.T) {
	d, err := model.ParseDesign("replica/cad/none/plain,delay-at=acquire,abandon=fail,clients=2,pauses=0,delays=1,timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	if np, ok := IsNotPlayable(Playable(&d)); !ok || !strings.Contains(np.Because, "resends after a timeout are not played for real yet") {
		t.Fatalf("%v", np)
	}
	d, err = model.ParseDesign("redis/cad/none/plain,delay-at=acquire,abandon=fail,clients=4,pauses=0,delays=1,timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	for _, lib := range []string{ClientRedsync, ClientRedislock, ClientUser} {
		if err := CheckClient(lib, &d); err == nil || !strings.Contains(err.Error(), "want abandon=none") {
			t.Errorf("client %s: %v", lib, err)
		}
	}
}
