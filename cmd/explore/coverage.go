package main

import (
	"fmt"
	"io"
	"strings"

	"lockcheck/explore"
	"lockcheck/model"
)

// coverage.go: explore check's coverage (TLC's -coverage): the steps of
// the explored space by action kind, the faults by the client phase they
// fell in, the clients met in each phase, and what the design can do but
// never did. Printed with -coverage, always in -json.

// covKinds are the action kinds a coverage lists for d: those its rules
// can generate and any that occurred (model.PossibleKinds is a superset of
// the latter; this keeps a row if it ever is not), in action order,
// without (faults=false) or with only (true) the faults.
func covKinds(d *model.Design, c *explore.Counts, faults bool) []model.ActionKind {
	possible := model.PossibleKinds(d)
	var out []model.ActionKind
	for k := model.ActionKind(0); int(k) < model.NumActionKinds; k++ {
		if k.IsFault() == faults && (possible&(1<<k) != 0 || c.Kind(k) != 0) {
			out = append(out, k)
		}
	}
	return out
}

// covPhases are the client phases a coverage lists for d, in phase order.
func covPhases(d *model.Design, c *explore.Counts) []model.Phase {
	possible := model.PossiblePhases(d)
	var out []model.Phase
	for p := model.Phase(0); int(p) < model.NumPhases; p++ {
		if possible&(1<<p) != 0 || c.Phases[p] != 0 {
			out = append(out, p)
		}
	}
	return out
}

// writeCoverageText is -coverage's section of the text output.
func writeCoverageText(w io.Writer, d *model.Design, rep *explore.Report) {
	c := &rep.Counts
	fmt.Fprintf(w, "\ncoverage: the steps of the explored space (%s steps; a level cut short by a bound is not counted)\n", thousands(c.Total()))
	var acts []string
	for _, k := range covKinds(d, c, false) {
		acts = append(acts, fmt.Sprintf("%s %s", k.CoverageWord(), thousands(c.Kind(k))))
	}
	fmt.Fprintf(w, "  %-13s %s\n", "actions", strings.Join(acts, ", "))
	var faults []string
	for _, k := range covKinds(d, c, true) {
		f := fmt.Sprintf("%s %s", k.CoverageWord(), thousands(c.Kind(k)))
		if by := faultPhases(c, k); len(by) > 0 {
			var parts []string
			for _, b := range by {
				parts = append(parts, fmt.Sprintf("%s %s", b.Phase, thousands(b.Steps)))
			}
			f += " (in phase " + strings.Join(parts, ", ") + ")"
		}
		faults = append(faults, f)
	}
	if len(faults) == 0 {
		faults = []string{"none in the budget"}
	}
	fmt.Fprintf(w, "  %-13s %s\n", "faults", strings.Join(faults, "; "))
	var phases []string
	for _, p := range covPhases(d, c) {
		phases = append(phases, fmt.Sprintf("%s %s", p, thousands(c.Phases[p])))
	}
	fmt.Fprintf(w, "  %-13s %s (clients met in each phase, over the states expanded)\n", "client phases", strings.Join(phases, ", "))
	na, nf, np := c.Never(d)
	if len(na)+len(nf)+len(np) == 0 {
		fmt.Fprintf(w, "  %-13s nothing: every action, fault and phase the design has occurred\n", "never fired")
		return
	}
	var never []string
	if len(na) > 0 {
		never = append(never, "actions "+kindWords(na))
	}
	if len(nf) > 0 {
		never = append(never, "faults "+kindWords(nf))
	}
	if len(np) > 0 {
		var ws []string
		for _, p := range np {
			ws = append(ws, p.String())
		}
		never = append(never, "phases "+strings.Join(ws, ", "))
	}
	fmt.Fprintf(w, "  %-13s %s\n", "never fired", strings.Join(never, "; "))
}

func kindWords(ks []model.ActionKind) string {
	var ws []string
	for _, k := range ks {
		ws = append(ws, k.CoverageWord())
	}
	return strings.Join(ws, ", ")
}

// faultPhases are the phases that fault k fell in, with its steps in each,
// in phase order (none for a fault of no client).
func faultPhases(c *explore.Counts, k model.ActionKind) []covPhaseJSON {
	var out []covPhaseJSON
	for p := model.Phase(0); int(p) < model.NumPhases; p++ {
		if n := c.Steps[k][p]; n > 0 {
			out = append(out, covPhaseJSON{Phase: p.String(), Steps: n})
		}
	}
	return out
}

// covKindJSON is one action kind's steps (0: never fired).
type covKindJSON struct {
	Kind  string `json:"kind"`
	Steps int64  `json:"steps"`
}

// covFaultJSON is one fault kind's steps, and for a client's fault the
// phases it fell in (a phase not listed: never).
type covFaultJSON struct {
	Kind    string         `json:"kind"`
	Steps   int64          `json:"steps"`
	ByPhase []covPhaseJSON `json:"by_phase,omitempty"`
}

type covPhaseJSON struct {
	Phase string `json:"phase"`
	Steps int64  `json:"steps"`
}

// covClientsJSON is one client phase and the clients met in it, over the
// states expanded (0: never).
type covClientsJSON struct {
	Phase   string `json:"phase"`
	Clients int64  `json:"clients"`
}

// covNeverJSON names what the design can do and the explored space never
// did.
type covNeverJSON struct {
	Actions []string `json:"actions"`
	Faults  []string `json:"faults"`
	Phases  []string `json:"phases"`
}

// fillCoverageJSON adds the counts to the -json coverage object.
func fillCoverageJSON(out *checkCovJSON, d *model.Design, rep *explore.Report) {
	c := &rep.Counts
	out.Steps = c.Total()
	out.Actions = []covKindJSON{}
	for _, k := range covKinds(d, c, false) {
		out.Actions = append(out.Actions, covKindJSON{k.CoverageWord(), c.Kind(k)})
	}
	out.Faults = []covFaultJSON{}
	for _, k := range covKinds(d, c, true) {
		out.Faults = append(out.Faults, covFaultJSON{k.CoverageWord(), c.Kind(k), faultPhases(c, k)})
	}
	out.Phases = []covClientsJSON{}
	for _, p := range covPhases(d, c) {
		out.Phases = append(out.Phases, covClientsJSON{p.String(), c.Phases[p]})
	}
	na, nf, np := c.Never(d)
	out.Never = covNeverJSON{Actions: []string{}, Faults: []string{}, Phases: []string{}}
	for _, k := range na {
		out.Never.Actions = append(out.Never.Actions, k.CoverageWord())
	}
	for _, k := range nf {
		out.Never.Faults = append(out.Never.Faults, k.CoverageWord())
	}
	for _, p := range np {
		out.Never.Phases = append(out.Never.Phases, p.String())
	}
}
