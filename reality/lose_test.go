package reality

import (
	"strings"
	"testing"

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
// release to one Redis node is refused as not playable, saying so.
func TestLostRepliesStayUnplayed(t *testing.T) {
	const want = "lost replies and requests are played for real at a release to one Redis node only"
	for name, want := range map[string]string{
		"redis/cad/none/plain,losses=1,timeout=3":                                       want,
		"redis/cad/none/plain,losses=1,lose=request,timeout=3":                          want,
		"zookeeper/cad/none/plain,losses=1,lose=request,lose-at=release,timeout=3":      want,
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
