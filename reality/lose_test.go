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

// TestLostReleaseOnRealRedis plays a release lost on its way to Redis
// (lose=request, lose-at=release: the client's proxy drops the request
// and closes the connection) with each Redis client. The client that
// sends it again after its timeout (release-fail=retry) deletes its key
// then, as the model's does; the one that forgets (release-fail=forget)
// leaves it to its TTL. Both must agree with the model step by step, and
// the lost step's look must show the key still there: the request was
// dropped, not applied.
func TestLostReleaseOnRealRedis(t *testing.T) {
	for _, tc := range []struct {
		story  string
		client string
	}{
		{"release-retry", ClientReference},
		{"release-retry", ClientRedsync},
		{"release-retry", ClientRedislock},
		{"release-forget-redis", ClientReference},
	} {
		t.Run(tc.story+"/"+tc.client, func(t *testing.T) {
			dm, err := model.LoadDemo(tc.story)
			if err != nil {
				t.Fatal(err)
			}
			in := scenarioInput(t, tc.story, dm.Scenario.Format())
			if err := Playable(&in.Design); err != nil {
				t.Fatal(err)
			}
			c := reproduce(t, in, Options{Client: tc.client})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			lost := false
			for _, st := range c.Steps {
				if strings.HasSuffix(st.Action, " lose") {
					lost = true
					if !strings.Contains(st.Real, "nothing applied; key: A's") || st.Told == "" {
						t.Fatalf("the lost release: real %q, told %q; want A's key still there and what the client said", st.Real, st.Told)
					}
				}
			}
			if !lost {
				t.Fatal("the schedule lost no release")
			}
		})
	}
}

// TestLostReleaseReplyOnRealRedis plays the lost-release story: A's plain
// DEL is applied but its reply is lost (the client's proxy forwards the
// request, drops the reply and closes the connection); after its 3-tick
// timeout A sends the DEL again and deletes B's key (own-release), and
// B's update is lost. lockcheck's own client must agree with the model
// step by step, the lost step showing the key deleted.
func TestLostReleaseReplyOnRealRedis(t *testing.T) {
	dm, err := model.LoadDemo("lost-release")
	if err != nil {
		t.Fatal(err)
	}
	in := scenarioInput(t, "lost-release", dm.Scenario.Format())
	if err := Playable(&in.Design); err != nil {
		t.Fatal(err)
	}
	c := reproduce(t, in, Options{})
	if !c.Agree || !c.Real.LostUpdate {
		t.Fatalf("want agreement and a lost update on real Redis:\n%s", c.Text())
	}
	lost := false
	for _, st := range c.Steps {
		if strings.HasSuffix(st.Action, " lose") {
			lost = true
			if !strings.Contains(st.Real, "release applied (deleted), its reply lost; key: nobody") {
				t.Fatalf("the lost reply: real %q; want the release applied, the key gone", st.Real)
			}
		}
	}
	if !lost {
		t.Fatal("the schedule lost no reply")
	}
}

// TestLostRepliesStayUnplayed: a lost reply or request other than at a
// release to one Redis node, or at a ZooKeeper create, lost on its way or
// its reply (zookeeper_lost.go), is refused as not playable, saying so.
func TestLostRepliesStayUnplayed(t *testing.T) {
	const want = "lost replies and requests are played for real at a release to one Redis node (lock=redis, lose-at=release, delays=0) and at a ZooKeeper create only (lock=zookeeper, lose-at=acquire, delays=0)"
	for name, want := range map[string]string{
		"redis/cad/none/plain,losses=1,timeout=3":                                       want,
		"redis/cad/none/plain,losses=1,lose=request,timeout=3":                          want,
		"zookeeper/cad/none/plain,losses=1,lose=request,lose-at=release,timeout=3":      want,
		"zookeeper/cad/none/plain,losses=1,lose=request,timeout=3":                      want,
		"redis/cad/none/plain,losses=1,lose=request,lose-at=release,timeout=3,delays=1": want,
	} {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		err = Playable(&d)
		if np, ok := IsNotPlayable(err); !ok || !strings.Contains(np.Because, want) {
			t.Errorf("%s: want a NotPlayable saying %q, got %v", name, want, err)
		}
	}
}

