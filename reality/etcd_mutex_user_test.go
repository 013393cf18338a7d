package reality

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"lockcheck/catalogue"
	"lockcheck/explore"
	"lockcheck/model"
)

// etcdMutexUser is a user's client of etcd's concurrency.Mutex (client/v3
// v3.6.16): a Session of the target's TTL (NewSession, WithTTL), Mutex.Lock
// (tryAcquire's put, then waitDeletes and the Get of its own key:
// ErrSessionExpired when its session's lease ran out while it waited; the
// client then makes a new Session, as the model's does), and Unlock (a
// delete by name, which says nothing of whether the key was there: the
// client Gets its key first). It tells its key by name (Owns: etcd's
// Mutex puts an empty value). bug is a planted mistake ("": none).
type etcdMutexUser struct {
	cli *clientv3.Client
	t   UserTarget
	s   *concurrency.Session
	m   *concurrency.Mutex
	key atomic.Value // its session's key, <prefix>/<lease>
	bug string
}

func (u *etcdMutexUser) session() error {
	s, err := concurrency.NewSession(u.cli, concurrency.WithTTL(int(u.t.TTL/time.Second)))
	if err != nil {
		return err
	}
	u.s, u.m = s, concurrency.NewMutex(s, u.t.Key)
	u.key.Store(fmt.Sprintf("%s/%x", u.t.Key, s.Lease()))
	return nil
}

func (u *etcdMutexUser) Acquire(ctx context.Context) (bool, string, error) {
	err := u.m.Lock(ctx)
	if errors.Is(err, concurrency.ErrSessionExpired) {
		if u.bug == "stale-session" { // planted: Lock again on the session whose lease ran out
			return false, "Lock → " + errText(err) + " (same session kept)", nil
		}
		u.s.Orphan()
		if err := u.session(); err != nil {
			return false, "", err
		}
		return false, "Lock → " + errText(err) + ", a new session", nil
	}
	if err != nil && u.bug == "stale-session" { // its dead lease: "requested lease not found"
		return false, "Lock → " + errText(err), nil
	}
	return err == nil, "Lock → " + errText(err), err
}

func (u *etcdMutexUser) Release(ctx context.Context) (bool, string, error) {
	r, err := u.cli.Get(ctx, u.m.Key())
	if err != nil {
		return false, "", err
	}
	if err := u.m.Unlock(ctx); err != nil && !errors.Is(err, concurrency.ErrLockReleased) {
		return false, "", err
	}
	if u.bug == "unlock-nil" { // planted: Unlock's nil taken for "released"
		return true, "Unlock → nil", nil
	}
	return len(r.Kvs) == 1, fmt.Sprintf("Get → %d keys, Unlock → nil", len(r.Kvs)), nil
}

func (u *etcdMutexUser) Extend(context.Context) (bool, string, error) {
	return false, "", errors.New("an etcd Session renews itself")
}

func (u *etcdMutexUser) Validity(context.Context) (time.Duration, string, error) {
	return 0, "", errors.New("an etcd Mutex has no validity")
}

func (u *etcdMutexUser) Owns(key string) bool { k, _ := u.key.Load().(string); return k == key }

func (u *etcdMutexUser) Close() {
	if u.s != nil {
		u.s.Orphan()
	}
	u.cli.Close()
}

func etcdMutexMaker(bug string) UserMaker {
	return func(ctx context.Context, t UserTarget) (UserLock, error) {
		cli, err := newEtcdClient(t.Addr)
		if err != nil {
			return nil, err
		}
		u := &etcdMutexUser{cli: cli, t: t, bug: bug}
		if err := u.session(); err != nil {
			cli.Close()
			return nil, err
		}
		return u, nil
	}
}

