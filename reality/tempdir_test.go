package reality

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// childServer is the test binary run as a child by
// TestKilledRunsLeaveNothing: it starts a server of the kind asked for,
// prints "started", and waits to be killed.
func childServer(kind string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var err error
	switch kind {
	case "redis":
		var bin string
		if bin, err = FindServer(); err == nil {
			_, err = StartServer(ctx, bin)
		}
	case "zk":
		_, err = StartZooKeeper(ctx)
	case "pg":
		_, err = StartPostgres(ctx)
	case "etcd":
		_, err = StartEtcd(ctx)
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("started")
	time.Sleep(10 * time.Minute)
	return 0
}

func folders(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// startChild runs the test binary as a child that starts a server with
// TMPDIR=tmp, and waits until it has.
func startChild(t *testing.T, tmp, kind string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKCHECK_REALITY_CHILD="+kind, "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "started\n", line, kind)
	return cmd
}

// TestKilledRunsLeaveNothing: a run killed with SIGKILL (no Stop, no
// deferred call) leaves its server's folder in the temporary directory;
// the next server start of any run (here the next child's) removes it, and
// keeps the folders of live runs and a user's folders named alike.
func TestKilledRunsLeaveNothing(t *testing.T) {
	kinds := []string{"redis", "etcd"}
	if _, err := FindServer(); err != nil {
		needServer(t) // fails in CI, skips elsewhere
	}
	if _, err := FindZooKeeper(); err == nil || os.Getenv("CI") != "" {
		kinds = append(kinds, "zk")
	}
	if _, err := FindPostgres(); err == nil || os.Getenv("CI") != "" {
		kinds = append(kinds, "pg")
	}
	// not t.TempDir: its parent is 0700, and postgres runs as its own user
	tmp, err := os.MkdirTemp("", "lockcheck-test-tmp-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	require.NoError(t, os.Chmod(tmp, 0o755))
	user := []string{"lockcheck-redis-999999999-1", "lockcheck-zk-999999999-1-0123456789abcdef", "lockcheck-redis-keep"}
	for _, n := range user {
		require.NoError(t, os.Mkdir(filepath.Join(tmp, n), 0o755))
	}
	runs := func() []string { // the folders that are not the user's
		var out []string
		for _, n := range folders(t, tmp) {
			if !slices.Contains(user, n) {
				out = append(out, n)
			}
		}
		return out
	}
	var killed []string
	for _, kind := range append(kinds, "redis") {
		cmd := startChild(t, tmp, kind)
		now := runs()
		require.Len(t, now, 1, "%s: its own folder only; the killed run's before it is swept: %v", kind, now)
		require.True(t, strings.HasPrefix(now[0], "lockcheck-"+kind+"-"), now[0])
		require.Equal(t, 0, SweepStaleDirs(tmp), "%s: a live run's folder stays", kind)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		require.Equal(t, now, runs(), "%s: the killed run leaves its folder", kind)
		killed = append(killed, now[0])
	}
	require.Equal(t, 1, SweepStaleDirs(tmp), "the last killed run's folder")
	require.ElementsMatch(t, user, folders(t, tmp), "a user's folders named alike stay")
	t.Logf("killed runs' folders, each swept: %v", killed)
}
