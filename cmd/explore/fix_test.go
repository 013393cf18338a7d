package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFixDemo4(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "demo4", "-properties", "own-release")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "violated: own-release")
	require.Contains(t, out, "1. release del → cad (cost 1; a change to the lock)")
	require.NotContains(t, out, "lease-based", "own-release alone is no lease question")
	require.Contains(t, out, "   design: redis/cad/none/plain,pauses=0,slow=1")
	require.Contains(t, out, "   fixes:  own-release")
	require.Contains(t, out, "witnesses seen:")
	// the same answer twice, byte for byte but the timing line
	_, out2, _ := runCmd("fix", "-design", "demo4", "-properties", "own-release")
	cut := func(s string) string { return s[:strings.LastIndex(s, "searched ")] }
	require.Equal(t, cut(out), cut(out2))
}

// demo2: the first answer is the honest one. No lease-based lock stays
// exclusive against a pause longer than its lease; the storage must refuse
// the late write: the data-safe designs lead with storage-side protection,
// a longer TTL is checked against a pause grown with it and breaks again,
// and no vacuous "fix" exits 0. Before, the answer was "ttl 10 → 20" (a
// fix, vacuously) and exit 0.
func TestFixDemo2HonestAnswer(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "demo2", "-changes", "1")
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "verdict: loses updates: no-lost-update violated (data safety); exclusive, mutex violated (lock safety)\n")
	require.Contains(t, out, "violated: exclusive, mutex (lock safety), no-lost-update (data safety)\n")
	require.Contains(t, out, "No design within 1 change(s) keeps the lock exclusive against this fault budget")
	require.Contains(t, out, "no lease-based lock stays exclusive against a pause longer than its lease")
	require.Contains(t, out, "Only the storage can refuse the late write: for correctness protect the data")
	data := strings.Index(out, "data-safe designs: no-lost-update (data safety) holds")
	cas := strings.Index(out, "1. storage plain → cas (cost 3; storage-side protection)")
	leases := strings.Index(out, "longer or renewed leases, ranked last")
	require.True(t, data > 0 && cas > data && leases > cas, "storage-side protection first, leases last:\n%s", out)
	require.Contains(t, out, "  ttl 10 → 20 (faults 10 ticks longer): still violates exclusive, mutex, no-lost-update\n")
	require.Contains(t, out, "  ttl 10 → 30 (faults 20 ticks longer): still violates exclusive, mutex, no-lost-update\n")
	require.NotContains(t, out[:leases], "ttl 10 →")
	require.NotContains(t, out, "vacuous: ")
}

// A design that already keeps its data safe but not its lock (Redlock
// with an external fencing counter) is told so: lock-unsafe, data-safe.
func TestFixLockUnsafeDataSafe(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "redlock/cad/rw/max-token,counter=external,clients=2,nodes=3", "-changes", "1")
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "verdict: lock-unsafe, data-safe: no-lost-update holds, put to the test (data safety); exclusive, mutex violated (lock safety)\n")
	require.Contains(t, out, "The data is safe already (no-lost-update holds (data safety)): this design is lock-unsafe, data-safe")
	require.NotContains(t, out, "fixes: designs on which")
}

// A design that holds only vacuously has nothing fixed and nothing
// tested: exit 4, as check says, not "already safe" and 0.
func TestFixVacuouslySafe(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "etcd/cad/none/plain,renew=3,pauses=0,partitions=1")
	require.Equal(t, exitVacuous, code, errs)
	require.Contains(t, out, "nothing to fix, and nothing tested: exclusive, mutex, own-release, no-lost-update, progress hold only vacuously")
	require.NotContains(t, out, "already safe")
}

// Fixes put to the test only, storage-side first; the vacuous ones are
// listed apart and never counted.
func TestFixVacuousApart(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "demo3", "-properties", "no-lost-update", "-changes", "1")
	require.Equal(t, exitOK, code, errs)
	first := strings.Index(out, "1. fence write → rw (cost 2; storage-side protection)")
	require.True(t, first > 0, out)
	require.NotContains(t, out[:strings.Index(out, "longer or renewed leases")], "ttl 10 →")

	code, out, errs = runCmd("fix", "-design", "demo3", "-properties", "no-lost-update", "-json", "-changes", "1")
	require.Equal(t, exitOK, code, errs)
	var j fixJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	require.NotEmpty(t, j.Fixes)
	for _, f := range j.Fixes {
		require.Empty(t, f.Vacuous, f.Design)
	}
}

