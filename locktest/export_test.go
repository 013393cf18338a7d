package locktest

import (
	"testing"
)

// PlayRandom plays cfg's first n random schedules (no counterexamples),
// as Run plays its own: for the benchmark and the long run.
func PlayRandom(t testing.TB, cfg Config, n int) (void int) {
	t.Helper()
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	s, err := randomSchedules(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	return playAll(t, cfg, s)
}
