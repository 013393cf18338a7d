package reality

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"lockcheck/model"
)

// heldReleaseDesign holds one release in the network for up to 12 ticks,
// past the TTL of 10 (delay-at=release).
const heldReleaseDesign = "redis/cad/none/plain,clients=2,pauses=0,delays=1,delay-at=release,max-delay=12,horizon=30"

// heldReleases are the first want random schedules of d whose held
// release lands at its arrive; with other, only those where it finds
// another client's key (a plain DEL deletes it: own-release).
func heldReleases(t *testing.T, d *model.Design, want int, other bool) [][]model.Action {
	t.Helper()
	var out [][]model.Action
	for seed := uint64(1); len(out) < want && seed <= 2000; seed++ {
		trace := randomSchedule(d, seed)
		s := model.Init(d)
		held, landed := false, false
		for _, a := range trace {
			before := s
			var ev model.Event
			s, ev = model.Step(d, s, a)
			st := model.StepRecord{Action: a, Event: ev, Before: before, After: s}
			switch {
			case a.Kind == model.ActDelay && model.RequestKind(d, &st) == model.ActRelease:
				held = true
			case held && a.Kind == model.ActArrive && model.RequestKind(d, &st) == model.ActRelease:
				k := before.KeyOwner(0)
				landed = !other || k >= 0 && k != int(a.Client)
			}
		}
		if landed {
			out = append(out, trace)
		}
	}
	if len(out) < want {
		t.Fatalf("%s: %d of the %d schedules wanted land a held release (seeds 1 to 2000)", d.Name(), len(out), want)
	}
	return out
}

// userMaker makes pingFirst, a user's client (its Release a PING and a
// check-and-delete).
func userMaker(ctx context.Context, ut UserTarget) (UserLock, error) {
	rc := redis.NewClient(&redis.Options{Addr: ut.Addr, DB: ut.DB, MaxRetries: -1})
	return &pingFirst{rc: rc, t: ut}, rc.Ping(ctx).Err()
}

// TestHeldUserReleaseOnRealRedis plays a user's release held in the
// network (delay-at=release): the client calls its Release at the delay
// step, and its proxy to the lock's server keeps the requests back (its
// gate) until the arrive step, when they land and delete what the key
// holds then (with check-and-delete, another's key is left). It must
// agree with the model step by step, the arrive's look showing what the
// late release found. A planted gate that lets the release land at once
// is caught.
func TestHeldUserReleaseOnRealRedis(t *testing.T) {
	d, err := model.ParseDesign(heldReleaseDesign)
	if err != nil {
		t.Fatal(err)
	}
	user := Options{Client: ClientUser, User: userMaker}
	for _, other := range []bool{false, true} {
		for k, trace := range heldReleases(t, &d, 2, other) {
			sc := &model.Scenario{Design: d, DesignName: heldReleaseDesign, Trace: trace}
			in, err := Load(fmt.Sprintf("held release schedule %d", k+1), sc.Format())
			if err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("other=%v/%d", other, k+1), func(t *testing.T) {
				c := reproduce(t, in, user)
				if !c.Agree {
					t.Fatalf("reality differs from the model:\n%s\n%s", model.FormatTrace(trace), c.Text())
				}
				if !strings.Contains(c.Text(), "held release arrives") {
					t.Fatalf("no held release arrives:\n%s", c.Text())
				}
			})
		}
	}

	// the planted bug: the held release lands at once
	trace := heldReleases(t, &d, 1, true)[0]
	sc := &model.Scenario{Design: d, DesignName: heldReleaseDesign, Trace: trace}
	in, err := Load("held release, not held", sc.Format())
	if err != nil {
		t.Fatal(err)
	}
	s := needServer(t)
	lockDB, storeDB := dbPair(t)
	opts := Options{Addr: s.Addr(), Tick: 2 * testTick, LockDB: lockDB, StoreDB: storeDB, Client: ClientUser, User: userMaker}
	opts.plant.noReleaseHold = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Reproduce(ctx, in, "redis-server "+s.Version(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agree {
		t.Fatalf("a release that is not held: want a difference, got agreement:\n%s", c.Text())
	}
	t.Logf("a release that is not held is caught:\n%s", c.Text())
}

// TestHeldUserReleaseRefusal: a user's held release is played with
// nothing else of its client in between (a renewal would wait behind it
// at the gate); the refusal names the step.
func TestHeldUserReleaseRefusal(t *testing.T) {
	const design = "redis/cad/none/plain,clients=1,pauses=0,delays=1,delay-at=release,max-delay=12,renew=2"
	d, err := model.ParseDesign(design)
	if err != nil {
		t.Fatal(err)
	}
	var trace []model.Action
	for _, w := range []string{"A acquire", "A read", "tick", "tick", "A write", "A delay 5", "A renew"} {
		a, err := model.ParseAction(w)
		if err != nil {
			t.Fatal(err)
		}
		trace = append(trace, a)
	}
	run, err := model.Replay(&d, trace)
	if err != nil {
		t.Fatal(err)
	}
	err = heldPlayable(&d, ClientUser, run)
	if np, ok := IsNotPlayable(err); !ok || !strings.Contains(np.Because, "comes while client A's release, held at step 6, is on its way") {
		t.Errorf("want a NotPlayable naming the renewal, got %v", err)
	}
	if err := heldPlayable(&d, ClientReference, run); err != nil {
		t.Errorf("lockcheck's own client: want it played, got %v", err)
	}

	// the lock's server killed while the release waits at the gate
	const crashDesign = "redis/cad/none/plain,clients=1,pauses=0,delays=1,delay-at=release,max-delay=12,node-crashes=1"
	if d, err = model.ParseDesign(crashDesign); err != nil {
		t.Fatal(err)
	}
	trace = nil
	for _, w := range []string{"A acquire", "A read", "tick", "tick", "A write", "A delay 5", "node-crash 1"} {
		a, err := model.ParseAction(w)
		if err != nil {
			t.Fatal(err)
		}
		trace = append(trace, a)
	}
	if run, err = model.Replay(&d, trace); err != nil {
		t.Fatal(err)
	}
	err = heldPlayable(&d, ClientUser, run)
	if np, ok := IsNotPlayable(err); !ok || !strings.Contains(np.Because, "step 7 (node-crash 1) comes while client A's release, held at step 6") {
		t.Errorf("want a NotPlayable naming the node crash, got %v", err)
	}
}
