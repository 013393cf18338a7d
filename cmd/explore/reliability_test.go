package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// TestNonRegularFilesAreRefused: a FIFO would block open for ever; replay
// and reproduce refuse it (and a folder) at once with one line.
func TestNonRegularFilesAreRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, args := range [][]string{{"replay", fifo}, {"reproduce", fifo}, {"replay", t.TempDir()}} {
		code, out, errs := runCmd(args...)
		require.Equal(t, exitUsage, code, args)
		require.Empty(t, out)
		require.Equal(t, 1, strings.Count(errs, "\n"), errs)
		require.Contains(t, errs, "not a regular file")
		require.True(t, strings.HasPrefix(errs, "explore "+args[0]+": "), errs)
	}
}

// TestFlagErrorsAreOneLine: every subcommand answers an unknown flag and a
// malformed value with one line naming itself, and -h with its usage.
func TestFlagErrorsAreOneLine(t *testing.T) {
	for _, name := range commandNames() {
		for _, bad := range [][]string{{"-no-such-flag"}, {"-json=maybe"}} {
			code, out, errs := runCmd(append([]string{name}, bad...)...)
			require.Equal(t, exitUsage, code, "%s %v", name, bad)
			require.Equal(t, 1, strings.Count(errs, "\n"), "%s %v:\n%s", name, bad, errs)
			require.True(t, strings.HasPrefix(errs, "explore "+name+": "), "%s %v: %s", name, bad, errs)
			if !strings.HasPrefix(out, "{") { // -json answers on stdout too
				require.Empty(t, out, "%s %v", name, bad)
			}
		}
		code, out, errs := runCmd(name, "-h")
		require.Equal(t, exitOK, code, name)
		require.Contains(t, strings.ToLower(out+errs), "usage", name)
	}
}

func TestExtraArgumentsAreRefused(t *testing.T) {
	for _, args := range [][]string{{"designs", "foo"}, {"demo", "02"}, {"demo", "+2"}, {"demo", "demo02"}, {"demo", "2", "3"}} {
		code, out, errs := runCmd(args...)
		require.Equal(t, exitUsage, code, args)
		require.Empty(t, out, args)
		require.Equal(t, 1, strings.Count(errs, "\n"), "%v: %s", args, errs)
	}
	code, out, _ := runCmd("demo", "2")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "Demo 2")
}

// TestFullStdout: output that cannot be written is exit 2 with a message,
// never a silent exit 0 (text and JSON).
func TestFullStdout(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	require.NoError(t, err)
	defer full.Close()
	for _, args := range [][]string{{"designs"}, {"demo", "2"}, {"check", "-design", "demo1"}, {"check", "-design", "demo1", "-json"}, {"replay", demo4File}} {
		var errb bytes.Buffer
		code := run(args, full, &errb)
		require.Equal(t, exitUsage, code, args)
		require.Contains(t, errb.String(), "explore "+args[0]+": writing the output: ", args)
		require.Contains(t, errb.String(), "no space left on device", args)
	}
}

// TestCheckOutUnwritable: a folder that cannot take a file is bad input
// found before the search; a write that fails after it still prints the
// verdict, then says what was not written.
func TestCheckOutUnwritable(t *testing.T) {
	ro := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(ro, 0o555))
	if f, err := os.CreateTemp(ro, "x"); err == nil { // root writes anyway
		f.Close()
		ro = "/proc/self"
	}
	code, out, errs := runCheckArgs("-design", "demo4", "-out", ro)
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errs, "\n"), errs)
	require.Contains(t, errs, "explore check: -out "+ro+": cannot create a file there")

	dir := t.TempDir()
	defer func(w func(string, model.Design, string, []model.Action, string) (string, error)) {
		writeCounterexample = w
	}(writeCounterexample)
	writeCounterexample = func(string, model.Design, string, []model.Action, string) (string, error) {
		return "", errors.New("write x.txt: disk full")
	}
	code, out, errs = runCheckArgs("-design", "demo4", "-out", dir)
	require.Equal(t, exitUsage, code)
	require.Contains(t, out, "exclusive           violated")
	require.Contains(t, errs, "write x.txt: disk full (the verdict above stands")
}

// TestEmptyPropertiesAreRefused: -properties "" (an empty script variable)
// names no property; it is bad input, not "all".
func TestEmptyPropertiesAreRefused(t *testing.T) {
	for _, cmd := range []string{"check", "simulate", "fix"} {
		for _, v := range []string{"", " "} {
			code, out, errs := runCmd(cmd, "-design", "demo1", "-properties", v)
			require.Equal(t, exitUsage, code, "%s %q: %s", cmd, v, out)
			require.Equal(t, 1, strings.Count(errs, "\n"), errs)
			require.Contains(t, errs, "explore "+cmd+": no property given (want a comma-separated list of exclusive, ", cmd)
			require.True(t, strings.HasSuffix(errs, ", or all)\n"), errs)
		}
	}
}

