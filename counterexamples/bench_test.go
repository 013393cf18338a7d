package counterexamples

import "testing"

// BenchmarkGenerate is the cost of regenerating the whole catalogue (every
// search, render and page): go test ./counterexamples -run XXX -bench Generate
func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := Generate(displayDir); err != nil {
			b.Fatal(err)
		}
	}
}
