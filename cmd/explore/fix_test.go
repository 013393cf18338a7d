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
