package reality

import (
	"strings"
	"testing"

	"lockcheck/model"
)

// TestReplicaRejoin plays rejoin=K (a failed primary down K ticks, then
// back as a replica with a full resync) on real redis-servers: the story
// replica-rejoin (two replicas: the second failure promotes the one
// without A's key while the first failed primary is still down; both
// failed primaries rejoin at t=4 and B's WAIT 1 0 counts them both at
// once), the catalogue row's two counterexamples, and
// replica-rejoin-down (one replica: the second failure finds no replica
// up, and B's acquires and A's release reach the dead primary and fail
// until it restarts, empty, at t=4). Each must agree with the model step
// by step.
func TestReplicaRejoin(t *testing.T) {
	for _, path := range []string{
		"../model/scenarios/replica-rejoin.txt",
		"../counterexamples/replica-cad-rw-max-token_ack-wait_clients-2_pauses-0_failovers-2_rejoin-3_replicas-2--exclusive.txt",
		"../counterexamples/replica-cad-rw-max-token_ack-wait_clients-2_pauses-0_failovers-2_rejoin-3_replicas-2--mutex.txt",
		"testdata/replica-rejoin-down.txt",
	} {
		t.Run(path[strings.LastIndexByte(path, '/')+1:], func(t *testing.T) {
			in := fileInput(t, path)
			if in.Design.RejoinTicks == 0 {
				t.Fatalf("design %s: want rejoin > 0", in.Design.Name())
			}
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if shownAt(c.Real, "exclusive") < 0 && !strings.HasSuffix(path, "--mutex.txt") {
				t.Fatalf("the real run does not show exclusive:\n%s", c.Text())
			}
			switch path[strings.LastIndexByte(path, '/')+1:] {
			case "replica-rejoin.txt":
				if s := stepAt(c, 4, "B wait"); s == nil || s.Real != "WAIT → 2" {
					t.Fatalf("want B's WAIT at t=4 to count both rejoined replicas (WAIT → 2):\n%s", c.Text())
				}
			case "replica-rejoin-down.txt":
				down := 0
				for _, s := range c.Steps {
					if s.Tick < 4 && s.view.After == HolderDown {
						down++
						if s.Action == "B acquire" && s.Real != "SET NX → (nil)" {
							t.Fatalf("want B's acquire on the down primary to fail, got %q:\n%s", s.Real, c.Text())
						}
					}
				}
				if down < 6 { // the failover, B's three acquires, A's release, the ticks to t=2, t=3
					t.Fatalf("want the primary down from the second failover to t=4, seen down at %d steps:\n%s", down, c.Text())
				}
				if s := stepAt(c, 4, "B acquire"); s == nil || s.Real != "SET NX → OK (token 1)" {
					t.Fatalf("want B to take token 1 again on the restarted primary:\n%s", c.Text())
				}
			}
		})
	}
}

// stepAt is the first step of c at tick t with the action's words.
func stepAt(c *Comparison, t int, action string) *StepPair {
	for k := range c.Steps {
		if c.Steps[k].Tick == t && c.Steps[k].Action == action {
			return &c.Steps[k]
		}
	}
	return nil
}

// TestPlantedRestartAtOnceIsCaught tests the tester: a failed primary
// that rejoins at once, resynced, instead of staying down K ticks (as
// with rejoin=0) is the freshest replica at the story's second failure,
// which promotes it with A's key where the model's promotes the replica
// without it (then B's acquire is refused where the model's wins token
// 1); with one replica it is promoted at the second failure where the
// model's primary goes down. Both are caught at that failover: the key
// after it is A's, not the model's nobody or unseen.
func TestPlantedRestartAtOnceIsCaught(t *testing.T) {
	for path, want := range map[string]string{
		"../model/scenarios/replica-rejoin.txt": "step 5 (t=1 failover): reply: model failover, real failover; key after: model nobody, real A's",
		"testdata/replica-rejoin-down.txt":      "step 5 (t=1 failover): reply: model failover, real failover; key after: model unseen: the lock node is down, real A's",
	} {
		t.Run(path[strings.LastIndexByte(path, '/')+1:], func(t *testing.T) {
			c := reproduce(t, fileInput(t, path), Options{plant: plant{restartAtOnce: true}})
			if c.Agree {
				t.Fatalf("a failed primary back at once went unnoticed:\n%s", c.Text())
			}
			if len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], want) {
				t.Fatalf("want the first difference at %s, got:\n%s\n%s", want, strings.Join(c.Differences, "\n"), c.Text())
			}
		})
	}
}

// TestRejoinRefusals: a replica primary down with no replica to promote
// is played with the reference client only; a library's is refused in
// one line. With as many replicas as failovers no failure finds every
// replica down, and the libraries are not refused for it.
func TestRejoinRefusals(t *testing.T) {
	for name, refused := range map[string]bool{
		"replica/cad/none/plain,clients=2,pauses=0,failovers=2,rejoin=3":            true,
		"replica/cad/none/plain,clients=2,pauses=0,failovers=2,rejoin=3,replicas=2": false,
	} {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Playable(&d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		err = CheckClient(ClientRedsync, &d)
		if got := err != nil && strings.Contains(err.Error(), "a replica primary down with no replica to promote"); got != refused || !refused && err != nil {
			t.Errorf("%s: client redsync: %v", name, err)
		}
	}
}
