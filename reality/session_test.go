package reality

import (
	"strings"
	"testing"

	"lockcheck/model"
)

// TestSessionRenewalRefit tests the etcd-mutex adaptation without a
// server: the Session's keep-alive is the model's renew=TTL/3 with
// watchdog=session, each renewal right after the tick it falls due at.
// Demo 5's slow job, which loses an update with no renewal, keeps its key
// through the slow work in the refit schedule: the steps that no longer
// fit (B's read and write after the OK it no longer gets) are dropped, and
// the jobs are finished in the model's own order.
func TestSessionRenewalRefit(t *testing.T) {
	dm, err := model.LoadDemo("demo5")
	if err != nil {
		t.Fatal(err)
	}
	in, err := Load("demo5", dm.Scenario.Format())
	if err != nil {
		t.Fatal(err)
	}
	out, how, err := ForClient(in, ClientEtcdMutex)
	if err != nil {
		t.Fatal(err)
	}
	d := out.Design
	if d.Lock != model.LockEtcd || d.RenewTicks != 3 || d.Watchdog != model.WatchdogSession {
		t.Fatalf("design %s: want lock=etcd, renew=3 (TTL 10 / 3), watchdog=session", d.Name())
	}
	if !strings.Contains(how, "renew=3, watchdog=session") || !strings.Contains(how, "no longer fit dropped") {
		t.Fatalf("how %q: want the renewal and the refit named", how)
	}
	run, err := model.Replay(&d, out.Trace)
	if err != nil {
		t.Fatalf("the refit schedule does not replay: %v", err)
	}
	for k, st := range run.Steps {
		if st.Action.Kind == model.ActRenew && (k == 0 || run.Steps[k-1].Action.Kind != model.ActTick && run.Steps[k-1].Action.Kind != model.ActRenew) {
			t.Errorf("step %d (%s) is not right after a tick", st.Seq, st.Action)
		}
	}
	if _, ok := run.Violated("no-lost-update"); ok {
		t.Errorf("the renewed slow job lost an update in the model")
	}
	for i := 0; i < d.Clients; i++ {
		if run.Final.Clients[i].Phase != model.PhaseDone {
			t.Errorf("the refit schedule leaves %s's job unfinished", model.ClientName(i))
		}
	}
	// without the renewal the model loses the update (what the old
	// keep-alive tolerance excused, reality keeping A's key)
	plain := in.Design
	plain.Lock = model.LockEtcd
	if r, err := model.Replay(&plain, in.Trace); err != nil {
		t.Fatal(err)
	} else if _, ok := r.Violated("no-lost-update"); !ok {
		t.Errorf("Demo 5 on etcd with no renewal: want a lost update in the model")
	}

	// the crash after renewals is played as written
	crash := etcdInput(t, "testdata/crash-renewed.txt")
	if _, how, err := ForClient(crash, ClientEtcdMutex); err != nil || how != "" {
		t.Fatalf("crash-renewed: want it played as it is, got how %q, %v", how, err)
	}
	// a design without the session's renewal is refused, saying what to use
	bare := crash.Design
	bare.RenewTicks, bare.Watchdog = 0, model.WatchdogWorker
	if err := CheckClient(ClientEtcdMutex, &bare); err == nil || !strings.Contains(err.Error(), "want renew=1 and watchdog=session") {
		t.Fatalf("CheckClient with renew=0: want a refusal naming renew=1 and watchdog=session, got %v", err)
	}
}

// TestSessionRenewsHeldAcquire tests why etcd-mutex plays watchdog=session
// and not watchdog=thread: in the session-reply story B's acquire reply is
// held for a whole TTL, and the session's keep-alive renews B's key before
// the reply arrives, so it never expires and nobody acts without the key,
// as on real etcd (TestEtcdHeldAcquireReply plays it). With
// watchdog=thread, a renewal that starts with the reply, the model's key
// expires at t=5 and B acts without it: the difference real runs showed
// before the model had the word ("step 17 (t=5 tick): key after: model
// nobody, real B's", on testdata/etcd-acquire-reply.txt).
func TestSessionRenewsHeldAcquire(t *testing.T) {
	in := storyInput(t, "session-reply")
	out, how, err := ForClient(in, ClientEtcdMutex)
	if err != nil || how != "" {
		t.Fatalf("session-reply: want it played as it is for etcd-mutex, got how %q, %v", how, err)
	}
	run, err := model.Replay(&out.Design, out.Trace)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := run.Violated("exclusive"); ok {
		t.Fatalf("watchdog=session: the session renews B's key while its reply is held, want exclusive to hold")
	}
	thread := out.Design
	thread.Watchdog = model.WatchdogThread
	trace, _, err := refitRenewals(&thread, in.Trace)
	if err != nil {
		t.Fatal(err)
	}
	if run, err = model.Replay(&thread, trace); err != nil {
		t.Fatal(err)
	}
	if _, ok := run.Violated("exclusive"); !ok {
		t.Fatalf("watchdog=thread: B's key, unrenewed while its reply is held, must expire and B act without it")
	}
}

// storyInput loads a story of model/scenarios as the library table does.
func storyInput(t *testing.T, name string) *Input {
	t.Helper()
	dm, err := model.LoadDemo(name)
	if err != nil {
		t.Fatal(err)
	}
	in, err := Load(name, dm.Scenario.Format())
	if err != nil {
		t.Fatal(err)
	}
	return in
}
