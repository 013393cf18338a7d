package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"lockcheck/model"
)

func init() {
	register("demo", "tell a demo (1-6) or a story of another lock service, or all: steps, timeline, outcome", runDemo)
	register("designs", "list every design axis, value, parameter and preset", runDesigns)
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("demo", stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: explore demo N|NAME|all   (N from 1 to 6; stories: %s)\n", strings.Join(model.ScenarioNames()[6:], ", "))
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "explore demo: want one demo: 1 to 6, a story name, or all")
		return exitUsage
	}
	names := []string{fs.Arg(0)}
	if fs.Arg(0) == "all" {
		names = model.ScenarioNames()
	} else if !demoName(fs.Arg(0)) {
		fmt.Fprintf(stderr, "explore demo: unknown demo %q (allowed: 1 to 6, demo1 to demo6, a story: %s; or all)\n", clip(fs.Arg(0)), strings.Join(model.ScenarioNames()[6:], ", "))
		return exitUsage
	}
	// load everything first, so that bad input prints nothing half-done
	var demos []*model.Demo
	for _, n := range names {
		dm, err := model.LoadDemo(n)
		if err != nil {
			fmt.Fprintln(stderr, "explore demo:", err)
			return exitUsage
		}
		demos = append(demos, dm)
	}
	for k, dm := range demos {
		r, err := model.Replay(&dm.Scenario.Design, dm.Scenario.Trace)
		if err != nil {
			fmt.Fprintf(stderr, "explore demo: %s: %v\n", dm.Name, err)
			return exitUsage
		}
		if k > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "%s\n\ndesign %s = %s\n\n", dm.Scenario.Doc, dm.Name, dm.Scenario.Design.Name())
		fmt.Fprint(stdout, model.Render(r))
	}
	return exitOK
}

func runDesigns(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("designs", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: explore designs")
		fmt.Fprintln(stderr, "Lists every design axis and its values, every parameter (name=value after the axes, with its range and")
		fmt.Fprintln(stderr, "default), the fault families and the presets (demo1 … demo6 and the named designs), for -design NAME.")
		fmt.Fprintln(stderr, "No flags. Exit codes: 0 listed, 2 bad input.")
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "explore designs: unexpected argument %q (no arguments: it lists every design axis)\n", clip(fs.Arg(0)))
		return exitUsage
	}
	fmt.Fprint(stdout, model.DescribeAxes())
	return exitOK
}

// demoName reports whether arg names a demo exactly as listed: a number
// from 1 to 6 written plainly (not 02 or +2) or a scenario name.
func demoName(arg string) bool {
	for k, n := range model.ScenarioNames() {
		if arg == n || (k < 6 && arg == strconv.Itoa(k+1)) {
			return true
		}
	}
	return false
}
