package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"lockcheck/counterexamples"
	"lockcheck/model"
)

// isCounterexample reports whether a file's first line is a counterexample
// file's (counterexamples.Magic); anything else is read as a scenario.
func isCounterexample(data []byte) bool {
	first, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(first) == counterexamples.Magic
}

// propertyVerdict is one property's verdict on one schedule.
type propertyVerdict struct {
	Property string `json:"property"`
	Expect   string `json:"expect"` // always or sometimes
	// Status: violated or holds (always), seen or not-seen (sometimes):
	// on this schedule only, not on every schedule as check's verdicts.
	Status string `json:"status"`
	Step   *int   `json:"step"` // where it was violated or seen; null if not
	Doc    string `json:"doc"`
}

// scheduleVerdicts is every property of d's verdict on run r.
func scheduleVerdicts(r *model.Run) []propertyVerdict {
	var out []propertyVerdict
	for _, p := range model.PropertiesFor(&r.Design) {
		v := propertyVerdict{Property: p.Name, Expect: p.Expect.String(), Doc: p.Doc}
		seq, found := r.Violated(p.Name)
		switch {
		case found && p.Expect == model.Always:
			v.Status = "violated"
		case found:
			v.Status = "seen"
		case p.Expect == model.Always:
			v.Status = "holds"
		default:
			v.Status = "not-seen"
		}
		if found {
			v.Step = &seq
		}
		out = append(out, v)
	}
	return out
}

// replayScenarioJSON is replay's -json object for a scenario file.
type replayScenarioJSON struct {
	File       string            `json:"file"`
	Kind       string            `json:"kind"` // "scenario"
	Design     string            `json:"design"`
	Steps      int               `json:"steps"`
	Counter    int               `json:"counter"`
	Accepted   int               `json:"accepted"`
	Properties []propertyVerdict `json:"properties"`
	Expect     []string          `json:"expect_failures"` // the expect lines the replay contradicts
}

// replayScenario replays a scenario file: the story, the timeline, the
// outcome and every property's verdict on that one schedule. Exit 0 when
// its expect lines hold (without expect lines: when no always-property is
// violated on the schedule), 1 when one does not (one is), 2 when the
// file does not parse or a step is not enabled.
func replayScenario(name string, data []byte, asJSON bool, stdout, stderr io.Writer) int {
	bad := func(msg string) int { return failUsage(stdout, stderr, "replay", asJSON, msg) }
	sc, err := model.ParseScenario(string(data))
	if err != nil {
		msg := withFile(name, err.Error())
		if msg == err.Error() {
			msg = name + ": " + msg
		}
		if strings.Contains(msg, "design line") {
			msg += fmt.Sprintf(" (a counterexample file's first line is %q)", counterexamples.Magic)
		}
		return bad(msg)
	}
	r, err := model.Replay(&sc.Design, sc.Trace)
	if err != nil {
		var te *model.TraceError
		if errors.As(err, &te) && te.Seq-1 < len(sc.Lines) {
			return bad(fmt.Sprintf("%s:%d: %v", name, sc.Lines[te.Seq-1], err))
		}
		return bad(fmt.Sprintf("%s: %v", name, err))
	}
	verdicts := scheduleVerdicts(r)
	failures := sc.CheckExpect(r)
	code := exitOK
	if len(sc.Expect) > 0 {
		if len(failures) > 0 {
			code = exitViolated
		}
	} else {
		for _, v := range verdicts {
			if v.Status == "violated" {
				code = exitViolated
			}
		}
	}
	if asJSON {
		out := replayScenarioJSON{File: name, Kind: "scenario", Design: sc.Design.Name(), Steps: len(sc.Trace),
			Counter: int(r.Final.Store.Counter), Accepted: int(r.Final.Store.Accepted), Properties: verdicts, Expect: []string{}}
		for _, f := range failures {
			out.Expect = append(out.Expect, withFile(name, f))
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
		return code
	}
	if sc.Doc != "" {
		fmt.Fprintf(stdout, "%s\n\n", sc.Doc)
	}
	fmt.Fprintf(stdout, "design %s = %s, %d steps\n\n", sc.DesignName, sc.Design.Name(), len(sc.Trace))
	fmt.Fprint(stdout, model.Render(r))
	fmt.Fprintf(stdout, "\nevery property on this schedule (not a verdict on every schedule: explore check -design %s):\n", sc.Design.Name())
	fmt.Fprint(stdout, verdictLines(verdicts))
	if len(sc.Expect) > 0 {
		if len(failures) == 0 {
			fmt.Fprintf(stdout, "expect lines: all hold\n")
		}
		for _, f := range failures {
			fmt.Fprintf(stdout, "expect: %s\n", withFile(name, f))
		}
	}
	return code
}

// verdictLines writes the verdicts one a line.
func verdictLines(vs []propertyVerdict) string {
	var b strings.Builder
	for _, v := range vs {
		at := ""
		if v.Step != nil {
			at = fmt.Sprintf(" at step %d", *v.Step)
		}
		fmt.Fprintf(&b, "  %-19s %s%s\n", v.Property, v.Status, at)
	}
	return b.String()
}
