package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"lockcheck/counterexamples"
)

func init() {
	register("regen", "regenerate the checked-in counterexample files of the catalogue (-check: only compare)", runRegen)
}

// runRegen exits 0 when the folder is up to date (or was brought up to
// date), 1 with -check when a file differs, 2 on bad input or a failure,
// 3 when a signal stopped the searches (nothing written).
func runRegen(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("regen", stderr)
	dir := fs.String("dir", "counterexamples", "the folder of counterexample files")
	check := fs.Bool("check", false, "compare only: list the files that differ, write nothing, exit 1 if any")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "explore regen: unexpected argument %q (flags: -dir DIR, -check)\n", clip(fs.Arg(0)))
		return exitUsage
	}
	ctx, signalled, stopSignals := interruptible()
	defer stopSignals()
	diffs, err := counterexamples.RegenContext(ctx, *dir, *dir, *check)
	if err != nil && errors.Is(err, context.Canceled) {
		return failInterrupted(stdout, stderr, "regen", false, signalled(), err, "")
	}
	if err != nil {
		fmt.Fprintln(stderr, "explore regen:", err)
		return exitUsage
	}
	for _, d := range diffs {
		fmt.Fprintln(stdout, d)
	}
	switch {
	case len(diffs) == 0:
		fmt.Fprintf(stdout, "%s: up to date (%d designs)\n", *dir, len(counterexamples.Catalogue))
	case *check:
		fmt.Fprintf(stdout, "%s: %s not as the model writes it now; run: %s\n", *dir, files(len(diffs)), counterexamples.RegenCommand)
		return exitViolated
	default:
		fmt.Fprintf(stdout, "%s: %s written or removed; read the diff before committing\n", *dir, files(len(diffs)))
	}
	return exitOK
}

func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
