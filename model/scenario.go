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
// Blank lines and text after # are ignored; "tick N" stands for N ticks.
type Scenario struct {
	Doc    string // the # paragraph at the top, without the #s
	Design Design
	// DesignName is the name as written (a preset stays "demo2").
	DesignName string
	Trace      []Action
}

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
		f := strings.Fields(trimmed)
		if f[0] == "tick" && len(f) == 2 {
			k, err := strconv.Atoi(f[1])
			if err != nil || k < 1 || k > MaxHorizonTicks {
				return nil, fmt.Errorf("line %d: %q: want \"tick\" or \"tick N\" with N from 1 to %d", lineNo, clip(trimmed), MaxHorizonTicks)
			}
			for ; k > 0; k-- {
				sc.Trace = append(sc.Trace, Action{Kind: ActTick})
			}
		} else {
			a, err := ParseAction(trimmed)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", lineNo, err)
			}
			if a.Kind != ActTick && int(a.Client) >= sc.Design.Clients {
				return nil, fmt.Errorf("line %d: client %s, but the design has %d clients (A-%s)", lineNo, ClientName(int(a.Client)), sc.Design.Clients, ClientName(sc.Design.Clients-1))
			}
			sc.Trace = append(sc.Trace, a)
		}
		if len(sc.Trace) > maxScenarioSteps {
			return nil, fmt.Errorf("line %d: more than %d steps", lineNo, maxScenarioSteps)
		}
	}
	if !haveDesign {
		return nil, fmt.Errorf("no design line (want \"design NAME\")")
	}
	sc.Doc = strings.Join(doc, "\n")
	return sc, nil
}

// FormatTrace writes a trace one action per line, runs of ticks as "tick N".
func FormatTrace(trace []Action) string {
	var b strings.Builder
	for k := 0; k < len(trace); {
		if trace[k].Kind == ActTick {
			n := 0
			for k < len(trace) && trace[k].Kind == ActTick {
				n++
				k++
			}
			if n == 1 {
				b.WriteString("tick\n")
			} else {
				fmt.Fprintf(&b, "tick %d\n", n)
			}
			continue
		}
		b.WriteString(trace[k].String())
		b.WriteByte('\n')
		k++
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
	b.WriteString(FormatTrace(sc.Trace))
	return b.String()
}
