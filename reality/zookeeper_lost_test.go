package reality

import (
	"context"
	"strings"
	"testing"
	"time"

	"lockcheck/model"
)

// TestLostCreateOnRealZooKeeper plays ZooKeeper creates whose reply is
// lost (the client's proxy forwards the create, drops the reply and cuts
// the connection; go-zookeeper reconnects within the session) with
// lockcheck's own client: the catalogue's protect=no counterexample and
// the two stories. Each must agree with the model step by step; without
// protected mode the orphan node of A's live session holds the lock for
// no one (✗ progress at the lost step), with it A's resend finds its node
// by the GUID and both jobs end. go-zookeeper's recipe plays the protected
// story: its LockWithData finds its node by the GUID inside the call.
func TestLostCreateOnRealZooKeeper(t *testing.T) {
	for _, tc := range []struct {
		path     string
		client   string
		progress int // the step progress is violated at (0: it holds)
		counter  int
	}{
		{"../counterexamples/zookeeper-cad-none-plain_protect-no_lose-at-acquire_pauses-0_losses-1_timeout-3--progress.txt", ClientReference, 1, 0},
		{"../model/scenarios/zookeeper-unprotected.txt", ClientReference, 1, 0},
		{"../model/scenarios/zookeeper-protected.txt", ClientReference, 0, 2},
		{"../model/scenarios/zookeeper-protected.txt", ClientZkLock, 0, 2},
	} {
		t.Run(strings.TrimSuffix(tc.path[strings.LastIndex(tc.path, "/")+1:], ".txt")+"/"+tc.client, func(t *testing.T) {
			in := fileInput(t, tc.path)
			if err := Playable(&in.Design); err != nil {
				t.Fatal(err)
			}
			if err := CheckClient(tc.client, &in.Design); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			c := reproduce(t, in, Options{Client: tc.client})
			t.Logf("%s: %v of wall time, tick %dms", in.Design.Name(), time.Since(start).Round(time.Millisecond), c.TickMS)
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.Counter != tc.counter {
				t.Fatalf("counter %d, want %d:\n%s", c.Real.Counter, tc.counter, c.Text())
			}
			for _, p := range c.Real.Properties {
				if p.Property != "progress" {
					continue
				}
				if tc.progress == 0 && p.Shown || tc.progress > 0 && (!p.Shown || p.Seq != tc.progress) {
					t.Fatalf("progress on the real server: %s, want it violated at step %d (0: holds):\n%s", shownText(p), tc.progress, c.Text())
				}
			}
			lost := false
			for _, st := range c.Steps {
				if strings.HasSuffix(st.Action, " lose") {
					lost = true
					if !strings.Contains(st.Told, "connection closed") && !strings.Contains(st.Told, "LockWithData running") || !strings.Contains(st.Told, "connection cut") {
						t.Fatalf("the lost create: told %q; want the connection loss and the node the server made", st.Told)
					}
				}
			}
			if !lost {
				t.Fatal("the schedule lost no create")
			}
		})
	}
}

// TestLostCreatePlantedBugs: the play of a lost create fails when the
// proxy lets the create's reply through (nothing lost: the run stops,
// saying so), and disagrees with the model when the resend does what the
// other protect= does (protect=no finding its node, protect=yes creating
// another).
func TestLostCreatePlantedBugs(t *testing.T) {
	unprotected := "../model/scenarios/zookeeper-unprotected.txt"
	protected := "../model/scenarios/zookeeper-protected.txt"
	for _, tc := range []struct{ path, client string }{{unprotected, ClientReference}, {protected, ClientZkLock}} {
		t.Run("reply-kept/"+tc.client, func(t *testing.T) {
			_, err := reproduceZK(t, fileInput(t, tc.path), Options{Client: tc.client, plant: plant{zkLost: zkLostPlant{keepReply: true}}})
			if err == nil || !strings.Contains(err.Error(), "its create got a reply, which its proxy was to drop") {
				t.Fatalf("a create whose reply came back went unnoticed: %v", err)
			}
		})
	}
	for _, path := range []string{unprotected, protected} {
		t.Run("flip/"+path[strings.LastIndex(path, "/")+1:], func(t *testing.T) {
			c := reproduce(t, fileInput(t, path), Options{plant: plant{zkLost: zkLostPlant{flipProtect: true}}})
			if c.Agree {
				t.Fatalf("a resend that did what the other protect= does went unnoticed:\n%s", c.Text())
			}
			t.Logf("caught: %s", strings.Join(c.Differences, "; "))
		})
	}
}

// reproduceZK is reproduce's single run on the shared servers, its error
// returned, not fatal.
func reproduceZK(t *testing.T, in *Input, opts Options) (*Comparison, error) {
	t.Helper()
	s := needServer(t)
	opts.Addr, opts.ZooKeeper, opts.Tick = s.Addr(), needZooKeeper(t).Addr(), 2*testTick
	opts.LockDB, opts.StoreDB = dbPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	return Reproduce(ctx, in, "redis-server "+s.Version()+" on "+s.Addr(), opts)
}

// TestLostCreatePlayable: the catalogue's ZooKeeper rows with a lost
// create's reply are played with lockcheck's own client, the protected
// one with go-zookeeper's recipe and a user's client too; the others are
// refused saying why, and a create lost on its way (lose=request) is
// lockcheck's own client's only.
func TestLostCreatePlayable(t *testing.T) {
	for _, name := range []string{
		"zookeeper/cad/none/plain,protect=no,lose-at=acquire,pauses=0,losses=1,timeout=3",
		"zookeeper/cad/none/plain,lose-at=acquire,pauses=0,losses=1,timeout=3",
	} {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Playable(&d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, lib := range []string{ClientUser, ClientZkLock} {
			err := CheckClient(lib, &d)
			switch {
			case d.Protect == model.ProtectYes && err != nil:
				t.Errorf("%s with %s: %v", name, lib, err)
			case d.Protect == model.ProtectNo && (err == nil || !strings.HasSuffix(err.Error(), "want protect=yes")):
				t.Errorf("%s with %s: want a refusal asking for protect=yes, got %v", name, lib, err)
			}
		}
	}
	// a create lost on its way: lockcheck's own client only
	d, err := model.ParseDesign("zookeeper/cad/none/plain,lose=request,lose-at=acquire,pauses=0,losses=1,timeout=3")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckClient(ClientUser, &d); err == nil || !strings.HasSuffix(err.Error(), "is played with lockcheck's own client only; want lose=reply") {
		t.Errorf("lose=request with %s: want a refusal asking for lose=reply, got %v", ClientUser, err)
	}
	// go-zookeeper's Lock creates again at once, inside the call
	// (TestLostCreateRequestPlayable)
	if err := CheckClient(ClientZkLock, &d); err == nil || !strings.Contains(err.Error(), "CreateProtectedEphemeralSequential") || !strings.HasSuffix(err.Error(), "want lose=reply") {
		t.Errorf("lose=request with %s: want a refusal naming go-zookeeper's retry, asking for lose=reply, got %v", ClientZkLock, err)
	}
}