// TestEtcdMutexUserClient plays etcd's concurrency.Mutex as a user's
// client (etcdMutexUser) on the catalogue's etcd-mutex rows, with the
// 3-tick session they are played with: the shortest run of every property
// and behaviour of each row a user's client can play, and the waiter whose
// session expires in the queue (testdata/etcd-mutex-waiter.txt). It agrees
// step by step on each. Every other etcd-mutex row is refused in one line
// naming the parameter. Planted: a client that takes Unlock's nil for
// "released" differs at the release of a holder whose session expired; a
// client that locks again on its expired session (no new Session) differs
// at B's Lock on it.
func TestEtcdMutexUserClient(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: etcd runs of 20 to 60s (2s ticks), side by side")
	}
	t.Parallel()
	type run struct {
		name string
		in   *Input
		bug  string
		want func(t *testing.T, c *Comparison)
	}
	var runs []run
	played := 0
	for _, e := range catalogue.Entries {
		d, err := model.ParseDesign(e.Name)
		if err != nil || d.Lock != model.LockEtcdMutex {
			continue
		}
		d, err = model.ParseDesign(e.Name + ",session=3")
		if err != nil {
			t.Fatal(err)
		}
		err = CheckClient(ClientUser, &d)
		if err == nil {
			err = Playable(&d)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "want ") && !strings.Contains(err.Error(), "set ") {
				t.Errorf("%s: want a one-line refusal saying what to set, got %q", d.Name(), err)
			}
			t.Logf("refused: %s: %v", d.Name(), err)
			continue
		}
		played++
		rep, err := explore.Check(explore.Config{Design: d, Bounds: explore.Bounds{Symmetry: true}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			race := slices.ContainsFunc(r.Trace, func(a model.Action) bool { return SessionRace(&d, a) })
			seen := slices.ContainsFunc(runs, func(x run) bool { return slices.Equal(x.in.Trace, r.Trace) })
			if len(r.Trace) == 0 || race || seen {
				continue
			}
			prop, status := r.Property, r.Status
			runs = append(runs, run{name: d.Name() + " " + prop, in: &Input{Source: "shortest " + prop, Kind: "counterexample", DesignName: d.Name(), Design: d, Trace: r.Trace},
				want: func(t *testing.T, c *Comparison) {
					for _, p := range c.Real.Properties {
						if p.Property == prop && !p.Shown {
							t.Errorf("the real run does not show %s (%v in the model):\n%s", prop, status, c.Text())
						}
					}
				}})
		}
	}
	if played < 2 {
		t.Fatalf("want the catalogue's etcd-mutex rows del/none/plain and its pause-at=acquire played, got %d rows", played)
	}
	waiter := etcdInput(t, "testdata/etcd-mutex-waiter.txt")
	runs = append(runs, run{name: "waiter", in: waiter, want: func(t *testing.T, c *Comparison) {
		if st := c.play.Steps[15]; st.Took != model.ActAcquire || st.Result != model.ResNoop {
			t.Errorf("step 15: want B's Lock to answer ErrSessionExpired (no-op), got %v %v (%q)", st.Took, st.Result, st.Told)
		}
	}})
	// planted: the shortest lost update (its holder's session expires in
	// a pause, and it releases once it resumes), and the waiter
	var expired *Input
	for _, r := range runs {
		if strings.HasSuffix(r.name, " no-lost-update") && expired == nil {
			expired = r.in
		}
	}
	if expired == nil {
		t.Fatalf("no shortest run of no-lost-update among %d", len(runs))
	}
	runs = append(runs, run{name: "planted unlock-nil", in: expired, bug: "unlock-nil"},
		run{name: "planted stale-session", in: waiter, bug: "stale-session"})

	// redis-servers of the test's own for the storage, eight runs each
	var srvs []*Server
	for len(srvs)*8 < len(runs) {
		srvs = append(srvs, lockServer(t, false))
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, r := range runs {
		wg.Add(1)
		go func(k int, r run) {
			defer wg.Done()
			c, err := playUserQueued(srvs[k/8], k%8, r.in, etcdMutexMaker(r.bug))
			mu.Lock()
			defer mu.Unlock()
			t.Run(r.name, func(t *testing.T) {
				if err != nil {
					t.Fatal(err)
				}
				if c.Late {
					t.Fatalf("two void runs in a row (step %d answered %.1fms into its tick, window %.1fms): the machine is too loaded to keep the timing", c.LateSeq, c.LatestMS, c.WindowMS)
				}
				if r.bug != "" {
					want := map[string]string{"unlock-nil": " release", "stale-session": "t=7 B acquire"}[r.bug]
					if c.Agree || len(c.Differences) == 0 || !strings.Contains(c.Differences[0], want) {
						t.Fatalf("planted %s: want the first difference at %q, got %q\n%s", r.bug, want, c.Differences, c.Text())
					}
					t.Logf("planted %s: %s", r.bug, c.Differences[0])
					return
				}
				if !c.Agree {
					t.Fatalf("etcd's Mutex as a user's client differs from the model:\n%s", c.Text())
				}
				if r.want != nil {
					r.want(t, c)
				}
				t.Logf("%d steps: %s", len(r.in.Trace), c.Verdict())
			})
		}(k, r)
	}
	wg.Wait()
}

// playUserQueued plays in with the user's client of maker on an etcd
// member of its own, the storage in databases 2k and 2k+1 of srv;
// a void run is played again once.
func playUserQueued(srv *Server, k int, in *Input, maker UserMaker) (*Comparison, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	e, err := StartEtcd(ctx)
	if err != nil {
		return nil, err
	}
	defer e.Stop()
	for attempt := 1; ; attempt++ {
		opts := Options{Addr: srv.Addr(), Etcd: e.Endpoint(), LockDB: 2 * k, StoreDB: 2*k + 1, Client: ClientUser, User: maker}
		c, err := Reproduce(ctx, in, "redis-server "+srv.Version()+" on "+srv.Addr(), opts)
		if err != nil || !c.Late || attempt == 2 {
			return c, err
		}
	}
}