// TestLongPathsAreClipped: a 100 KB path comes back as a short line (our
// copy of it and the OS error's both clipped), on stderr and in the
// {"error"} object, with the start and end of the path and the reason.
func TestLongPathsAreClipped(t *testing.T) {
	long := filepath.Join(os.TempDir(), strings.Repeat("a", 100_000)+"z")
	for _, args := range [][]string{
		{"check", "-design", "demo2", "-out", long},
		{"check", "-design", "demo2", "-json", "-out", long},
		{"simulate", "-design", "demo2", "-runs", "2", "-out", long},
		{"simulate", "-design", "demo2", "-runs", "2", "-json", "-out", long},
		{"replay", long},
		{"merge", long},
		{"merge", "-json", long},
		{"reproduce", long},
		{"reproduce", "-json", long},
		{"regen", "-dir", long},
		{"libraries", "-write", long},
	} {
		code, out, errs := runCmd(args...)
		require.Equal(t, exitUsage, code, args[:len(args)-1])
		require.Equal(t, 1, strings.Count(errs, "\n"), args[:len(args)-1])
		require.Less(t, len(errs), 1000, "%v: %.300s", args[:len(args)-1], errs)
		require.Contains(t, errs, "aaaa…(", args[:len(args)-1])
		require.Contains(t, errs, "bytes)…aaa", args[:len(args)-1])
		require.True(t, utf8.ValidString(errs))
		if wantsJSON(args) {
			require.Less(t, len(out), 1000, "%v: %.300s", args[:len(args)-1], out)
			require.Contains(t, out, `{"error":`)
		} else {
			require.Empty(t, out)
		}
	}
}

func TestClipWords(t *testing.T) {
	require.Equal(t, "short words stay\n", clipWords("short words stay\n"))
	w := strings.Repeat("é", 150) // 300 bytes, two per character
	got := clipWords("x " + w + " y")
	require.True(t, utf8.ValidString(got), got)
	require.Equal(t, "x "+strings.Repeat("é", 50)+"…(160 bytes)…"+strings.Repeat("é", 20)+" y", got)
	require.Equal(t, strings.Repeat("b", maxWord), clipWords(strings.Repeat("b", maxWord)))
}

// TestSmallerFindings: the small items of the reliability issue, each
// checked the way a user meets it.
func TestSmallerFindings(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	require.NoError(t, err)
	defer full.Close()

	// explore -h on a full disk is not a silent exit 0
	var errb bytes.Buffer
	require.Equal(t, exitUsage, run([]string{"-h"}, full, &errb))
	require.Equal(t, "explore: writing the usage: write /dev/full: no space left on device\n", errb.String())

	// check -json on a full disk says so once
	errb.Reset()
	require.Equal(t, exitUsage, run([]string{"check", "-design", "demo4", "-json"}, full, &errb))
	require.Equal(t, 1, strings.Count(errb.String(), "no space left on device"), errb.String())

	// fix -json answers bad input with {"error"}
	code, out, _ := runCmd("fix", "-json", "-design", "nope")
	require.Equal(t, exitUsage, code)
	require.Contains(t, out, `{"error":`)

	// each command names the file it wants
	dir := t.TempDir()
	code, _, errs := runCmd("merge", dir)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "not a regular file (a folder): want a file of shard lines of explore simulate")
	code, _, errs = runCmd("libraries", "-write", dir)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "not a regular file (a folder): want a README with the table's markers")
	require.NotContains(t, errs, "counterexample")

	// regen -dir FILE: not a folder, not "not found"
	file := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	code, _, errs = runCmd("regen", "-dir", file)
	require.Equal(t, exitUsage, code)
	require.Equal(t, "explore regen: "+file+" is not a folder: want the folder of counterexample files (run from the repository root, or pass -dir)\n", errs)

	// a counterexample cut inside its design line is a truncation
	text, err := os.ReadFile(demo4File)
	require.NoError(t, err)
	cut := filepath.Join(dir, "cut.txt")
	at := strings.Index(string(text), "/plain") + len("/plai")
	require.NoError(t, os.WriteFile(cut, text[:at], 0o644))
	code, _, errs = runCmd("replay", cut)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "cut.txt:3: the file ends inside this line (no final newline: truncated?): unknown storage \"plai\"")

	// more shards than runs: some shards would play nothing
	code, _, errs = runCmd("simulate", "-shard", "0/2000", "-runs", "50")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "-shard 0/2000 with -runs 50: ")

	// designs -h says what designs does
	code, out, errs = runCmd("designs", "-h")
	require.Equal(t, exitOK, code)
	require.Contains(t, out+errs, "Lists every design axis")
}
