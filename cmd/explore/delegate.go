//go:build !reality

package main

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// The verbs that play schedules on real servers (reproduce, libraries)
// link the Redis, etcd, ZooKeeper and PostgreSQL clients and the lock
// libraries (package reality). They are built only with the build tag
// "reality", so that the main job (check, fix, matrix, serve …) neither
// downloads nor compiles those modules: with Go's lazy module loading a
// build fetches only the modules that provide a package it imports
// (TestMainJobImports keeps it so). This build registers the two verbs
// as delegates: each runs the same command of an explore built with the
// tag, with the same arguments, standard streams and exit code.
const realityTag = "reality"

func init() {
	register("reproduce", "play a scenario or counterexample on a real Redis (etcd, ZooKeeper, PostgreSQL) and compare it with the model", delegateReality("reproduce"))
	register("libraries", "play the demos with every lock client (lockcheck, redsync, redislock, etcd-mutex, go-zookeeper) on real servers; print the table (-write docs/guide.md: update it there)", delegateReality("libraries"))
}

// delegateReality runs verb in an explore built with the reality tag
// (realityBinary says which). Without one it says how to get one, exit 3
// (not judged, as when no server can be started).
func delegateReality(verb string) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		bin, err := realityBinary(stderr)
		if err != nil {
			fmt.Fprintf(stderr, "explore %s: %s\n", verb, oneLine(err.Error()))
			if wantsJSON(args) {
				writeJSONError(stdout, oneLine(err.Error()))
			}
			return exitIncomplete
		}
		return runDelegate(bin, append([]string{verb}, args...), stdout, stderr)
	}
}

// realityBinary finds or builds an explore with the real-server verbs:
//  1. $LOCKCHECK_EXPLORE_REALITY, if set (a path);
//  2. explore-reality next to this executable (go build -tags reality -o
//     bin/explore-reality ./cmd/explore);
//  3. in the lockcheck source tree (the working directory or a parent has
//     its go.mod), `go build -tags reality` into the user's cache
//     directory, one binary per source tree: the first time downloads and
//     compiles the server clients, later runs find the build up to date.
func realityBinary(stderr io.Writer) (string, error) {
	if p := os.Getenv("LOCKCHECK_EXPLORE_REALITY"); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "explore-reality")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("this explore was built without the real-server verbs (their clients stay out of the main job's build), and %v: run it in the lockcheck source tree, or build them there: go build -tags %s -o bin/explore ./cmd/explore", err, realityTag)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the real-server verbs needs the go command: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "lockcheck")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("building the real-server verbs: %v", err)
	}
	// one binary per source tree: two clones (or worktrees) built from
	// different sources must not run each other's build
	sum := fnv.New64a()
	sum.Write([]byte(root))
	out := filepath.Join(dir, fmt.Sprintf("explore-reality-%016x", sum.Sum64()))
	if _, err := os.Stat(out); err != nil {
		fmt.Fprintf(stderr, "explore: building the real-server verbs once (go build -tags %s ./cmd/explore into %s; the server clients' modules are downloaded now) …\n", realityTag, dir)
	}
	build := exec.Command(gobin, "build", "-tags", realityTag, "-o", out, "./cmd/explore")
	build.Dir = root
	build.Stdout = stderr
	build.Stderr = stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build -tags %s ./cmd/explore in %s: %v", realityTag, root, err)
	}
	return out, nil
}

// moduleRoot is the nearest directory, from the working directory up,
// whose go.mod declares module lockcheck.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
					f.Close()
					if strings.Trim(fields[1], `"`) == "lockcheck" {
						return dir, nil
					}
					return "", fmt.Errorf("the working directory is in module %s, not lockcheck", clip(fields[1]))
				}
			}
			f.Close()
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("the working directory is not in the lockcheck source tree")
		}
		dir = up
	}
}

// runDelegate runs bin with args, the standard streams passed through (the
// terminal itself when they are this process's, so that progress lines
// are rewritten in place), and returns its exit code. The child runs in a
// process group of its own and this process passes each SIGINT and
// SIGTERM on, once: a terminal's Ctrl-C, which signals the foreground
// group, reaches it once, and a second Ctrl-C kills it as it would
// without the delegate.
func runDelegate(bin string, args []string, stdout, stderr io.Writer) int {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = unwrapWriter(stdout)
	cmd.Stderr = unwrapWriter(stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "explore %s: starting %s: %v\n", args[0], bin, err)
		return exitIncomplete
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s)
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case err == nil:
				return exitOK
			case errors.As(err, &ee) && ee.Exited():
				return ee.ExitCode()
			}
			fmt.Fprintf(stderr, "explore %s: %s: %v\n", args[0], bin, err)
			return exitIncomplete
		}
	}
}

// unwrapWriter is the process's own stdout or stderr behind run's writers,
// or w itself.
func unwrapWriter(w io.Writer) io.Writer {
	switch v := w.(type) {
	case *checkedWriter:
		if v.w == os.Stdout {
			return os.Stdout
		}
	case clipWriter:
		if v.w == os.Stderr {
			return os.Stderr
		}
	}
	return w
}
