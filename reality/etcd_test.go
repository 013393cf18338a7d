package reality

import (
	"os"
	"testing"
)

func etcdInput(t *testing.T, file string) *Input {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in, err := Load("reality/"+file, string(text))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestEtcdLeaseLock plays Demo 2's pause on an etcd lease lock (embedded
// etcd, the counter in Redis), without and with the key's revision as
// fencing token: the model and reality must agree; without fencing the
// update is lost for real, with it A's late write is rejected.
func TestEtcdLeaseLock(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: the etcd runs take about 25s (2s ticks)")
	}
	// mostly sleep: runs alongside the other etcd tests, on databases 14
	// and 15, which it shares with TestEtcdHeldAcquireReply
	t.Parallel()
	etcdDBs.Lock()
	defer etcdDBs.Unlock()
	for _, c := range []struct {
		file  string
		fence bool
	}{{"testdata/etcd-pause.txt", false}, {"testdata/etcd-pause-fenced.txt", true}} {
		t.Run(c.file, func(t *testing.T) {
			cmp := reproduce(t, etcdInput(t, c.file), Options{LockDB: 14, StoreDB: 15})
			if !cmp.Agree {
				t.Fatalf("reality differs from the model:\n%s", cmp.Text())
			}
			r := cmp.Real
			if !c.fence && (!r.LostUpdate || len(r.Unsafe) == 0) {
				t.Fatalf("want a lost update with ✗ on real etcd:\n%s", cmp.Text())
			}
			if c.fence && (r.LostUpdate || r.Rejected != 1) {
				t.Fatalf("want A's late write rejected by its older revision:\n%s", cmp.Text())
			}
			t.Logf("%s: %s (latest reply %.1fms into its tick)", c.file, cmp.Verdict(), cmp.LatestMS)
		})
	}
}
