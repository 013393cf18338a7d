package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoArguments: explore alone is bad input: the usage on stderr, exit 2,
// nothing on stdout; explore help is the usage on stdout, exit 0.
func TestNoArguments(t *testing.T) {
	code, out, errs := runCmd()
	require.Equal(t, exitUsage, code)
	require.Empty(t, out)
	require.Contains(t, errs, "usage: explore <command> [flags]")
	code, out, _ = runCmd("help")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "usage: explore <command> [flags]")
}

// TestDidYouMean: a typo of a command, a flag, a design parameter, a value,
// a preset or a property is named in the one-line error with the word
// meant.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chek"}, `unknown command "chek" (did you mean check?)`},
		{[]string{"check", "-clinets", "2"}, "flag provided but not defined: -clinets (did you mean -clients?)"},
		{[]string{"fix", "-desing", "demo2"}, "(did you mean -design?)"},
		{[]string{"simulate", "-rnus", "3"}, "(did you mean -runs?)"},
		{[]string{"matrix", "-markdwn"}, "(did you mean -markdown?)"},
		{[]string{"check", "-design", "redis/cad/none/plain,tll=5"}, `unknown design parameter "tll" (did you mean ttl?`},
		{[]string{"check", "-design", "redis/cad/none/plain,acquire=set-expir"}, `(did you mean set-expire?)`},
		{[]string{"check", "-design", "redsi/cad/none/plain"}, `unknown lock "redsi" (did you mean redis?)`},
		{[]string{"check", "-design", "demo22"}, `(did you mean demo2?)`},
		{[]string{"check", "-properties", "exclusiv"}, `unknown property "exclusiv" (did you mean exclusive?)`},
	} {
		code, out, errs := runCmd(c.args...)
		require.Equal(t, exitUsage, code, "%v: %s", c.args, errs)
		require.Empty(t, out, c.args)
		require.Equal(t, 1, strings.Count(errs, "\n"), "%v: %s", c.args, errs)
		require.Contains(t, errs, c.want, c.args)
	}
}

// TestDesignNameAndFlagConflict: a number given both in the design name
// and by its flag, with two values, is refused naming both; the same value
// twice, or a flag over a preset's own default, is not a conflict.
func TestDesignNameAndFlagConflict(t *testing.T) {
	for _, cmd := range []string{"check", "simulate"} {
		code, out, errs := runCmd(cmd, "-design", "demo2,clients=2", "-clients", "3")
		require.Equal(t, exitUsage, code, "%s: %s", cmd, errs)
		require.Empty(t, out)
		require.Contains(t, errs, `-clients 3 conflicts with clients=2 in the design name "demo2,clients=2"`, cmd)
	}
	code, _, errs := runCmd("check", "-design", "demo2,clients=2", "-clients", "2", "-steps", "1")
	require.NotEqual(t, exitUsage, code, errs)
	code, _, errs = runCmd("check", "-design", "demo4", "-pauses", "1", "-steps", "1")
	require.NotEqual(t, exitUsage, code, errs)
}

// TestNeverActingParameter: a renewal at or past the TTL never renews a
// live key; the CLI refuses it as bad input, naming both numbers.
func TestNeverActingParameter(t *testing.T) {
	for _, name := range []string{"redis/cad/none/plain,renew=20", "redis/cad/none/plain,ttl=8,renew=8"} {
		code, out, errs := runCmd("check", "-design", name)
		require.Equal(t, exitUsage, code, errs)
		require.Empty(t, out)
		require.Contains(t, errs, "the key expires before the first renewal, so the watchdog never acts", name)
	}
}

// TestCheckJSONEveryCounterexample: -json carries the shortest
// counterexample of every violated property, not only the first one.
func TestCheckJSONEveryCounterexample(t *testing.T) {
	code, out, errs := runCmd("check", "-design", "demo4", "-json")
	require.Equal(t, exitViolated, code, errs)
	var got struct {
		Results []struct {
			Property    string `json:"property"`
			Status      string `json:"status"`
			TraceLength *int   `json:"trace_length"`
		} `json:"results"`
		Counterexample  *checkCexJSON  `json:"counterexample"`
		Counterexamples []checkCexJSON `json:"counterexamples"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	var violated []string
	lengths := map[string]int{}
	for _, r := range got.Results {
		if r.Status == "violated" {
			violated = append(violated, r.Property)
			lengths[r.Property] = *r.TraceLength
		}
	}
	require.GreaterOrEqual(t, len(violated), 3, "demo4 breaks exclusive, mutex, own-release and no-lost-update")
	require.Len(t, got.Counterexamples, len(violated))
	for i, c := range got.Counterexamples {
		require.Equal(t, violated[i], c.Property)
		require.Len(t, c.Steps, lengths[c.Property], c.Property)
	}
	require.Equal(t, got.Counterexamples[0], *got.Counterexample)
}
