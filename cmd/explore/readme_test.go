package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every file the README names (a counterexample, a scenario, a test
// scenario, a script) exists (placeholders such as demoN.txt have a capital and are not paths): a renamed counterexample must not leave a
// rerun command that fails.
func TestReadmePathsExist(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	paths := regexp.MustCompile(`(?:counterexamples|model/scenarios|reality/testdata|bench)/[a-z0-9_.,=-]+\.(?:txt|html|sh)`).FindAllString(string(b), -1)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		_, err := os.Stat("../../" + p)
		require.NoError(t, err, "the README names %s", p)
	}
}
