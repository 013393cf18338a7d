package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestMatrixBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-only", "no-such-design"},
		{"-workers", "-1"},
		{"-max-states", "0"},
		{"extra"},
		{"-nope"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"matrix"}, args...), &out, &errb)
		require.Equal(t, exitUsage, code, args)
		require.Empty(t, out.String(), "nothing half-written on stdout")
		require.NotEmpty(t, errb.String())
	}
	code, _, errs := runCmd("matrix", "-markdown", "-json")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "-json and -markdown: give one of them")
}

// The matrix's verdicts come from the search: the demo rows say what the
// seed says, and the JSON form carries the same cells.
func TestMatrixDemoRows(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"matrix", "-only", "demo", "-json"}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	var m struct {
		Rows []matrixRow `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	require.Len(t, m.Rows, 6)
	cell := func(row int, prop string) matrixCell {
		for _, c := range m.Rows[row].Cells {
			if c.Property == prop {
				return c
			}
		}
		t.Fatalf("no %s cell", prop)
		return matrixCell{}
	}
	require.Equal(t, "holds", cell(0, "exclusive").Status)         // demo1
	require.Equal(t, "violated", cell(1, "no-lost-update").Status) // demo2
	require.Equal(t, "violated", cell(1, "linearizable").Status)   // porcupine agrees
	require.Equal(t, "violated", cell(3, "own-release").Status)    // demo4: plain DEL
	require.Equal(t, "violated", cell(5, "exclusive").Status)      // demo6: lock-unsafe …
	require.Equal(t, "holds", cell(5, "no-lost-update").Status)    // … but data-safe
	var md, e2 bytes.Buffer
	require.Equal(t, exitOK, run([]string{"matrix", "-only", "demo", "-markdown"}, &md, &e2))
	require.True(t, strings.HasPrefix(md.String(), "| design |"))
	require.Contains(t, md.String(), "| `demo6` |")
}

// The guide's verdict table is the matrix's output, not a copy that drifts:
// regenerate it with `go run ./cmd/explore matrix -markdown` and paste it
// into docs/guide.md when this fails.
func TestReadmeShowsTheCurrentMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps the whole catalogue")
	}
	readme, err := os.ReadFile("../../docs/guide.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "| design | what it shows |")
	require.GreaterOrEqual(t, start, 0, "docs/guide.md has no verdict table")
	end := strings.Index(text[start:], "\n\n")
	require.Greater(t, end, 0)
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run([]string{"matrix", "-markdown", "-dir", "../../counterexamples"}, &out, &errb), errb.String())
	got := strings.ReplaceAll(out.String(), "](../../counterexamples/", "](../counterexamples/")
	gotTable := got[:strings.Index(got, "\n\n")]
	require.Equal(t, gotTable, text[start:start+end], "docs/guide.md's matrix is stale: run go run ./cmd/explore matrix -markdown -dir ../counterexamples in docs/ and paste the table")
}

// Each row carries its verdict in a word (demo6: lock-unsafe, data-safe),
// and a violated cell whose checked-in file shows the violation with fewer
// clients says how many steps and clients the file has, instead of a link
// "✗ 31" to a 13-step file.
func TestMatrixVerdictAndFileLength(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run([]string{"matrix", "-only", "demo", "-markdown", "-dir", "../../counterexamples"}, &out, &errb), errb.String())
	rows := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(l, "| `"), "`"); ok && strings.HasPrefix(l, "| `") {
			rows[name] = l
		}
	}
	require.Contains(t, rows["demo6"], "| lock-unsafe, data-safe |")
	require.Contains(t, rows["demo2"], "| loses updates |")
	require.Contains(t, rows["demo1"], "| holds only vacuously |")
	require.Contains(t, rows["demo2"], "| ✗ 31 ([13 steps, 1 client](../../counterexamples/redis-cad-none-plain--exclusive.txt)) |")
	require.NotContains(t, rows["demo2"], "[✗ 31]")
}

// By default the matrix is a table for a terminal: no Markdown, every
// column starts at the same place on every row, and a row is as wide as
// its cells and not their links (a Markdown row of the catalogue reached
// 789 characters).
func TestMatrixTerminalTable(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run([]string{"matrix", "-only", "demo", "-dir", "../../counterexamples"}, &out, &errb), errb.String())
	text := out.String()
	require.NotContains(t, text, "|")
	require.NotContains(t, text, "](")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	head := lines[0]
	require.True(t, strings.HasPrefix(head, "design  verdict"), head)
	cols := []int{}
	for _, name := range []string{"verdict", "exclusive", "no-lost-update", "progress", "states"} {
		cols = append(cols, utf8.RuneCountInString(head[:strings.Index(head, name)]))
	}
	rows := 0
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		rows++
		r := []rune(l)
		for _, c := range cols {
			require.Greater(t, len(r), c, l)
			require.Equal(t, ' ', r[c-1], "column at %d not aligned in %q", c, l)
			require.NotEqual(t, ' ', r[c], "column at %d not aligned in %q", c, l)
		}
		require.LessOrEqual(t, len(r), 160, l)
		require.Equal(t, strings.TrimRight(l, " "), l, "trailing blanks")
	}
	require.Equal(t, 6, rows)
	require.Contains(t, text, "demo6   lock-unsafe, data-safe  ✗ 31")
	for _, l := range lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), 160, l)
	}
}
