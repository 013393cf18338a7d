package reality

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestPausedLibraryIsFrozen tests the true pause: etcd's session keeps
// its lease alive from a goroutine of its own. With the client's traffic
// held during the pause, A's lease expires and B takes the lock, as in the
// model; with the pause freezing only the caller (planted), the keep-alive
// goes on, A keeps the key, and the comparison must say so at the tick of
// the expiry.
func TestPausedLibraryIsFrozen(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: four etcd runs of 16s to 18s (2s ticks)")
	}
	// mostly sleep: runs alongside the other etcd tests, with an etcd of
	// its own and databases 12 and 13
	t.Parallel()
	e, err := StartEtcd(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	opts := Options{Client: ClientEtcdMutex, Etcd: e.Endpoint(), LockDB: 12, StoreDB: 13}
	in, _, err := ForClient(etcdInput(t, "testdata/etcd-pause.txt"), ClientEtcdMutex)
	if err != nil {
		t.Fatal(err)
	}
	c := reproduce(t, in, opts)
	if !c.Agree || !c.Real.LostUpdate {
		t.Fatalf("want agreement and a lost update with the pause held:\n%s", c.Text())
	}
	opts.plant.noHold = true
	c = reproduce(t, in, opts)
	want := "step 9 (t=4 tick): key after: model nobody, real A's"
	if c.Agree || len(c.Differences) == 0 || c.Differences[0] != want {
		t.Fatalf("a pause that lets the keep-alive run went unnoticed: want first difference %q, got %q\n%s", want, c.Differences, c.Text())
	}
	crashEndsKeepAlive(t, e) // on the same etcd and databases, after the pause
}

// crashEndsKeepAlive tests the crash of an etcd-mutex client: a crashed
// client's session must stop renewing (etcdMutexLock.crashed), its lease
// runs out and the library table's crash rows agree with the model
// (TestLibraryTable plays them). The model renews as the session does
// (renew=TTL/3, watchdog=session: session.go), so no tolerance excuses a
// kept-alive key any more (the old one excused a running client's; it
// once hid this very bug). With the old adapter, in which a crash ended
// the caller only and the session renewed its lease for the rest of the
// run (planted), A's key outlives the model's: at t=4 when A crashes
// before its first renewal, at t=6 when it crashes after two.
func crashEndsKeepAlive(t *testing.T, e *EtcdServer) {
	t.Helper()
	for _, c := range []struct{ file, want string }{
		{"testdata/crash-holder.txt", "step 9 (t=4 tick): key after: model nobody, real A's"},
		{"testdata/crash-renewed.txt", "step 15 (t=6 tick): key after: model nobody, real A's"},
	} {
		in, _, err := ForClient(etcdInput(t, c.file), ClientEtcdMutex)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Client: ClientEtcdMutex, Etcd: e.Endpoint(), LockDB: 12, StoreDB: 13}
		opts.plant.crashLives = true
		cmp := reproduce(t, in, opts)
		if cmp.Agree || len(cmp.Differences) == 0 || cmp.Differences[0] != c.want {
			t.Fatalf("%s: a crash that leaves the session renewing went unnoticed: want first difference %q, got %q\n%s", c.file, c.want, cmp.Differences, cmp.Text())
		}
		if cmp.Known != "" {
			t.Fatalf("%s: a crashed client's kept-alive key was excused as a documented difference (%q):\n%s", c.file, cmp.Known, cmp.Text())
		}
	}
}

// TestLibraryTable plays every row of the README's library table (each
// client under each fault, with each storage) for real: every row must
// agree with the model or show exactly its documented difference, Demo 2
// must lose an update with every client, and the README must show the
// table as it is generated now.
func TestLibraryTable(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: the etcd rows take about 40s (2s ticks)")
	}
	s := needServer(t)
	t.Parallel() // mostly sleep: alongside the other etcd tests (it uses databases 0 to 11)
	rows, err := RunLibraryTable(context.Background(), TableEnv{
		Redis: s.Addr(), Server: "redis-server " + s.Version() + " on " + s.Addr(), // 100ms ticks: the etcd rows run alongside
		StartEtcd: func(ctx context.Context) (string, func(), error) {
			e, err := StartEtcd(ctx)
			if err != nil {
				return "", nil, err
			}
			return e.Endpoint(), e.Stop, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]bool{}
	for _, r := range rows {
		if r.NotPlayed != "" {
			t.Logf("%s: not played: %s", r.Command(), r.NotPlayed)
			continue
		}
		clients[r.Client] = true
		if !r.C.Agree && r.Known == "" {
			t.Errorf("%s: reality differs from the model:\n%s", r.Command(), r.C.Text())
		}
		if r.Name == "demo2" && (!r.C.Real.LostUpdate || !r.C.Model.LostUpdate) {
			t.Errorf("%s: Demo 2 must lose an update in both worlds:\n%s", r.Command(), r.C.Text())
		}
	}
	for _, cl := range ClientNames {
		if !clients[cl] {
			t.Errorf("client %s has no row", cl)
		}
	}
	readme, err := os.ReadFile("../docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	have, err := TableSection(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(FormatLibraryTable(rows))
	if have != want {
		t.Errorf("docs/guide.md's library table is stale: run %s -write docs/guide.md\nwant:\n%s", TableCommand, want)
	}
}

// TestHeldAcquireReply plays an acquire whose reply the network holds for
// a whole TTL, with redsync: it measures its validity at the acquire (the
// TTL less the time since it sent, less its drift) and refuses the late OK,
// where the model's trusting client takes it and acts with no key. That
// difference is real, and the model is the one that lacks the design, so
// ForClient refuses the schedule for redsync, saying why. With the hold
// planted away (the reply comes back at once), redsync takes the lock with
// its whole validity, and agrees with the trusting model: the hold reaches
// the library's own clock.
func TestHeldAcquireReply(t *testing.T) {
	in := etcdInput(t, "testdata/acquire-reply-ttl.txt")
	if _, _, err := ForClient(in, ClientRedsync); err == nil {
		t.Fatal("ForClient took a whole-TTL acquire reply delay for redsync")
	} else if np, ok := IsNotPlayable(err); !ok || !strings.Contains(np.Because, "redsync measures its validity at the acquire") {
		t.Fatalf("ForClient: want a NotPlayable naming redsync's validity check, got %v", err)
	}
	c := reproduce(t, in, Options{Client: ClientRedsync})
	want := "step 20 (t=13 B arrive): reply: model held acquire reply arrives → OK, real held acquire reply arrives → refused"
	if c.Agree || len(c.Differences) == 0 || c.Differences[0] != want {
		t.Fatalf("redsync's refusal of a reply held for its whole TTL: want first difference %q, got %q\n%s", want, c.Differences, c.Text())
	}
	// the reply held for 9 ticks arrives in the arrive step, not at the
	// start of its tick: redsync, finding its validity gone, deletes its
	// key by itself, which must not race the tick's look, however late
	// the look is on a loaded machine (CI once saw the key gone at t=12)
	late := Options{Client: ClientRedsync}
	late.plant.lookLate = testTick / 4
	if c := reproduce(t, etcdInput(t, "../model/scenarios/acquire-validity.txt"), late); !c.Agree {
		t.Fatalf("redsync's late reply with the tick's look %v late: want agreement, got:\n%s", late.plant.lookLate, c.Text())
	}
	opts := Options{Client: ClientRedsync}
	opts.plant.noReplyHold = true
	if c := reproduce(t, in, opts); !c.Agree {
		t.Fatalf("with the reply not held, redsync must take the lock as the trusting model does:\n%s", c.Text())
	}
}
