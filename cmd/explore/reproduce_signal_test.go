//go:build reality

package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"lockcheck/reality"
)

// TestSignalsStopRealRuns: Ctrl-C (SIGINT to the process group) and
// SIGTERM stop reproduce and libraries with a line naming the signal, exit
// 3 (not judged), their servers stopped and their folders removed.
func TestSignalsStopRealRuns(t *testing.T) {
	if _, err := reality.FindServer(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
		args []string
	}{
		{syscall.SIGINT, "SIGINT", []string{"reproduce", "-tick", "200ms", "demo2"}},
		{syscall.SIGTERM, "SIGTERM", []string{"reproduce", "-tick", "200ms", "-json", "demo2"}},
		{syscall.SIGTERM, "SIGTERM", []string{"libraries"}},
	} {
		tmp := t.TempDir()
		cmd, out, lines := startGroup(t, tmp, tc.args...)
		// the run has started once its server's folder is there
		deadline := time.Now().Add(30 * time.Second)
		for len(leftovers(t, tmp)) == 0 {
			require.True(t, time.Now().Before(deadline), "%v: no server started", tc.args)
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		code, errs := signalGroup(t, cmd, lines, tc.sig)
		require.Equal(t, exitIncomplete, code, "%v: %s", tc.args, errs)
		require.Contains(t, errs, "explore "+tc.args[0]+": stopped by "+tc.name, tc.args)
		require.NotContains(t, errs, "budget", tc.args)
		if tc.args[0] == "reproduce" && strings.Contains(strings.Join(tc.args, " "), "-json") {
			require.Contains(t, out.String(), `{"error":"stopped by SIGTERM`)
		}
		require.Empty(t, leftovers(t, tmp), "%v: left in the temp dir", tc.args)
	}
}
