package reality

import (
	"os"
	"testing"

	"lockcheck/model"
)

// redlockNodes starts n redis-servers of the test's own (with or without
// an append-only file), stopped when the test ends.
func redlockNodes(t *testing.T, n int, persist bool) []*Server {
	t.Helper()
	needServer(t) // skips or fails as the other real-server tests do
	var nodes []*Server
	for k := 0; k < n; k++ {
		nodes = append(nodes, lockServer(t, persist))
	}
	return nodes
}

func scenarioInput(t *testing.T, name, text string) *Input {
	t.Helper()
	in, err := Load(name, text)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func fileInput(t *testing.T, path string) *Input {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return scenarioInput(t, path, string(text))
}

// TestRedlockOnFiveRedisServers plays Redlock on five real redis-servers:
// a pause after the vote (the lock lost for real, with lockcheck's own
// client and with redsync), a node restarted without its keys (two
// holders, a lost update) and the same crash with an append-only file
// (no second holder).
func TestRedlockOnFiveRedisServers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     func(t *testing.T) *Input
		client string
		lost   bool
	}{
		{"pause", func(t *testing.T) *Input { return fileInput(t, "../model/scenarios/redlock-pause.txt") }, ClientReference, true},
		{"pause-redsync", func(t *testing.T) *Input { return fileInput(t, "../model/scenarios/redlock-pause.txt") }, ClientRedsync, true},
		{"restart-no-aof", func(t *testing.T) *Input { return fileInput(t, "../model/scenarios/redlock-restart.txt") }, ClientReference, true},
		{"restart-aof", func(t *testing.T) *Input { return fileInput(t, "testdata/redlock-restart-aof.txt") }, ClientReference, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, _, err := ForClient(tc.in(t), tc.client)
			if err != nil {
				t.Fatal(err)
			}
			d := &in.Design
			// 100ms ticks: a tick's window holds a look at five nodes and a restart
			c := reproduce(t, in, Options{Client: tc.client, Tick: 2 * testTick, Nodes: redlockNodes(t, d.Nodes, d.Persist == 1)})
			if !c.Agree && c.Known == "" {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.LostUpdate != tc.lost || c.Model.LostUpdate != tc.lost {
				t.Fatalf("want lost update %v in both worlds:\n%s", tc.lost, c.Text())
			}
			if d.Lock != model.LockRedlock {
				t.Fatalf("design %s", d.Name())
			}
		})
	}
}

// TestReplicaFailover plays the replica stories on a real primary and
// replica (real replication through a held link, a real failover): the
// promoted replica hands the lock and token 1 out again when nothing was
// replicated, and keeps A's lock when a replicate step came first.
func TestReplicaFailover(t *testing.T) {
	for _, tc := range []struct {
		in   func(t *testing.T) *Input
		lost bool
	}{
		{func(t *testing.T) *Input { return fileInput(t, "../model/scenarios/replica-failover.txt") }, true},
		{func(t *testing.T) *Input { return fileInput(t, "testdata/replica-replicated.txt") }, false},
	} {
		in := tc.in(t)
		t.Run(in.Source, func(t *testing.T) {
			c := reproduce(t, in, Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.LostUpdate != tc.lost {
				t.Fatalf("want lost update %v:\n%s", tc.lost, c.Text())
			}
		})
	}
}

// TestZooKeeperSession plays the ZooKeeper stories on a real ZooKeeper
// (Debian's package): A's session expires during its pause and its
// ephemeral node vanishes; without fencing the update is lost, with the
// node's sequence number as token A's late write is rejected.
func TestZooKeeperSession(t *testing.T) {
	for _, tc := range []struct {
		file string
		lost bool
	}{
		{"testdata/zookeeper-pause.txt", true},
		{"../model/scenarios/zookeeper-session.txt", false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := reproduce(t, fileInput(t, tc.file), Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.LostUpdate != tc.lost || len(c.Real.Expired) == 0 {
				t.Fatalf("want the session to expire and lost update %v:\n%s", tc.lost, c.Text())
			}
		})
	}
}

// TestDatabaseRowLock plays the row-lock stories on a real PostgreSQL
// (Debian's package, a cluster of the test's own): the paused client's idle
// session is killed by idle_in_transaction_session_timeout, which frees
// the row; with the work inside the transaction A's late UPDATE fails on
// the dead session and nothing of it lands; outside, its write lands and
// the update is lost.
func TestDatabaseRowLock(t *testing.T) {
	for _, tc := range []struct {
		file string
		lost bool
	}{
		{"../model/scenarios/db-inside.txt", false},
		{"../model/scenarios/db-outside.txt", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := reproduce(t, fileInput(t, tc.file), Options{})
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
			if c.Real.LostUpdate != tc.lost || len(c.Real.Expired) == 0 {
				t.Fatalf("want the session killed and lost update %v:\n%s", tc.lost, c.Text())
			}
		})
	}
}

// TestIncrOnDownNode plays INCR lock:fence against a Redis node that is
// down (testdata/redis-incr-node-down.txt): the model's client gets a
// refusal and tries again at the next tick, and so must the real one (it
// once skipped the step, "INCR failed", a difference on every such
// schedule). Both clients retry until the node is back, and the run
// agrees with the model step by step.
func TestIncrOnDownNode(t *testing.T) {
	c := reproduce(t, fileInput(t, "testdata/redis-incr-node-down.txt"), Options{})
	if !c.Agree {
		t.Fatalf("reality differs from the model:\n%s", c.Text())
	}
	refused := 0
	for _, ob := range c.play.Steps {
		if ob.Took == model.ActIncr && ob.Result == model.ResRefused && !ob.Skipped {
			refused++
		}
	}
	if refused != 6 {
		t.Fatalf("want 6 refused INCRs on the down node (A and B at t=1, 2, 3), got %d:\n%s", refused, c.Text())
	}
}
