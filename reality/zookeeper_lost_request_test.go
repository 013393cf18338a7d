package reality

import (
	"strings"
	"testing"

	"lockcheck/model"
)

// TestLostCreateRequestOnRealZooKeeper plays the zookeeper-lost-create
// story, protect=yes as written and protect=no, with lockcheck's own
// client: A's create is dropped by its proxy on its way (the connection
// cut; go-zookeeper reconnects within the session), so the server makes
// nothing; after its timeout A creates n-2 behind B's n-1 (protect=yes
// first lists the children for its GUID) and, once B deletes n-1, holds
// the lock. Each must agree with the model step by step, the lost step
// showing nothing applied (the key nobody's) and the client told of a
// connection loss.
func TestLostCreateRequestOnRealZooKeeper(t *testing.T) {
	for _, protect := range []model.Protect{model.ProtectYes, model.ProtectNo} {
		t.Run("protect="+protect.String(), func(t *testing.T) {
			in := fileInput(t, "../model/scenarios/zookeeper-lost-create.txt")
			in.Design.Protect = protect
			if err := Playable(&in.Design); err != nil {
				t.Fatal(err)
			}
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.Counter != 2 {
				t.Fatalf("counter %d, want 2:\n%s", c.Real.Counter, c.Text())
			}
			lost := false
			for _, st := range c.Steps {
				if strings.HasSuffix(st.Action, " lose") {
					lost = true
					if st.Real != "create lost on the way, nothing applied; key: nobody" || !strings.Contains(st.Told, "connection closed") || !strings.Contains(st.Told, "request dropped") {
						t.Fatalf("the lost create: real %q, told %q; want nothing applied, the key nobody's, and the connection loss", st.Real, st.Told)
					}
				}
			}
			if !lost {
				t.Fatal("the schedule lost no create")
			}
		})
	}
}

// TestLostCreateRequestPlantedBugs: the play of a create lost on its way
// fails when the proxy forwards the create it was to drop (keeping the
// connection: the create gets its reply), and when it forwards it and
// then cuts the connection as a drop does (a lost reply, not a lost
// request: the server made a node of the client's session).
func TestLostCreateRequestPlantedBugs(t *testing.T) {
	path := "../model/scenarios/zookeeper-lost-create.txt"
	t.Run("request-kept", func(t *testing.T) {
		_, err := reproduceZK(t, fileInput(t, path), Options{plant: plant{zkLost: zkLostPlant{keepRequest: true}}})
		if err == nil || !strings.Contains(err.Error(), "its create reached the server, which its proxy was to drop") {
			t.Fatalf("a create that reached the server went unnoticed: %v", err)
		}
		t.Logf("caught: %v", err)
	})
	for _, protect := range []model.Protect{model.ProtectYes, model.ProtectNo} {
		t.Run("request-leaked/protect="+protect.String(), func(t *testing.T) {
			in := fileInput(t, path)
			in.Design.Protect = protect
			_, err := reproduceZK(t, in, Options{plant: plant{zkLost: zkLostPlant{leakRequest: true}}})
			if err == nil || !strings.Contains(err.Error(), "the create whose request was dropped made node") {
				t.Fatalf("a dropped create that was applied went unnoticed: %v", err)
			}
			t.Logf("caught: %v", err)
		})
	}
}

// TestLostCreateRequestPlayable: the lost-create designs are played with
// lockcheck's own client, and refused with go-zookeeper's recipe (its
// Lock creates again at once, inside the call) and a user's client,
// saying why.
func TestLostCreateRequestPlayable(t *testing.T) {
	for _, name := range []string{
		"zookeeper/cad/none/plain,losses=1,lose=request,lose-at=acquire,timeout=3",
		"zookeeper/cad/none/plain,protect=no,losses=1,lose=request,lose-at=acquire,timeout=3",
	} {
		d, err := model.ParseDesign(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Playable(&d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := CheckClient(ClientReference, &d); err != nil {
			t.Errorf("%s with %s: %v", name, ClientReference, err)
		}
		if err := CheckClient(ClientUser, &d); err == nil || !strings.Contains(err.Error(), "a request lost on its way (lose=request) is played with lockcheck's own client only") {
			t.Errorf("%s with %s: want a refusal naming the client that plays it, got %v", name, ClientUser, err)
		}
		if d.Protect != model.ProtectYes {
			continue
		}
		err = CheckClient(ClientZkLock, &d)
		if err != nil {
			err = clientRefusal(&d, ClientZkLock, err)
		}
		if np, ok := IsNotPlayable(err); !ok || !strings.Contains(np.Because, "CreateProtectedEphemeralSequential") || !strings.HasSuffix(np.Because, "want lose=reply") || strings.Contains(np.Because, "\n") {
			t.Errorf("%s with %s: want a one-line NotPlayable naming go-zookeeper's retry, got %v", name, ClientZkLock, err)
		}
	}
}
