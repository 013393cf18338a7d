//go:build reality

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/reality"
)

// TestReproduceNotPlayable: a sound file that real runs do not play is
// "cannot be played for real, because …", exit 3 (not judged), for the
// design itself and for a library client.
func TestReproduceNotPlayable(t *testing.T) {
	dir := t.TempDir()
	part := dir + "/part.txt"
	require.NoError(t, os.WriteFile(part, []byte("design redis/cad/none/plain,partition=storage,partitions=1\nA acquire\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{part}, "part.txt: design redis/cad/none/plain,partition=storage,partitions=1 cannot be played for real, because partitions"},
		{[]string{"-client", "redislock", "demo4"}, "design redis/del/none/plain,pauses=0,slow=1 with client redislock cannot be played for real, because client redislock releases with a check-and-delete"},
	} {
		for _, asJSON := range []bool{false, true} {
			args := append([]string{"reproduce"}, c.args...)
			if asJSON {
				args = append(args, "-json")
			}
			code, out, errs := runCmd(args...)
			require.Equal(t, exitIncomplete, code, "%v: %s", args, errs)
			require.Equal(t, 1, strings.Count(errs, "\n"), errs)
			require.Contains(t, errs, c.want, args)
			if asJSON {
				require.Contains(t, out, `{"error":`)
			} else {
				require.Empty(t, out)
			}
		}
	}
}

func TestReproduceBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.txt"
	require.NoError(t, os.WriteFile(bad, []byte("design demo2\nA fly\n"), 0o644))
	demo2, err := os.ReadFile("../../model/scenarios/demo2.txt")
	require.NoError(t, err)
	cut := dir + "/demo2-cut.txt" // demo2 cut after its pause: no lost update any more
	require.NoError(t, os.WriteFile(cut, demo2[:strings.Index(string(demo2), "A pause 14")+len("A pause 14\n")], 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce"}, "want one scenario or counterexample file"},
		{[]string{"reproduce", dir + "/missing.txt"}, "no such file"},
		{[]string{"reproduce", bad}, `unknown verb "fly"`},
		{[]string{"reproduce", cut}, "demo2-cut.txt: the model's replay does not give what the file expects (line 9: expected exclusive violated; "},
		{[]string{"reproduce", "-tick", "5ms", "demo2"}, "want whole milliseconds from 10ms to 10s"},
		{[]string{"reproduce", "demo2", "-tick", "1500us"}, "want whole milliseconds"},
		{[]string{"reproduce", "-addr", "10.0.0.1:6379", "demo2"}, "want a loopback address"},
		{[]string{"reproduce", "-lock-db", "3", "-store-db", "3", "demo2"}, "two different databases"},
		{[]string{"reproduce", "demo2", "demo3"}, "one FILE only"},
		{[]string{"reproduce", "demo9"}, "not a demo"},
		{[]string{"reproduce", "-retries", "9", "demo2"}, "want 0 to 5"},
		{[]string{"reproduce", "-tick", "100ms", "../../reality/testdata/etcd-pause.txt"}, "etcd designs want a multiple of 2s"},
		{[]string{"reproduce", "-etcd", "http://10.1.1.1:2379", "../../reality/testdata/etcd-pause.txt"}, "want a loopback client URL"},
	} {
		code, out, errs := runCmd(c.args...)
		require.Equal(t, exitUsage, code, "%v: %s", c.args, errs)
		require.Empty(t, out, "%v: nothing half-written on stdout", c.args)
		code, out, _ = runCmd(append([]string{"reproduce", "-json"}, c.args[1:]...)...)
		require.Equal(t, exitUsage, code, c.args)
		require.Contains(t, out, `{"error":`, "%v -json: the error object", c.args)
		require.Contains(t, errs, c.want, "%v", c.args)
		require.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "\n")+1, "%v: one line: %q", c.args, errs)
	}
}

func TestReproduceExit(t *testing.T) {
	require.Equal(t, exitOK, reproduceExit(&reality.Comparison{Agree: true}))
	require.Equal(t, exitViolated, reproduceExit(&reality.Comparison{Agree: false, Differences: []string{"x"}}))
	require.Equal(t, exitIncomplete, reproduceExit(&reality.Comparison{Late: true}))
}

// needRedis skips when redis-server is not installed, except in CI.
func needRedis(t *testing.T) {
	t.Helper()
	if _, err := reality.FindServer(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
}

// runReal runs reproduce with a 50ms tick; reproduce itself replays a
// void run with a doubled tick, up to 1.6s (a CI run at load 19 saw a
// lock node's restart take 163ms, void at a 200ms tick).
func runReal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out, errs := runCmd(append([]string{"reproduce", "-tick", "50ms", "-retries", "5"}, args...)...)
	if errs != "" {
		t.Log(errs)
	}
	if code == exitIncomplete && strings.Contains(out, "verdict: void") {
		msg := "six void runs in a row: the machine is too loaded to keep the schedule's timing"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("skipped: " + msg)
	}
	return code, out, errs
}

