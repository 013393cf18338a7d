//go:build reality

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input to explore libraries is refused before any server starts:
// one line on stderr, exit 2, nothing on stdout, the README untouched.
func TestLibrariesBadInput(t *testing.T) {
	dir := t.TempDir()
	noMarkers := filepath.Join(dir, "README.md")
	require.NoError(t, os.WriteFile(noMarkers, []byte("# a README without the table's markers\n"), 0o644))
	for _, args := range [][]string{
		{"extra"},
		{"-nope"},
		{"-write", filepath.Join(dir, "missing.md")},
		{"-write", noMarkers},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"libraries"}, args...), &out, &errb)
		require.Equal(t, exitUsage, code, args)
		require.Empty(t, out.String(), args)
		require.NotEmpty(t, errb.String(), args)
	}
	data, err := os.ReadFile(noMarkers)
	require.NoError(t, err)
	require.Equal(t, "# a README without the table's markers\n", string(data))
}
