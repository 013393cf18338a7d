package locktest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutsideModule builds a module of its own outside this repository
// (in a temporary directory, lockcheck required through a replace
// directive), with the README's adapter and test copied in, and runs its
// go test: what a user who copies the section does.
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds and runs a module of its own (about a minute)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	// the example's adapter and test, as the user's package
	test := strings.Replace(string(src), "package locktest_test", "package mylock", 1)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := "module example.com/mylock\n\ngo 1.26.0\n\nrequire lockcheck v0.0.0\n\nreplace lockcheck => " + root + "\n"
	for name, text := range map[string]string{"go.mod": mod, "go.sum": string(sum), "mylock_test.go": test} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// offline: every module comes from this repository's module cache
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	// no go mod tidy: it also resolves the packages that the tests of
	// lockcheck's dependencies import (ginkgo, for go-redis), which a
	// fresh module cache does not hold; -mod=mod adds what the build needs
	out := run("test", "-count=1", "-v", "-run", "^TestMyLock$", ".")
	if !strings.Contains(out, "--- PASS: TestMyLock") {
		t.Fatalf("the outside module's TestMyLock did not pass:\n%s", out)
	}
	t.Logf("outside module: %s", lastLines(out, 3))
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, " | ")
}