func TestReproduceDemoOnRealRedis(t *testing.T) {
	needRedis(t)
	code, out, errs := runReal(t, "../../model/scenarios/demo2.txt")
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	require.Contains(t, out, "verdict: reality agrees with the model: lost update on the real servers too: counter 2 after 3 accepted writes")
	require.Regexp(t, `✗ acted without the key +A step 46 \(t=15\) +A step 46 \(t=15\)`, out)
}

func TestReproduceCounterexampleJSON(t *testing.T) {
	needRedis(t)
	// flags after FILE, a server of our own given with -addr and other databases
	srv, err := reality.StartServer(context.Background(), mustServer(t))
	require.NoError(t, err)
	defer srv.Stop()
	code, out, errs := runReal(t, "../../counterexamples/redis-del-none-plain--own-release.txt", "-json", "-addr", srv.Addr(), "-lock-db", "4", "-store-db", "7")
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	var c reality.Comparison
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	require.True(t, c.Agree)
	require.NotEmpty(t, c.Real.RemovedOther, "the real DEL removed another's key")
	require.Equal(t, c.Model.RemovedOther, c.Real.RemovedOther)
}

// TestReproduceTwoStepFence: fence-check=two-step is judged for real (it
// was "not judged", exit 3): the token check and the unchecked apply are
// two scripts, and the real storage loses the update as the model does.
func TestReproduceTwoStepFence(t *testing.T) {
	needRedis(t)
	code, out, errs := runReal(t, "../../counterexamples/redis-cad-rw-max-token_fence-check-two-step--no-lost-update.txt")
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	require.Contains(t, out, "verdict: reality agrees with the model: lost update on the real servers too: counter 1 after 2 accepted writes")
	require.Regexp(t, `A apply +apply write 1 \(token 1\), unchecked → accepted ✗ +apply write 1 \(token 1\), unchecked → accepted ✗`, out)
}

// TestReproduceStorageFaults: a storage failover and a stale read are
// judged for real (they were "not judged", exit 3): the storage's replica,
// its link held, is promoted without A's accepted write, which is lost on
// the real storage too, and serves B's read without it;
// with storage-loses=fence only the fencing state, kept apart from the
// counter's row, is lost: A's late write with token 1 is accepted.
func TestReproduceStorageFaults(t *testing.T) {
	needRedis(t)
	code, out, errs := runReal(t, "../../counterexamples/redis-cad-rw-max-token_clients-2_storage-failovers-1--no-lost-update.txt")
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	require.Contains(t, out, "verdict: reality agrees with the model: lost update on the real servers too: counter 0 after 1 accepted writes")
	require.Regexp(t, `storage-failover +storage primary killed, replica promoted: counter 0, highest token 0 +storage primary killed, replica promoted: counter 0, highest token 0`, out)
	code, out, errs = runReal(t, "../../counterexamples/redis-cad-rw-max-token_storage-loses-fence_pause-at-write_ttl-3_clients-2_horizon-16_max-pause-5_storage-failovers-1--no-lost-update.txt")
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	require.Contains(t, out, "verdict: reality agrees with the model: lost update on the real servers too: counter 1 after 2 accepted writes")
	require.Regexp(t, `storage-failover +storage primary killed, replica promoted: counter 0, highest token 0 +storage primary killed, replica promoted: counter 0, highest token 0`, out)
	// a stale read: B's read served by the replica, whose link held A's write
	code, out, errs = runReal(t, "../../counterexamples/redis-cad-rw-max-token_pauses-0_stale-reads-1--no-lost-update.txt")
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	require.Regexp(t, `B stale-read +read \(token 2\) from the storage's replica → 0 +read \(token 2\) from the storage's replica → 0`, out)
}

func mustServer(t *testing.T) string {
	bin, err := reality.FindServer()
	require.NoError(t, err)
	return bin
}

// TestReproduceNodeCrash: reproduce starts a lock node of its own and the
// schedule's node-crash kills it; the restarted node has lost A's key.
func TestReproduceNodeCrash(t *testing.T) {
	needRedis(t)
	files, err := filepath.Glob("../../counterexamples/redis-*node-crashes-1--exclusive.txt")
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skip("no node-crash counterexample in the catalogue")
	}
	code, out, errs := runReal(t, files[0])
	require.Equal(t, exitOK, code, "%s\n%s", out, errs)
	require.Contains(t, out, "lock node: redis-server")
	require.Regexp(t, `node-crash 1 +lock node killed; key: nobody +lock node killed; key: nobody`, out)
}
