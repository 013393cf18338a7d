package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveURL waits for explore serve's line naming its URL on stderr.
func serveURL(t *testing.T, lines <-chan string) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "stderr ended before the URL")
			if _, rest, ok := strings.Cut(l, "the explorer is at "); ok {
				url, _, _ := strings.Cut(rest, " ")
				return url
			}
		case <-deadline:
			t.Fatal("no URL on stderr")
		}
	}
}

// TestServeStopsOnSIGINT: explore serve listens on loopback, serves the
// page, and stops cleanly (exit 0) on SIGINT, also with a search in flight.
func TestServeStopsOnSIGINT(t *testing.T) {
	cmd, out, lines := startExplore(t, "serve", "-design", "redis/cad/rw/max-token,clock=free,horizon=41,clients=5")
	url := serveURL(t, lines)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "lockcheck explorer")

	// a long search (no-lost-update holds: every state), its first line read
	search := strings.Replace(url, "/explore/", "/search/", 1) + "?property=no-lost-update"
	resp, err = http.Get(search)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, first, `"kind":"progress"`)

	code, took := exitAfter(t, cmd, os.Interrupt)
	t.Logf("SIGINT: stopped in %v", took)
	require.Equal(t, exitOK, code)
	require.Less(t, took, 10*time.Second)
	require.Equal(t, url+"\n", out.String(), "stdout is the URL alone")
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	require.Contains(t, strings.Join(rest, "\n"), "explore serve: stopped")
}

// TestServeBadInput: one line, exit 2, before listening.
func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	notEnabled := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(notEnabled, []byte("design demo2\nA write\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "want -design NAME or -file FILE"},
		{[]string{"-design", "demo2", "-file", notEnabled}, "want -design NAME or -file FILE (one of them)"},
		{[]string{"-design", "nope"}, `design "nope": want 4 parts`},
		{[]string{"-file", notEnabled}, notEnabled + ": step 1 (A write) is not enabled at t=1"},
		{[]string{"-file", filepath.Join(dir, "missing.txt")}, "no such file"},
		{[]string{"-design", "demo2", "-addr", "0.0.0.0:8080"}, "a host that is not loopback"},
		{[]string{"-design", "demo2", "-addr", "example.com:8080"}, "add -public to mean it"},
		{[]string{"-design", "demo2", "-addr", "127.0.0.1"}, "want host:port"},
		{[]string{"-design", "demo2", "-addr", "127.0.0.1:99999"}, "want 0 (a free one) or 1 to 65535"},
		{[]string{"-design", "demo2", "extra"}, "unexpected argument"},
	} {
		code, out, errs := runCmd(append([]string{"serve"}, c.args...)...)
		require.Equal(t, exitUsage, code, c.args)
		require.Empty(t, out, c.args)
		require.Equal(t, 1, strings.Count(errs, "\n"), "%v: %s", c.args, errs)
		require.Contains(t, errs, c.want, c.args)
		require.True(t, strings.HasPrefix(errs, "explore serve: "), errs)
	}
}

// TestServeFile: -file opens on a counterexample at its violation, on a
// scenario at its end.
func TestServeFile(t *testing.T) {
	name, trace, at, err := serveFile(demo4File)
	require.NoError(t, err)
	require.Equal(t, "redis/del/none/plain,clients=2,pauses=0,slow=1", name)
	require.Equal(t, len(trace), at)
	name, trace, at, err = serveFile("../../model/scenarios/demo2.txt")
	require.NoError(t, err)
	require.Equal(t, "demo2", name)
	require.Len(t, trace, 49)
	require.Equal(t, 49, at)
}

// TestServeAddr: loopback hosts only, unless -public.
func TestServeAddr(t *testing.T) {
	for _, a := range []string{"127.0.0.1:0", "localhost:8080", "[::1]:0", "127.0.0.2:80"} {
		require.NoError(t, checkServeAddr(a, false), a)
	}
	for _, a := range []string{"0.0.0.0:0", ":8080", "10.0.0.1:80", "example.com:80"} {
		require.Error(t, checkServeAddr(a, false), a)
		require.NoError(t, checkServeAddr(a, true), a)
	}
}

// TestServeLoopbackHostOnly: without -public, a request naming another
// host (DNS rebinding) is refused.
func TestServeLoopbackHostOnly(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	h := loopbackOnly(ok)
	for host, want := range map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200, "localhost": 200,
		"evil.example:8080": 403, "10.0.0.1:8080": 403, "": 403} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, want, rec.Code, host)
		if want == 403 {
			require.Contains(t, rec.Body.String(), "the explorer answers loopback names only")
		}
	}
}
