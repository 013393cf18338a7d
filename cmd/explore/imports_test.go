//go:build !reality

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// mainJobModules are the only modules outside the standard library that
// the main job (cmd/explore without the reality tag, and the packages a
// user of the model imports) may link: lockcheck itself and porcupine
// (the linearizability checks). A real-server client (go-redis, etcd,
// pgx, go-zookeeper) or a lock library (redsync, redislock) among them
// would make a fresh machine's first `go run ./cmd/explore check`
// download and compile it (bench/first-run.sh measures that run).
var mainJobModules = map[string]bool{
	"lockcheck":                         true,
	"github.com/anishathalye/porcupine": true,
}

// TestMainJobImports: the import graph of the main job holds no module
// but mainJobModules, and reality's verbs are reached only through the
// tagged build.
func TestMainJobImports(t *testing.T) {
	gobin, err := exec.LookPath("go")
	require.NoError(t, err)
	pkgs := []string{"lockcheck/cmd/explore", "lockcheck/model", "lockcheck/explore", "lockcheck/counterexamples", "lockcheck/linearizability", "lockcheck/webview"}
	out, err := exec.Command(gobin, append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{if .Module}}{{.Module.Path}}{{end}}"}, pkgs...)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	bad := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && !mainJobModules[f[1]] {
			bad[f[1]] = append(bad[f[1]], f[0])
		}
		if len(f) >= 1 && (f[0] == "lockcheck/reality" || f[0] == "lockcheck/locktest") {
			bad["lockcheck"] = append(bad["lockcheck"], f[0])
		}
	}
	var msgs []string
	for m, ps := range bad {
		msgs = append(msgs, m+" (for "+strings.Join(ps, ", ")+")")
	}
	sort.Strings(msgs)
	require.Empty(t, msgs, "the main job imports what it must not")

	// and the tagged build does reach reality: the delegate has something to run
	out, err = exec.Command(gobin, "list", "-deps", "-tags", realityTag, "lockcheck/cmd/explore").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, strings.Fields(string(out)), "lockcheck/reality")
}

// TestRealityVerbs runs this package's tests that need the reality tag
// (the files with //go:build reality: reproduce, libraries, their signal
// stops), so that `go test ./...` runs them too: one `go test -tags
// reality` of this package, limited to those tests.
func TestRealityVerbs(t *testing.T) {
	var names []string
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	testFunc := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	for _, name := range files {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		if !bytes.HasPrefix(src, []byte("//go:build "+realityTag+"\n")) {
			continue
		}
		for _, m := range testFunc.FindAllSubmatch(src, -1) {
			names = append(names, string(m[1]))
		}
	}
	require.NotEmpty(t, names, "no test needs the reality tag: the tagged files moved?")
	sort.Strings(names)
	args := []string{"test", "-tags", realityTag, "-count=1", "-run", "^(" + strings.Join(names, "|") + ")$"}
	if testing.Short() {
		args = append(args, "-short")
	}
	if testing.Verbose() {
		args = append(args, "-v")
	}
	gobin, err := exec.LookPath("go")
	require.NoError(t, err)
	cmd := exec.Command(gobin, append(args, ".")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("go %s .: %s", strings.Join(args, " "), strings.TrimSpace(lastLine(out.String())))
	require.NoError(t, err, "%s", out.String())
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestRealityDelegates: without the tag, explore reproduce runs the
// reproduce of a tagged build (built on demand in the source tree) with
// the same arguments, streams and exit code; with no tagged build to run
// or make, it says how to get one, exit 3.
func TestRealityDelegates(t *testing.T) {
	// bad input: the tagged reproduce's own one-line refusal, exit 2
	code, out, errs := runCmd("reproduce", "-retries", "9", "demo2")
	require.Equal(t, exitUsage, code, errs)
	require.Empty(t, out)
	require.Contains(t, errs, "explore reproduce: -retries 9: want 0 to 5")

	// -json: the error as the tagged reproduce writes it, on stdout
	code, out, errs = runCmd("reproduce", "-json", "../../model/scenarios/demo1.txt", "-client", "nope")
	require.Equal(t, exitUsage, code, errs)
	require.Contains(t, out, `{"error":`)

	// outside the source tree and with no explore-reality beside the binary
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer os.Chdir(wd)
	code, out, errs = runCmd("reproduce", "demo2")
	require.Equal(t, exitIncomplete, code, errs)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errs, "\n"), errs)
	require.Contains(t, errs, "explore reproduce: this explore was built without the real-server verbs")
	require.Contains(t, errs, "go build -tags reality -o bin/explore ./cmd/explore")
}
