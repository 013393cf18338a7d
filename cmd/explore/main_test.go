package main

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzCommandLine feeds arbitrary words to the commands that read only
// (demo, designs, replay, matrix -only with a filter that matches little,
// unknown commands): they never panic, exit with a documented code, and
// bad input gets one line on stderr and nothing on stdout.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{
		"demo 2", "demo all", "demo zookeeper-session", "demo 9", "demo", "designs", "designs -x",
		"replay", "replay /nonexistent", "replay -h", "nope", "matrix -only db/cad/none/plain,tx=outside",
		"matrix -workers -3", "demo -- 2", "help", "demo 02", "designs foo", "replay -x", "regen -dir",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		if len(args) > 0 {
			switch args[0] {
			case "demo", "designs", "replay", "help", "-h":
			case "matrix": // only narrow sweeps: a fuzzer must not run the whole catalogue
				if len(args) != 3 || args[1] != "-only" || len(args[2]) < 12 {
					return
				}
			default:
				if _, ok := commands[args[0]]; ok {
					return // check, regen and reproduce search, write files or start servers
				}
			}
		}
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		switch code {
		case exitOK, exitViolated, exitIncomplete:
		case exitUsage:
			if len(args) > 0 && args[0] != "help" && strings.Count(errb.String(), "\n") != 1 {
				t.Fatalf("%q: not one line on stderr for bad input:\n%s", line, errb.String())
			}
		default:
			t.Fatalf("%q: exit code %d", line, code)
		}
	})
}
