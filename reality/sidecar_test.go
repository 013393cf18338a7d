package reality

import (
	"strings"
	"testing"

	"lockcheck/model"
)

// TestSidecarOnRealRedis plays a sidecar renewer (watchdog=sidecar) on a
// real Redis: its renewals go over a connection of its own, which the
// worker's pause does not hold. In sidecar-pause A's key is renewed at
// t=4, 7, 10 and 13 while A is frozen, and is A's at every tick of the
// pause; in sidecar-crash and the catalogue's counterexample A's worker
// crashes holding the lock and its sidecar, told nothing, renews the key
// for ever: the real run shows the progress failure too. Each must agree
// with the model step by step.
func TestSidecarOnRealRedis(t *testing.T) {
	for _, tc := range []struct{ name, path string }{
		{"sidecar-pause", "../model/scenarios/sidecar-pause.txt"},
		{"sidecar-crash", "../model/scenarios/sidecar-crash.txt"},
		{"counterexample", "../counterexamples/redis-cad-none-plain_watchdog-sidecar_pauses-0_crashes-1_renew-3--progress.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := reproduce(t, fileInput(t, tc.path), Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if tc.name == "sidecar-pause" {
				if c.Real.Counter != 2 || len(c.Real.Expired) != 0 || len(c.Real.Unsafe) != 0 {
					t.Fatalf("want A's key kept through the pause (counter 2, no expiry, no ✗), got counter %d, expired %v, ✗ %v\n%s",
						c.Real.Counter, c.Real.Expired, c.Real.Unsafe, c.Text())
				}
				return
			}
			if shownAt(c.Real, "progress") != 2 {
				t.Fatalf("want progress violated at step 2 on the real server, got %d\n%s", shownAt(c.Real, "progress"), c.Text())
			}
		})
	}
}

// TestPlantedSidecarIsCaught tests the tester: a sidecar whose traffic
// the worker's pause holds (as if it ran in the worker's process) sends
// its renewal at t=4 (step 10) into the hold and gets no answer, and a sidecar that dies with
// its worker leaves a key that expires: the comparison must say so at
// that step, not report agreement.
func TestPlantedSidecarIsCaught(t *testing.T) {
	for _, tc := range []struct {
		name, path, want string
		plant            plant
	}{
		{"held", "../model/scenarios/sidecar-pause.txt", "step 10 (t=4 A renew): step taken: model renew, real none (its sidecar's renewal is held in the network)", plant{sidecarHeld: true}},
		{"dies", "../model/scenarios/sidecar-crash.txt", "step 2 (t=1 A crash): reply: model (fault, no request), real (fault, no request); key without expiry: model true, real false", plant{sidecarDies: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := reproduce(t, fileInput(t, tc.path), Options{plant: tc.plant})
			if c.Agree {
				t.Fatalf("the planted sidecar went unnoticed:\n%s", c.Text())
			}
			if len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], tc.want) {
				t.Fatalf("want the first difference to be %q…, got:\n%s", tc.want, strings.Join(c.Differences, "\n"))
			}
		})
	}
}

// TestSidecarRefusals: a sidecar is played on one Redis node, with
// lockcheck's own client; elsewhere it is refused in one line.
func TestSidecarRefusals(t *testing.T) {
	d, err := model.ParseDesign("replica/cad/none/plain,watchdog=sidecar,renew=3")
	if err != nil {
		t.Fatal(err)
	}
	if np, ok := IsNotPlayable(Playable(&d)); !ok || !strings.Contains(np.Because, "played for real on one Redis node only (lock=redis); set watchdog=worker") {
		t.Fatalf("%v", np)
	}
	d, err = model.ParseDesign("redis/cad/none/plain,watchdog=sidecar,renew=3")
	if err != nil {
		t.Fatal(err)
	}
	if err := Playable(&d); err != nil {
		t.Fatal(err)
	}
	for _, lib := range []string{ClientRedsync, ClientRedislock, ClientUser} {
		if err := CheckClient(lib, &d); err == nil || !strings.Contains(err.Error(), "want watchdog=worker") {
			t.Errorf("client %s: %v", lib, err)
		}
	}
}
