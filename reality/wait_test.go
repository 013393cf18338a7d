package reality

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"lockcheck/model"
)

// TestReplicaWait plays WAIT after the acquire (ack=wait) on a real
// primary and replica: WAIT 1 2000 times out with the replica behind and
// rolls nothing back, the failover loses the key and the token repeats
// (the story); WAIT 1 0 returns only after the replicate step, after the
// TTL (the mutex row); through two failures in a row the old primary
// rejoins as a replica each time; and with check=validity the client
// measures what WAIT left it. Each must agree with the model.
func TestReplicaWait(t *testing.T) {
	for _, tc := range []struct {
		path string
		lost bool
	}{
		{"../model/scenarios/replica-wait-timeout.txt", true},
		{"../counterexamples/replica-cad-rw-max-token_ack-wait_clients-2_pauses-0--mutex.txt", false},
		{"../counterexamples/replica-cad-rw-max-token_ack-wait_clients-2_pauses-0_failovers-2--exclusive.txt", false},
		{"../counterexamples/replica-cad-rw-max-token_check-validity_ack-wait_clients-2_pauses-0--mutex.txt", false},
	} {
		t.Run(tc.path[strings.LastIndexByte(tc.path, '/')+1:], func(t *testing.T) {
			c := reproduce(t, fileInput(t, tc.path), Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.LostUpdate != tc.lost {
				t.Fatalf("want lost update %v:\n%s", tc.lost, c.Text())
			}
			waits := 0
			for _, s := range c.Steps {
				if strings.HasPrefix(s.Real, "WAIT → ") {
					waits++
				}
			}
			if waits == 0 {
				t.Fatalf("no WAIT was played:\n%s", c.Text())
			}
		})
	}
}

// TestPlantedOpenLinkIsCaught tests the tester: a replica whose link is
// never held gets A's key at once, not at a replicate step; the story's
// WAIT 1 2000 then returns 1 where the model's times out with 0, at A's
// wait step, and the failover keeps A's key.
func TestPlantedOpenLinkIsCaught(t *testing.T) {
	c := reproduce(t, fileInput(t, "../model/scenarios/replica-wait-timeout.txt"), Options{plant: plant{openLinks: true}})
	if c.Agree {
		t.Fatalf("a replica link that is never held went unnoticed:\n%s", c.Text())
	}
	for _, s := range c.Steps {
		if s.Action == "A wait" {
			if s.Agree || s.Model != "WAIT → 0 (timed out)" || s.Real != "WAIT → 1" {
				t.Fatalf("want A's wait to differ (model WAIT → 0 (timed out), real WAIT → 1), got model %q, real %q:\n%s", s.Model, s.Real, c.Text())
			}
			return
		}
	}
	t.Fatalf("no A wait step:\n%s", c.Text())
}

// TestReplicaSet plays the designs with two replicas on a real primary
// and two real replicas: each replicate step catches up the replica the
// model names (its k-th freshest), and a failover promotes the one it
// names (promote=any: Sentinel's choice), the fresher ones and the old
// primary resynced from it, the staler one following it from its copy.
// WAIT 2 2000 counts one of two, then two; Sentinel's choice of the stale
// replica repeats the token; two failures in a row bring back A's
// released key. Each must agree with the model.
func TestReplicaSet(t *testing.T) {
	for _, tc := range []struct {
		path string
		lost bool
	}{
		{"../model/scenarios/replica-wait-two.txt", false},
		{"../model/scenarios/replica-promote-any.txt", true},
		{"../model/scenarios/replica-two-failovers.txt", false},
		{"../counterexamples/replica-cad-rw-max-token_ack-wait_promote-any_clients-2_pauses-0_replicas-2_acks-2--mutex.txt", false},
	} {
		t.Run(tc.path[strings.LastIndexByte(tc.path, '/')+1:], func(t *testing.T) {
			in := fileInput(t, tc.path)
			if in.Design.Replicas != 2 {
				t.Fatalf("design %s: want replicas=2", in.Design.Name())
			}
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.LostUpdate != tc.lost {
				t.Fatalf("want lost update %v:\n%s", tc.lost, c.Text())
			}
		})
	}
}

// TestPlantedReplicaOrderIsCaught tests the tester: a replica set that
// does not move the replica that caught up to the front promotes, at the
// story's failover of the freshest, the server that never had A's key;
// B's acquire then wins where the model's is refused.
func TestPlantedReplicaOrderIsCaught(t *testing.T) {
	c := reproduce(t, fileInput(t, "../model/scenarios/replica-wait-two.txt"), Options{plant: plant{fixedOrder: true}})
	if c.Agree {
		t.Fatalf("a replica set that lost track of its freshest replica went unnoticed:\n%s", c.Text())
	}
	for _, s := range c.Steps {
		if s.Action == "B acquire" && s.Tick == 3 && strings.HasPrefix(s.Model, "SET NX → (nil)") {
			if s.Agree || !strings.HasPrefix(s.Real, "SET NX → OK") {
				t.Fatalf("want B's acquire after the failover to win for real, got %q:\n%s", s.Real, c.Text())
			}
			return
		}
	}
	t.Fatalf("no refused B acquire at t=3 in the model:\n%s", c.Text())
}

// TestWaitAnswersWhenItReturns: a blocked WAIT 1 0 is answered by the
// primary when the first replica's acknowledgement comes in, with the
// count then; a second replica that catches up before the client's wait
// step (the answer held on its way) is not in it. Both of the story's
// WAITs return 1 of 2, for real and in the model (which counted 2, the
// replicas that had the key at the wait step, before MarkAcks).
func TestWaitAnswersWhenItReturns(t *testing.T) {
	c := reproduce(t, fileInput(t, "testdata/replica-wait-answered.txt"), Options{})
	if !c.Agree {
		t.Fatalf("reality differs from the model:\n%s", c.Text())
	}
	waits := 0
	for _, s := range c.Steps {
		if strings.HasSuffix(s.Action, " wait") {
			waits++
			if s.Real != "WAIT → 1" {
				t.Fatalf("step %q: want WAIT → 1 (one replica had acknowledged when it returned), got %q:\n%s", s.Action, s.Real, c.Text())
			}
		}
	}
	if waits != 2 {
		t.Fatalf("want two wait steps, got %d:\n%s", waits, c.Text())
	}
}

// TestWaitSchedulesAgree is differential: seeded random schedules of
// replica sets with ack=wait, a quarter of their steps faults where one
// is enabled (failovers), played for real, agree step by step; WAIT's
// answers among them. Before the model kept WAIT's answer from the step
// that returned it (MarkAcks), 18 of seeds 1 to 20 of the first design
// and 17 of the second differed at a WAIT that counted a replica caught
// up after it had returned. LOCKCHECK_REALITY_SEEDS=N plays N seeds of
// each (default 4).
func TestWaitSchedulesAgree(t *testing.T) {
	seeds := uint64(realitySeeds(t, 4))
	for _, name := range []string{
		"replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,failovers=1,replicas=2",
		"replica/cad/rw/max-token,ack=wait,clients=2,pauses=0,replicas=3,acks=2",
	} {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			trace := storageSchedule(&d, seed, 25)
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				c := playAgrees(t, d, name, seed, trace)
				if !slices.ContainsFunc(c.Steps, func(s StepPair) bool { return strings.HasPrefix(s.Real, "WAIT → ") }) {
					t.Fatalf("no WAIT returned on this schedule:\n%s", c.Text())
				}
			})
		}
	}
}
