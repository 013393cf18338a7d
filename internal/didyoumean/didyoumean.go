// Package didyoumean finds the word a user most likely meant: the closest
// candidate by edit distance (insertions, deletions, substitutions and
// swaps of two neighbours, each costing one), if it is close enough to be
// a typo. lockcheck's parsers of design names, properties, commands and
// flags name it in their one-line errors.
package didyoumean

// Closest returns the candidate nearest to word, or "" when none is
// within a typo's reach: at most 1 edit for words up to 4 characters, 2
// up to 8, 3 beyond. Ties go to the first candidate in order, so that the
// answer is the same for the same inputs.
func Closest(word string, candidates []string) string {
	w := []rune(word)
	if len(w) == 0 {
		return ""
	}
	limit := 1
	switch {
	case len(w) > 8:
		limit = 3
	case len(w) > 4:
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == word {
			continue
		}
		if d := Distance(w, []rune(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the optimal-string-alignment edit distance between a and b
// (Levenshtein with a swap of two adjacent characters as one edit).
func Distance(a, b []rune) int {
	// rows i-2, i-1 and i of the (len(a)+1) × (len(b)+1) table
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Hint is " (did you mean X?)" for the closest candidate, or "".
func Hint(word string, candidates []string) string {
	if c := Closest(word, candidates); c != "" {
		return " (did you mean " + c + "?)"
	}
	return ""
}
