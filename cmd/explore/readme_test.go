package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// readDoc reads a file of the repository (README.md, docs/…).
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + name)
	require.NoError(t, err)
	return string(b)
}

// Every file the README and the guide name (a counterexample, a scenario,
// a test scenario, a script) exists (placeholders such as demoN.txt have a
// capital and are not paths): a renamed counterexample must not leave a
// rerun command that fails.
func TestReadmePathsExist(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/guide.md", "docs/story.md", "bench/README.md"} {
		text := readDoc(t, doc)
		paths := regexp.MustCompile(`(?:counterexamples|model/scenarios|reality/testdata|bench|docs)/[a-z0-9_.,=-]+\.(?:txt|html|sh|md|png)`).FindAllString(text, -1)
		if doc == "README.md" {
			require.NotEmpty(t, paths)
		}
		for _, p := range paths {
			_, err := os.Stat("../../" + p)
			require.NoError(t, err, "%s names %s", doc, p)
		}
	}
}

// readmeCommands are the commands in the README's code blocks, each with
// its comment cut off.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	var cmds []string
	in := false
	for _, l := range strings.Split(readDoc(t, "README.md"), "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		if i := strings.Index(l, "   #"); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "go ") || strings.HasPrefix(l, "bin/") {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

// TestReadmeCommands: every command the README shows is run here, or, for
// the expensive ones, has its arguments parsed here and is run by the test
// named (so a renamed flag, a moved file or a refused design name fails
// this test rather than a newcomer). A README command of a new kind fails
// until it is put in one of the two groups.
func TestReadmeCommands(t *testing.T) {
	cmds := readmeCommands(t)
	require.GreaterOrEqual(t, len(cmds), 10)
	ran := 0
	for _, c := range cmds {
		switch c {
		case "go test ./...":
			continue // this run
		}
		args, ok := strings.CutPrefix(c, "go run ./cmd/explore ")
		require.True(t, ok, "README command %q: neither go run ./cmd/explore nor go test ./... (add it here)", c)
		words := strings.Fields(args)
		verb := words[0]
		_, known := commands[verb]
		require.True(t, known, "README command %q: no such command", c)
		rest := words[1:]
		switch verb {
		case "demo", "designs", "replay", "check":
			// cheap: run them (the check designs are the small ones)
			wd, err := os.Getwd()
			require.NoError(t, err)
			require.NoError(t, os.Chdir("../.."))
			code, out, errs := runCmd(words...)
			require.NoError(t, os.Chdir(wd))
			require.Contains(t, []int{exitOK, exitViolated, exitVacuous}, code, "%s: %s", c, errs)
			require.NotEmpty(t, out, c)
			ran++
		case "fix":
			// a fix search of demo2 takes about 10 s of CPU; TestFixDemo2HonestAnswer runs it (-changes 1)
			_, _, _, err := parseFixArgs(rest)
			require.NoError(t, err, c)
		case "matrix":
			// the whole catalogue: TestReadmeShowsTheCurrentMatrix runs it
			require.Empty(t, rest, c)
		case "serve":
			// serves until Ctrl-C: TestServe* run it on a free port
			require.Equal(t, []string{"-design", "demo2"}, rest, c)
			_, err := model.ParseDesign(rest[1])
			require.NoError(t, err, c)
		case "reproduce":
			// starts a redis-server: TestReproduceDemoOnRealRedis (tagged) plays demo2
			require.Len(t, rest, 1, c)
			_, err := os.Stat("../../" + rest[0])
			require.NoError(t, err, c)
		default:
			t.Fatalf("README command %q: run it here or parse it and name the test that runs it", c)
		}
	}
	require.GreaterOrEqual(t, ran, 5, "the cheap README commands run")
}

// TestReadmeVerdictOutput: the output the README shows under "Reading a
// verdict" is check's output, line for line.
func TestReadmeVerdictOutput(t *testing.T) {
	text := readDoc(t, "README.md")
	const intro = "`go run ./cmd/explore check -design demo2` prints:\n\n```\n"
	i := strings.Index(text, intro)
	require.GreaterOrEqual(t, i, 0, "README shows no check output")
	shown := text[i+len(intro):]
	shown = shown[:strings.Index(shown, "```\n")]
	code, out, errs := runCmd("check", "-design", "demo2")
	require.Equal(t, exitViolated, code, errs)
	require.True(t, strings.HasPrefix(out, shown), "README's check output is stale; paste the output of go run ./cmd/explore check -design demo2 up to its \"also violated\" line:\n%s", out)
	require.Contains(t, shown, "verdict: loses updates")
	require.Contains(t, shown, "also violated")
}

// TestStoryNames: the story document lists every story explore demo tells,
// each with the first sentence of its scenario file.
// LOCKCHECK_WRITE_STORIES=1 go test ./cmd/explore -run TestStoryNames
// rewrites the list.
func TestStoryNames(t *testing.T) {
	text := readDoc(t, "docs/story.md")
	const begin, end = "<!-- stories: generated by TestStoryNames (LOCKCHECK_WRITE_STORIES=1 go test ./cmd/explore -run TestStoryNames); do not edit -->\n", "<!-- end of stories -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	require.True(t, i >= 0 && j > i, "docs/story.md has no stories markers")
	want := storyList(t)
	if os.Getenv("LOCKCHECK_WRITE_STORIES") == "1" {
		text = text[:i+len(begin)] + want + text[j:]
		require.NoError(t, os.WriteFile("../../docs/story.md", []byte(text), 0o644))
		return
	}
	require.Equal(t, want, text[i+len(begin):j], "docs/story.md's list of stories is stale: LOCKCHECK_WRITE_STORIES=1 go test ./cmd/explore -run TestStoryNames")
}

func storyList(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| story | design | what it shows |\n|---|---|---|\n")
	for _, name := range model.ScenarioNames() {
		dm, err := model.LoadDemo(name)
		require.NoError(t, err, name)
		doc := strings.Join(strings.Fields(dm.Scenario.Doc), " ")
		if k := strings.Index(doc, ". "); k >= 0 {
			doc = doc[:k+1]
		}
		b.WriteString("| `" + name + "` | `" + dm.Scenario.DesignName + "` | " + strings.ReplaceAll(doc, "|", "\\|") + " |\n")
	}
	return b.String()
}

// TestReadmeShowsTheLocktestExample: the adapter and test under "Test your
// own lock client" are locktest/example_test.go's, verbatim (that file is
// compiled and run by go test ./locktest, and in a module of its own by
// TestOutsideModule), so the README's copy cannot rot.
func TestReadmeShowsTheLocktestExample(t *testing.T) {
	text := readDoc(t, "README.md")
	const intro = "## Test your own lock client\n"
	i := strings.Index(text, intro)
	require.GreaterOrEqual(t, i, 0, "README has no section %q", intro)
	text = text[i:]
	start := strings.Index(text, "```go\n")
	require.GreaterOrEqual(t, start, 0, "the section shows no Go code")
	shown := text[start+len("```go\n"):]
	shown = shown[:strings.Index(shown, "```\n")]
	example := readDoc(t, "locktest/example_test.go")
	require.Contains(t, example, shown, "README's adapter differs from locktest/example_test.go: paste it again")
	require.Contains(t, shown, "func (l *myLock) Acquire(")
	require.Contains(t, shown, "func TestMyLock(t *testing.T)")
}