func TestFixSafe(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "demo6", "-properties", "no-lost-update")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "already safe: no-lost-update hold within the bounds (and every job can finish: all-done seen)")
	// the no-fault baseline holds, but nothing tested it
	code, out, errs = runCmd("fix", "-design", "demo1")
	require.Equal(t, exitVacuous, code, errs)
	require.Contains(t, out, "nothing to fix, and nothing tested")
}

func TestFixJSON(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "demo3", "-properties", "no-lost-update", "-json", "-show", "2")
	require.Equal(t, exitOK, code, errs)
	var j fixJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	require.False(t, j.Safe)
	require.Equal(t, []string{"no-lost-update"}, j.Violated)
	require.Len(t, j.Fixes, 2)
	require.Equal(t, "redis/cad/rw/max-token,token=33", j.Fixes[0].Design)
	require.Equal(t, "fence", j.Fixes[0].Changes[0].Key)
	require.Equal(t, j.Fixes[0].Design, j.Nearest["no-lost-update"])
}

func TestFixBadInput(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"-design nope/cad/none/plain", "unknown lock"},
		{"-properties all-done", "sometimes property"},
		{"-properties nope", "unknown property"},
		{"-changes 3", "-changes 3: want 1 or 2"},
		{"-show 0", "-show 0: want 1 to 1000"},
		{"extra", "unexpected argument"},
		{"-bogus", "flag provided but not defined"},
	} {
		code, out, errs := runCmd(append([]string{"fix"}, strings.Fields(c.args)...)...)
		require.Equal(t, exitUsage, code, c.args)
		require.Empty(t, out, c.args)
		require.Contains(t, errs, c.want, c.args)
		require.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
	}
	code, out, _ := runCmd("fix", "-h")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "usage: explore fix")
}

// FuzzFixArgs: the fix command's flag parsing never panics, and an error
// is one line.
func FuzzFixArgs(f *testing.F) {
	for _, s := range []string{"-design demo2", "-properties exclusive,progress -changes 1", "-design redis/cad/none/plain,ttl=x", "-show 5 -json", "-changes -1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		_, _, _, err := parseFixArgs(strings.Fields(line))
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("two-line error: %q", err)
		}
	})
}

// The watchdog design: a sidecar renewer keeps the lock through the
// worker's pause, but it is judged against the fault that defeats it (a
// worker that crashes while its sidecar renews for ever), so it is no
// fix; the first answer is the honest paragraph and the data-safe designs.
func TestFixWatchdogSidecarIsJudged(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "redis/cad/none/plain,renew=3", "-changes", "1")
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "No design within 1 change(s) keeps the lock exclusive")
	require.NotContains(t, out, "\nfixes:")
	require.Contains(t, out, "1. storage plain → cas")
	require.Contains(t, out, "watchdog worker → sidecar (and a worker crash: its sidecar renews a dead worker's lock): still violates progress")
}

// advisory locks behind PgBouncer in transaction mode break mutual
// exclusion with no fault at all: a client routed to the backend that
// holds the lock re-enters it. fix must not blame an outlived
// idle-session timeout there; it names the grant from the counterexample.
func TestFixFaultFreeGrantIsNotALeaseStory(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "advisory/cad/none/plain,pool=tx", "-changes", "1")
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "The reason: its counterexample needs no fault, as the lock service itself grants the lock while an earlier grant is still believed in (t=1 C: SELECT pg_try_advisory_lock(42) on backend 1 → true: that backend already holds the lock (A's grant)")
	require.NotContains(t, out, "The reason: the fault of its counterexample (none)")
	// with its own session per client, the lock breaks only through a fault
	_, out, _ = runCmd("fix", "-design", "advisory/cad/none/plain", "-changes", "1")
	require.Contains(t, out, "The reason: the fault of its counterexample (pause) lets a holder outlive its idle-session timeout")
}
