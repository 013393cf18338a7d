package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Scenario is a readable script: a design and a schedule of actions. The
// text form is
//
//	# What the scenario shows, as a paragraph of # lines.
//	design redis/cad/none/plain
//	A acquire
//	B acquire        # refused: A holds the key
//	tick 9           # nine ticks in a row
//	A pause 14
//
// Blank lines and text after # are ignored; "tick N" stands for N ticks,
// and a trailing "xN" repeats an action N times ("B acquire x5").
type Scenario struct {
	Doc    string // the # paragraph at the top, without the #s
	Design Design
	// DesignName is the name as written (a preset stays "demo2").
	DesignName string
	Trace      []Action
	// Lines[k] is the line of the file that wrote Trace[k] (a "tick 9"
	// line writes nine actions), for messages about a step.
	Lines []int
	// Expect holds the scenario's "expect key=value …" claims about its
	// replay: violated=P,…, holds=P,…, counter=N, accepted=N, failed=N.
	// CheckExpect tests them against the model.
	Expect []Expectations
}

// Expectations is one "expect" line.
type Expectations struct {
	Line   int
	Claims [][2]string // key, value
}

// expect keys: violated and holds name always-properties, seen and unseen
// sometimes-properties (witnesses); accepted counts the writes the storage
// accepted, failed the jobs whose read or write was refused (or that gave
// up).
var expectKeys = []string{"violated", "holds", "seen", "unseen", "counter", "accepted", "failed"}

// maxScenarioSteps bounds a scenario so that a hostile file cannot make the
// parser allocate without limit.
const maxScenarioSteps = 100000

// ParseScenario reads a scenario; errors name the line.
func ParseScenario(text string) (*Scenario, error) {
	sc := &Scenario{}
	var doc []string
	inDoc := true
	haveDesign := false
	for n, line := range strings.Split(text, "\n") {
		lineNo := n + 1
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			if inDoc {
				doc = append(doc, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			}
			continue
		}
		if c := strings.Index(trimmed, "#"); c >= 0 {
			trimmed = strings.TrimSpace(trimmed[:c])
		}
		if trimmed == "" {
			if len(doc) > 0 {
				inDoc = false
			}
			continue
		}
		inDoc = false
		if rest, ok := strings.CutPrefix(trimmed, "design "); ok {
			if haveDesign {
				return nil, fmt.Errorf("line %d: a second design line (a scenario has one)", lineNo)
			}
			d, err := ParseDesign(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", lineNo, err)
			}
			sc.Design, sc.DesignName, haveDesign = d, strings.TrimSpace(rest), true
			continue
		}
		if !haveDesign {
			return nil, fmt.Errorf("line %d: %q before the design line (want \"design NAME\" first)", lineNo, clip(trimmed))
		}
		if rest, ok := strings.CutPrefix(trimmed, "expect "); ok {
			e, err := parseExpect(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", lineNo, err)
			}
			e.Line = lineNo
			sc.Expect = append(sc.Expect, e)
			continue
		}
		a, times, err := ParseStep(&sc.Design, trimmed)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", lineNo, err)
		}
		if len(sc.Trace)+times > maxScenarioSteps {
			return nil, fmt.Errorf("line %d: more than %d steps", lineNo, maxScenarioSteps)
		}
		for ; times > 0; times-- {
			sc.Trace = append(sc.Trace, a)
			sc.Lines = append(sc.Lines, lineNo)
		}
	}
	if !haveDesign {
		return nil, fmt.Errorf("no design line (want \"design NAME\")")
	}
	sc.Doc = strings.Join(doc, "\n")
	return sc, nil
}

// ParseStep reads one step line, as scenarios, counterexample files and
// simulate's results write them: an action in Action.String's words,
// "tick N" for N ticks, or an action followed by "xN" for N of it in a row
// (FormatTrace writes both). It returns the action and how many times it is
// taken, and refuses a client, node or partition group that design d does
// not have.
func ParseStep(d *Design, line string) (Action, int, error) {
	f := strings.Fields(line)
	if len(f) == 2 && f[0] == "tick" {
		k, err := strconv.Atoi(f[1])
		if err != nil || k < 1 || k > MaxHorizonTicks {
			return Action{}, 0, fmt.Errorf("%q: want \"tick\" or \"tick N\" with N from 1 to %d", clip(line), MaxHorizonTicks)
		}
		return Action{Kind: ActTick}, k, nil
	}
	times := 1
	if len(f) > 1 {
		if last := f[len(f)-1]; len(last) > 1 && last[0] == 'x' {
			k, err := strconv.Atoi(last[1:])
			if err != nil || k < 1 || k > MaxHorizonTicks {
				return Action{}, 0, fmt.Errorf("%q: want a repeat count x1 to x%d", clip(last), MaxHorizonTicks)
			}
			times = k
			line = strings.Join(f[:len(f)-1], " ")
		}
	}
	a, err := ParseAction(line)
	switch {
	case err != nil:
		return Action{}, 0, err
	case a.Kind.ByClient() && int(a.Client) >= d.Clients:
		return Action{}, 0, fmt.Errorf("client %s, but the design has %d clients (A-%s)", ClientName(int(a.Client)), d.Clients, ClientName(d.Clients-1))
	case a.Kind.hasNode() && int(a.Arg) >= lockNodes(d):
		return Action{}, 0, fmt.Errorf("node %d, but lock %s has %d node(s)", a.Arg+1, d.Lock, lockNodes(d))
	case a.Kind.hasReplica() && int(a.Arg) >= d.Replicas:
		return Action{}, 0, fmt.Errorf("replica %d, but the design has %d replica(s) (replicas=)", a.Arg+1, d.Replicas)
	case a.Kind.hasGroup() && int(a.Arg) >= partitionGroups(d):
		return Action{}, 0, fmt.Errorf("partition group %d, but partition=%s has %d group(s)", a.Arg+1, d.Partition, partitionGroups(d))
	}
	return a, times, nil
}