// TestLostReplyOfAScriptNotLoaded: a release by a script the server has
// not loaded yet is two round trips (go-redis's Script.Run: EVALSHA, then
// EVAL after the NOSCRIPT error). A drop of replies lets the NOSCRIPT
// through and drops the EVAL's: the release is applied, its reply lost.
// Dropping the NOSCRIPT instead left the key in place while the model's
// release deleted it (a user's client on a fresh server: locktest's
// unanswered swarm parted at its lost step, "key after: model nobody,
// real A's", when no other schedule had loaded the script first).
func TestLostReplyOfAScriptNotLoaded(t *testing.T) {
	srv := needServer(t)
	db, _ := dbPair(t)
	ctx := context.Background()
	var h netHold
	defer h.close()
	via, err := h.via(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	direct := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: db})
	defer direct.Close()
	rc := redis.NewClient(&redis.Options{Addr: via, DB: db, MaxRetries: -1})
	defer rc.Close()
	// a script no test has loaded: its own text
	del := redis.NewScript(fmt.Sprintf(`-- %d
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`, time.Now().UnixNano()))
	if err := direct.Set(ctx, "k", "A", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Ping(ctx).Err(); err != nil { // connected, as a client is before its schedule
		t.Fatal(err)
	}
	if err := h.dropReplies(srv.Addr()); err != nil {
		t.Fatal(err)
	}
	_, err = del.Run(ctx, rc, []string{"k"}, "A").Int()
	callErr := err
	h.stopDrops()
	if err == nil || !h.droppedReply(srv.Addr()) {
		t.Fatalf("want the EVAL's reply dropped and the call failed, got err %v", err)
	}
	if n, err := direct.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("want the key deleted by the EVAL, got EXISTS %d (%v); the call: %v", n, err, callErr)
	}
}

// TestPushesAreNoReplies: a drop of replies forwards the RESP3 push
// messages at the head of what the server sent (an invalidation of a key
// the client tracks, as rueidis's client-side caching gets when the
// lock's key changes) and drops the rest: dropping the push instead lost
// rueidislock's connection before its delete was sent, so the release
// "whose reply was lost" was never applied (locktest's unanswered swarm,
// key after: model nobody, real A's).
func TestPushesAreNoReplies(t *testing.T) {
	const push = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$15\r\nlock:0:order-42\r\n"
	for _, tc := range []struct {
		b    string
		want int
	}{
		{push, len(push)},
		{push + ":1\r\n", len(push)},
		{push + push + ":1\r\n", 2 * len(push)},
		{":1\r\n" + push, 0},
		{">2\r\n$10\r\ninvalidate\r\n_\r\n", 24},
		{push[:20], 0}, // cut short: not known to be a push, dropped
		{"-NOSCRIPT No matching script.\r\n", 0},
	} {
		if got := pushes([]byte(tc.b)); got != tc.want {
			t.Errorf("pushes(%q) = %d, want %d", tc.b, got, tc.want)
		}
	}
}

// pingFirst is a user's lock whose Release sends a PING before its
// check-and-delete: two requests, of which a drop of replies meets the
// PING's first.
type pingFirst struct {
	rc *redis.Client
	t  UserTarget
}

func (p *pingFirst) Acquire(ctx context.Context) (bool, string, error) {
	ok, err := p.rc.SetNX(ctx, p.t.Key, p.t.Value, p.t.TTL).Result()
	return ok, "", err
}

func (p *pingFirst) Release(ctx context.Context) (bool, string, error) {
	if err := p.rc.Ping(ctx).Err(); err != nil {
		return false, "", err
	}
	n, err := cadScript.Run(ctx, p.rc, []string{p.t.Key}, p.t.Value).Int()
	return n == 1, "", err
}

func (p *pingFirst) Extend(context.Context) (bool, string, error) {
	return false, "", fmt.Errorf("none")
}
func (p *pingFirst) Validity(context.Context) (time.Duration, string, error) {
	return 0, "", fmt.Errorf("none")
}
func (p *pingFirst) Close() { p.rc.Close() }

// TestLostReplyOfAnotherRequestIsVoid: when the reply a drop meets is
// another request's (a PING before the release; a library's renewal timed
// by itself, as rueidislock's under load), the release is never sent and
// the client's key stays: the run is void (played again at a longer tick
// by its callers), not a difference of the client's.
func TestLostReplyOfAnotherRequestIsVoid(t *testing.T) {
	s := needServer(t)
	a, b := dbPair(t)
	const design = "redis/cad/none/plain,clients=1,pauses=0,losses=1,lose-at=release,timeout=3,horizon=12"
	in := scenarioInput(t, "ping-first", "design "+design+"\nA acquire\nA read\ntick\ntick\nA write\nA lose\ntick\ntick\ntick\nA release\n")
	maker := func(ctx context.Context, ut UserTarget) (UserLock, error) {
		rc := redis.NewClient(&redis.Options{Addr: ut.Addr, DB: ut.DB, MaxRetries: -1})
		return &pingFirst{rc: rc, t: ut}, rc.Ping(ctx).Err()
	}
	c, err := Reproduce(context.Background(), in, "test", Options{Addr: s.Addr(), Tick: 2 * testTick, LockDB: a, StoreDB: b, Client: ClientUser, User: maker})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Late || c.LateSeq != 6 || !strings.HasPrefix(c.Verdict(), "void") {
		t.Fatalf("want a void run at the lost step 6, got late=%v at %d, verdict %q:\n%s", c.Late, c.LateSeq, c.Verdict(), c.Text())
	}
}
