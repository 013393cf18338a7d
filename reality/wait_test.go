package reality

import (
	"strings"
	"testing"
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
