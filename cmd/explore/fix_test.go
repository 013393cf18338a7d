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
	require.Contains(t, out, "1. release del → cad (cost 1)")
	require.Contains(t, out, "   design: redis/cad/none/plain,pauses=0,slow=1")
	require.Contains(t, out, "   fixes:  own-release")
	require.Contains(t, out, "witnesses seen:")
	// the same answer twice, byte for byte but the timing line
	_, out2, _ := runCmd("fix", "-design", "demo4", "-properties", "own-release")
	cut := func(s string) string { return s[:strings.LastIndex(s, "searched ")] }
	require.Equal(t, cut(out), cut(out2))
}

// Fixes that hold only vacuously (a longer TTL) are listed last and say
// so, in the text and in -json.
func TestFixVacuousLast(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "demo3", "-properties", "no-lost-update")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "the 4 on which a fixed property holds only vacuously (no fault of the budget puts it to the test) come last:")
	cas := strings.Index(out, ". storage max-token → cas (cost 3)")
	ttl := strings.Index(out, ". ttl 10 → 20 (cost 2)")
	require.True(t, cas > 0 && ttl > cas, "the real fix first:\n%s", out)
	require.Contains(t, out[ttl:], "   vacuous: no-lost-update holds here only vacuously: no lock expired or was lost while held;")
	require.NotContains(t, out[:ttl], "vacuous:")

	code, out, errs = runCmd("fix", "-design", "demo3", "-properties", "no-lost-update", "-json")
	require.Equal(t, exitOK, code, errs)
	var j fixJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	last := -1
	for i, f := range j.Fixes {
		if len(f.Vacuous) == 0 {
			require.Equal(t, last+1, i, "a fix put to the test after a vacuous one: %s", f.Design)
			last = i
			continue
		}
		require.Equal(t, []string{"no-lost-update"}, f.Vacuous, f.Design)
		for _, r := range f.Results {
			if r.Property == "no-lost-update" {
				require.True(t, r.Vacuous, f.Design)
				require.Equal(t, "no lock expired or was lost while held", r.Vacuity)
			}
		}
	}
	require.True(t, last >= 0 && last < len(j.Fixes)-1, "both kinds of fix: %s", out)
}

func TestFixSafe(t *testing.T) {
	code, out, errs := runCmd("fix", "-design", "demo1")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "already safe: exclusive, mutex, own-release, no-lost-update, progress hold within the bounds (and every job can finish: all-done seen)")
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
