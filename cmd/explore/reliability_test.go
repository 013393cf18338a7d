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
