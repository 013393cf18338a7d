package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyCounterexamples copies the checked-in files to a temporary folder.
func copyCounterexamples(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, pat := range []string{"*.txt", "*.html", "README.md"} {
		files, err := filepath.Glob(filepath.Join("../../counterexamples", pat))
		require.NoError(t, err)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644))
		}
	}
	return dir
}

func TestRegenCheck(t *testing.T) {
	dir := copyCounterexamples(t)
	code, out, errs := runCmd("regen", "-dir", dir, "-check")
	// the replay commands name the folder as given: a copy elsewhere differs
	require.Equal(t, exitViolated, code, errs)
	require.Contains(t, out, "not as the model writes it now")

	code, out, errs = runCmd("regen", "-dir", dir)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "written or removed")
	code, out, _ = runCmd("regen", "-dir", dir, "-check")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "up to date")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("edited"), 0o644))
	code, out, _ = runCmd("regen", "-dir", dir, "-check")
	require.Equal(t, exitViolated, code)
	require.Contains(t, out, "README.md: changed\n")
	data, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	require.Equal(t, "edited", string(data), "-check writes nothing")
}

func TestRegenBadInput(t *testing.T) {
	code, _, errs := runCmd("regen", "-dir", filepath.Join(t.TempDir(), "none"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "not found")
	code, _, errs = runCmd("regen", "extra")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "unexpected argument")
}