func parseExpect(text string) (Expectations, error) {
	var e Expectations
	for _, f := range strings.Fields(text) {
		k, v, ok := strings.Cut(f, "=")
		known := false
		for _, w := range expectKeys {
			known = known || w == k
		}
		if !ok || !known || v == "" {
			return e, fmt.Errorf("expect %q: want key=value with keys %s", clip(f), strings.Join(expectKeys, ", "))
		}
		switch k {
		case "violated", "holds", "seen", "unseen":
			for _, p := range strings.Split(v, ",") {
				if _, ok := PropertyByName(p); !ok {
					return e, fmt.Errorf("expect %s: unknown property %q (allowed: %s)", k, clip(p), strings.Join(PropertyNames(), ", "))
				}
			}
		default:
			if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 255 {
				return e, fmt.Errorf("expect %s=%q: want a whole number from 0 to 255", k, clip(v))
			}
		}
		e.Claims = append(e.Claims, [2]string{k, v})
	}
	if len(e.Claims) == 0 {
		return e, fmt.Errorf("expect with nothing to expect (keys: %s)", strings.Join(expectKeys, ", "))
	}
	return e, nil
}

// CheckExpect compares the scenario's expect lines with a replay of it and
// returns what does not hold, one line each.
func (sc *Scenario) CheckExpect(r *Run) []string {
	var bad []string
	_, failed := r.Outcomes()
	for _, e := range sc.Expect {
		for _, c := range e.Claims {
			k, v := c[0], c[1]
			var got string
			switch k {
			case "violated", "holds":
				for _, p := range strings.Split(v, ",") {
					_, vio := r.Violated(p)
					if vio != (k == "violated") {
						bad = append(bad, fmt.Sprintf("line %d: expected %s %s", e.Line, p, map[bool]string{true: "violated", false: "to hold"}[k == "violated"]))
					}
				}
				continue
			case "seen", "unseen":
				for _, p := range strings.Split(v, ",") {
					if _, saw := r.Violated(p); saw != (k == "seen") {
						bad = append(bad, fmt.Sprintf("line %d: expected %s %s", e.Line, p, map[bool]string{true: "seen", false: "not seen"}[k == "seen"]))
					}
				}
				continue
			case "counter":
				got = strconv.Itoa(int(r.Final.Store.Counter))
			case "accepted":
				got = strconv.Itoa(int(r.Final.Store.Accepted))
			case "failed":
				got = strconv.Itoa(failed)
			}
			if got != v {
				bad = append(bad, fmt.Sprintf("line %d: expected %s=%s, the replay gives %s", e.Line, k, v, got))
			}
		}
	}
	return bad
}

// FormatTrace writes a trace one action per line, runs of ticks as
// "tick N" and runs of another action as "B acquire x5".
func FormatTrace(trace []Action) string {
	var b strings.Builder
	for k := 0; k < len(trace); {
		n := 1
		for k+n < len(trace) && trace[k+n] == trace[k] && n < MaxHorizonTicks {
			n++
		}
		switch {
		case n == 1:
			b.WriteString(trace[k].String())
		case trace[k].Kind == ActTick:
			fmt.Fprintf(&b, "tick %d", n)
		default:
			fmt.Fprintf(&b, "%s x%d", trace[k], n)
		}
		b.WriteByte('\n')
		k += n
	}
	return b.String()
}

// Format writes the scenario back in its text form.
func (sc *Scenario) Format() string {
	var b strings.Builder
	if sc.Doc != "" {
		for _, l := range strings.Split(sc.Doc, "\n") {
			if l == "" {
				b.WriteString("#\n")
			} else {
				b.WriteString("# " + l + "\n")
			}
		}
		b.WriteString("\n")
	}
	name := sc.DesignName
	if name == "" {
		name = sc.Design.Name()
	}
	b.WriteString("design " + name + "\n")
	for _, e := range sc.Expect {
		b.WriteString("expect")
		for _, c := range e.Claims {
			b.WriteString(" " + c[0] + "=" + c[1])
		}
		b.WriteString("\n")
	}
	b.WriteString(FormatTrace(sc.Trace))
	return b.String()
}
