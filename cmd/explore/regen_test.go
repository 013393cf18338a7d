package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/counterexamples"
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

// smallCatalogue makes the regen tests run on three designs: they test the
// command (flags, -check, what it writes and removes), not the catalogue,
// whose every file counterexamples' own golden test regenerates (with a
// fix search per design: the whole catalogue takes about a minute).
func smallCatalogue(t *testing.T) {
	old := counterexamples.Catalogue
	counterexamples.Catalogue = []string{"demo4", "db/cad/none/plain", "redis/cad/none/plain,pauses=0,jumps=1,jump=10"}
	t.Cleanup(func() { counterexamples.Catalogue = old })
}

func TestRegenCheck(t *testing.T) {
	smallCatalogue(t)
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

	index := filepath.Join(dir, "README.md")
	gen, err := os.ReadFile(index)
	require.NoError(t, err)
	edited := string(gen) + "a line added by hand\n"
	require.NoError(t, os.WriteFile(index, []byte(edited), 0o644))
	code, out, _ = runCmd("regen", "-dir", dir, "-check")
	require.Equal(t, exitViolated, code)
	require.Contains(t, out, "README.md: changed\n")
	data, err := os.ReadFile(index)
	require.NoError(t, err)
	require.Equal(t, edited, string(data), "-check writes nothing")
}

// TestRegenKeepsTheUsersFiles: regen overwrites and removes only the files
// it writes. A user's README.md under the index's name is an error before
// anything is written; a user's .txt and .html are left alone; a generated
// file the catalogue no longer makes is removed, and so is a temporary file
// of a killed writer.
func TestRegenKeepsTheUsersFiles(t *testing.T) {
	smallCatalogue(t)
	dir := copyCounterexamples(t)
	index := filepath.Join(dir, "README.md")
	require.NoError(t, os.WriteFile(index, []byte("# my notes\n"), 0o644))
	stale := filepath.Join(dir, "redis-old--exclusive.txt")
	gen, err := os.ReadFile(filepath.Join(dir, "db-cad-none-plain--exclusive.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stale, gen, 0o644))
	mine := map[string]string{
		"notes.txt":            "my notes\n",
		"page.html":            "<html><title>mine</title></html>\n",
		"draft--exclusive.txt": "lockcheck counterexample, almost\n",
	}
	for n, text := range mine {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(text), 0o644))
	}

	code, out, errs := runCmd("regen", "-dir", dir)
	require.Equal(t, exitUsage, code, out)
	require.Equal(t, "explore regen: "+index+": not a file regen wrote, and regen would overwrite it: move it away or pass another -dir\n", errs)
	data, err := os.ReadFile(index)
	require.NoError(t, err)
	require.Equal(t, "# my notes\n", string(data))
	_, err = os.Stat(stale)
	require.NoError(t, err, "nothing is removed when regen refuses")

	require.NoError(t, os.Remove(index))
	killed := filepath.Join(dir, counterexamples.TempFileName("README.md", 999999999, 123))
	require.NoError(t, os.WriteFile(killed, []byte("half"), 0o644))
	code, out, errs = runCmd("regen", "-dir", dir)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "redis-old--exclusive.txt: not generated\n")
	_, err = os.Stat(stale)
	require.True(t, os.IsNotExist(err), "a generated file the catalogue no longer makes is removed")
	_, err = os.Stat(killed)
	require.True(t, os.IsNotExist(err), "a killed writer's temporary file is removed")
	for n, text := range mine {
		data, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err, n)
		require.Equal(t, text, string(data), n)
	}
}

func TestRegenBadInput(t *testing.T) {
	code, _, errs := runCmd("regen", "-dir", filepath.Join(t.TempDir(), "none"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "not found")
	code, _, errs = runCmd("regen", "extra")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "unexpected argument")
}
