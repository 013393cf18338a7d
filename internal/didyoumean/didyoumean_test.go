package didyoumean

import (
	"testing"
	"unicode/utf8"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"ttl", "ttl", 0}, {"", "abc", 3}, {"abc", "", 3},
		{"tll", "ttl", 1},        // a swap of neighbours
		{"kitten", "sitting", 3}, // the textbook pair
		{"clinets", "clients", 1},
		{"pauses", "pause", 1},
		{"max-pasue", "max-pause", 1},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
	} {
		if got := Distance([]rune(c.a), []rune(c.b)); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"ttl", "work", "clients", "jobs", "pauses", "max-pause", "timeout", "token"}
	for _, c := range []struct{ word, want string }{
		{"tll", "ttl"},
		{"clinets", "clients"},
		{"pause", "pauses"},
		{"maxpause", "max-pause"},
		{"color", ""}, // nothing near
		{"ttl", ""},   // the word itself is no suggestion
		{"x", ""},     // one letter is no typo of anything
		{"tokn", "token"},
	} {
		if got := Closest(c.word, keys); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := Hint("tll", keys); got != " (did you mean ttl?)" {
		t.Errorf("Hint = %q", got)
	}
	if got := Hint("zzz", keys); got != "" {
		t.Errorf("Hint = %q", got)
	}
}

// FuzzClosest: never panics, the answer is a candidate, symmetric distance.
func FuzzClosest(f *testing.F) {
	for _, s := range []string{"tll", "clinets", "", "\xff\xfe", "max-pause", "日本語"} {
		f.Add(s, "ttl")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		if Distance([]rune(a), []rune(b)) != Distance([]rune(b), []rune(a)) {
			t.Fatalf("not symmetric: %q %q", a, b)
		}
		if c := Closest(a, []string{b, "ttl"}); c != "" && c != b && c != "ttl" {
			t.Fatalf("Closest gave %q", c)
		}
	})
}
