package main

import (
	"fmt"
	"io"

	"lockcheck/explore"
	"lockcheck/model"
)

func init() {
	register("check", "exhaustive breadth-first search of one design: verdicts and shortest counterexamples", runCheck)
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", stderr)
	name := fs.String("design", "redis/cad/none/plain", "design name or preset (see 'explore designs')")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	d, err := model.ParseDesign(*name)
	if err != nil {
		fmt.Fprintln(stderr, "explore check:", err)
		return exitUsage
	}
	rep, err := explore.Check(explore.Config{Design: d, Bounds: explore.Bounds{Symmetry: true}})
	if err != nil {
		fmt.Fprintln(stderr, "explore check:", err)
		return exitUsage
	}
	code := exitOK
	fmt.Fprintf(stdout, "design %s\n", d.Name())
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "  %-19s %s\n", r.Property, r.Status)
		if r.Status == explore.Violated {
			code = exitViolated
		}
	}
	for _, r := range rep.Results {
		if r.Status != explore.Violated {
			continue
		}
		run, err := model.Replay(&d, r.Trace)
		if err != nil {
			fmt.Fprintln(stderr, "explore check: internal error: counterexample does not replay:", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "\nshortest counterexample for %s (%d steps):\n\n%s", r.Property, len(r.Trace), model.Render(run))
		break
	}
	fmt.Fprintf(stdout, "\nstates %d, transitions %d, depth %d\n", rep.Stats.Distinct, rep.Stats.Transitions, rep.Stats.Depth)
	return code
}
