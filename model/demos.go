package model

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
)

// preset is one of the seed's demos: a named design and the scripted
// schedule of its story (scenarios/NAME.txt).
type preset struct {
	name  string
	title string
	spec  string // the design, as a full name
}

var presets = []preset{
	{"demo1", "Demo 1: no faults, the lock works", "redis/cad/none/plain,pauses=0"},
	{"demo2", "Demo 2: GC pause, no fencing", "redis/cad/none/plain"},
	{"demo3", "Demo 3: GC pause, fencing token on writes", "redis/cad/write/max-token,token=33"},
	{"demo4", "Demo 4: slow job + plain DEL", "redis/del/none/plain,pauses=0,slow=1"},
	{"demo5", "Demo 5: slow job, check-and-delete", "redis/cad/none/plain,pauses=0,slow=1"},
	{"demo6", "Demo 6: fencing token on reads and writes", "redis/cad/rw/max-token,token=33"},
}

//go:embed scenarios/*.txt
var scenarioFiles embed.FS

// PresetNames lists the presets, demo1 … demo6.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

func presetDesign(name string) (Design, bool) {
	for _, p := range presets {
		if p.name == name {
			d, err := ParseDesign(p.spec)
			if err != nil {
				panic("preset " + name + ": " + err.Error())
			}
			return d, true
		}
	}
	return Design{}, false
}

// ScenarioNames lists every scenario file: the six demos, then the stories
// of the other lock services and faults, in file-name order.
func ScenarioNames() []string {
	entries, err := scenarioFiles.ReadDir("scenarios")
	if err != nil {
		panic(err)
	}
	names := PresetNames()
	for _, e := range entries {
		n := strings.TrimSuffix(e.Name(), ".txt")
		if !strings.HasPrefix(n, "demo") {
			names = append(names, n)
		}
	}
	return names
}

// Demo is a preset with its title and scenario.
type Demo struct {
	Name     string
	Title    string
	Scenario *Scenario
}

// LoadDemo reads demo n (1 … 6) or a name "demo2". Unknown demos are a
// one-line error listing the allowed ones.
func LoadDemo(arg string) (*Demo, error) {
	name := arg
	if n, err := strconv.Atoi(arg); err == nil {
		name = "demo" + strconv.Itoa(n)
	}
	for _, n := range ScenarioNames() {
		if n != name {
			continue
		}
		text, err := scenarioFiles.ReadFile("scenarios/" + n + ".txt")
		if err != nil {
			return nil, fmt.Errorf("demo %s: no scenario file: %v", n, err)
		}
		sc, err := ParseScenario(string(text))
		if err != nil {
			return nil, fmt.Errorf("scenarios/%s.txt: %v", n, err)
		}
		title, _, _ := strings.Cut(sc.Doc, "\n")
		return &Demo{Name: n, Title: title, Scenario: sc}, nil
	}
	return nil, fmt.Errorf("unknown demo %q (allowed: 1 to %d, or a story: %s; or all)", clip(arg), len(presets), strings.Join(ScenarioNames()[len(presets):], ", "))
}
