package counterexamples

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"counterexamples/x.txt": "counterexamples/x.txt",
		"/tmp/a b/x.txt":        "'/tmp/a b/x.txt'",
		"/tmp/$(touch P)/x":     "'/tmp/$(touch P)/x'",
		"it's":                  `'it'\''s'`,
		"a\nb":                  `$'a\nb'`,
		"a\\b\n'":               `$'a\\b\n\''`,
		"\xff\x01é":             `$'\xff\x01é'`,
		"":                      "''",
		"é/✗":                   "é/✗",
	} {
		require.Equal(t, want, ShellQuote(in), "%q", in)
		back, ok := shellUnquote(want)
		require.True(t, ok, want)
		require.Equal(t, in, back, want)
	}
	for _, bad := range []string{"'open", "$'open", `$'\q'`, "a b", "'a'b", `$'\x4'`} {
		_, ok := shellUnquote(bad)
		require.False(t, ok, bad)
	}
}

// TestShellQuoteInBash: what bash makes of the quoted word is the string,
// and a $(...) in it runs nothing.
func TestShellQuoteInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	for _, s := range []string{"a b", "$(touch " + dir + "/ran)", "`touch " + dir + "/ran`", "it's", "a\nb\tc\r", "\xff\x01", "x\\y", "é ✗"} {
		out, err := exec.Command(bash, "-c", "printf %s "+ShellQuote(s)).Output()
		require.NoError(t, err, s)
		require.Equal(t, s, string(out))
	}
	require.NoFileExists(t, dir+"/ran")
}

// FuzzShellQuote: any string quotes to one line that reads back as itself.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"a", "a b", "a\nb", "it's", "\xff", "$'x'", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := ShellQuote(s)
		if strings.ContainsAny(q, "\n\r") {
			t.Fatalf("%q quotes to more than one line: %q", s, q)
		}
		back, ok := shellUnquote(q)
		if !ok || back != s {
			t.Fatalf("%q → %q → %q, %v", s, q, back, ok)
		}
		shellUnquote(s) // never panics on anything
	})
}
