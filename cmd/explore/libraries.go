//go:build reality

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"lockcheck/counterexamples"
	"lockcheck/reality"
)

func init() {
	register("libraries", "play the demos with every lock client (lockcheck, redsync, redislock, etcd-mutex, go-zookeeper) on real servers; print the table (-write docs/guide.md: update it there)", runLibraries)
}

// runLibraries exits 0 when every row agrees with the model or shows its
// documented difference, 1 when a row differs otherwise, 2 on bad input,
// 3 when the runs could not be made or a signal (SIGINT, SIGTERM) stopped
// them.
func runLibraries(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("libraries", stderr)
	write := fs.String("write", "", "put the table into this README between its markers instead of printing it")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "explore libraries: unexpected argument %q (flags: -write README.md)\n", clip(fs.Arg(0)))
		return exitUsage
	}
	var readme string
	if *write != "" {
		data, err := readLimited(*write, 4<<20, "a README with the table's markers")
		if err == nil {
			readme = string(data)
			_, err = reality.TableSection(readme)
		}
		if err != nil {
			fmt.Fprintf(stderr, "explore libraries: -write %s: %v\n", clip(*write), err)
			return exitUsage
		}
	}
	bin, err := reality.FindServer()
	if err != nil {
		fmt.Fprintln(stderr, "explore libraries:", err)
		return exitIncomplete
	}
	ctx, signalled, stopSignals := interruptible()
	defer stopSignals()
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	srv, err := reality.StartServer(sctx, bin)
	cancel()
	if err != nil {
		if sig := signalled(); sig != "" {
			return failInterrupted(stdout, stderr, "libraries", false, sig, nil, "no table")
		}
		fmt.Fprintln(stderr, "explore libraries:", err)
		return exitIncomplete
	}
	defer srv.Stop()
	rows, err := reality.RunLibraryTable(ctx, reality.TableEnv{
		Redis:  srv.Addr(),
		Server: fmt.Sprintf("redis-server %s on %s", srv.Version(), srv.Addr()),
		StartEtcd: func(ctx context.Context) (string, func(), error) {
			ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			e, err := reality.StartEtcd(ectx)
			if err != nil {
				return "", nil, err
			}
			return e.Endpoint(), e.Stop, nil
		},
		Progress: stderr,
	})
	if sig := signalled(); sig != "" {
		// a row cut by the signal is no verdict: neither the table nor the README
		return failInterrupted(stdout, stderr, "libraries", false, sig, nil, "no table printed, nothing written")
	}
	if err != nil {
		fmt.Fprintln(stderr, "explore libraries:", err)
		return exitIncomplete
	}
	table := reality.FormatLibraryTable(rows)
	if *write != "" {
		out, err := reality.ReplaceTable(readme, table)
		if err == nil {
			err = counterexamples.WriteFileAtomic(*write, []byte(out))
		}
		if err != nil {
			fmt.Fprintf(stderr, "explore libraries: -write %s: %v\n", clip(*write), err)
			return exitIncomplete
		}
	} else {
		fmt.Fprint(stdout, table)
	}
	for _, r := range rows {
		if r.NotPlayed == "" && !r.C.Agree && r.Known == "" {
			return exitViolated
		}
	}
	return exitOK
}
