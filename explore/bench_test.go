package explore

import (
	"runtime"
	"syscall"
	"testing"

	"lockcheck/model"
)

// The SPIN baseline's world (../shared/baselines/spin): one Redis node,
// check-and-delete, token on reads and writes, storage refusing a token
// below the highest seen, TTL 10, W 2, one pause of 1 to 15 ticks, and a
// clock that may tick at any moment. SPIN's clock runs 0..40; ours starts
// at t=1, so horizon 41 gives the same number of ticks. SPIN checks only
// no-lost-update in this configuration (it holds), so the whole space is
// explored.
const spinDesign = "redis/cad/rw/max-token,clock=free,horizon=41"

// Run with
//
//	go test ./explore -run '^$' -bench . -benchtime 1x -count 5 | tee new.txt
//	benchstat new.txt
//
// The 4- and 5-client benchmarks take tens of seconds an iteration;
// -bench 'SPIN3' skips them.
func benchSearch(b *testing.B, name string, sym bool, workers int) {
	benchCheck(b, name, "no-lost-update", sym, workers)
}

// benchCompact is benchSearch with the compact visited set (Bounds.Compact).
func benchCompact(b *testing.B, name string, sym bool) {
	benchBounds(b, name, "no-lost-update", Bounds{Symmetry: sym, Compact: true})
}

// benchCheck searches design name for the properties list ("all": every
// one, as explore check does): no-lost-update alone must hold (the SPIN
// design), any other list must be searched to the end.
func benchCheck(b *testing.B, name, list string, sym bool, workers int) {
	benchBounds(b, name, list, Bounds{Symmetry: sym, Workers: workers})
}

func benchBounds(b *testing.B, name, list string, bounds Bounds) {
	d, err := model.ParseDesign(name)
	if err != nil {
		b.Fatal(err)
	}
	props, err := model.ParsePropertiesFor(&d, list)
	if err != nil {
		b.Fatal(err)
	}
	var r *Report
	var seconds float64
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err = Check(Config{Design: d, Properties: props, Bounds: bounds})
		if err != nil {
			b.Fatal(err)
		}
		seconds += r.Stats.Seconds
		if list == "no-lost-update" && r.Results[0].Status != Holds {
			b.Fatalf("no-lost-update: %v", r.Results[0])
		}
		if !r.Stats.Complete {
			b.Fatalf("%s: the search stopped early (%s)", name, r.Stats.StoppedBy)
		}
	}
	b.StopTimer()
	// CPU time of the process: on a machine shared with other jobs it
	// varies less than the wall clock
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(r.Stats.Distinct), "states")
	b.ReportMetric(float64(r.Stats.Transitions), "transitions")
	b.ReportMetric(float64(r.Stats.Distinct)*float64(b.N)/seconds, "states/s")
	b.ReportMetric(float64(r.Stats.VisitedBytes)/float64(r.Stats.Distinct), "B/state")
	b.ReportMetric(float64(r.Stats.MemoryBytes)/(1<<20), "search-MB")
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MB")
}

func BenchmarkSPIN3Symmetry(b *testing.B)          { benchSearch(b, spinDesign, true, 0) }
func BenchmarkSPIN3NoSymmetry(b *testing.B)        { benchSearch(b, spinDesign, false, 0) }
func BenchmarkSPIN3SymmetryWorker1(b *testing.B)   { benchSearch(b, spinDesign, true, 1) }
func BenchmarkSPIN3NoSymmetryWorker1(b *testing.B) { benchSearch(b, spinDesign, false, 1) }
func BenchmarkSPIN3NoSymmetryCompact(b *testing.B) { benchCompact(b, spinDesign, false) }
func BenchmarkSPIN3SymmetryCompact(b *testing.B)   { benchCompact(b, spinDesign, true) }
func BenchmarkSPIN4Symmetry(b *testing.B)          { benchSearch(b, spinDesign+",clients=4", true, 0) }
func BenchmarkSPIN5Symmetry(b *testing.B)          { benchSearch(b, spinDesign+",clients=5", true, 0) }

// Redlock, every property, as `explore check -design
// redlock/cad/none/plain[,clients=4]` runs it (the issue's 4-client
// Redlock target). The 4-client one takes a minute or more an iteration;
// -bench 'Redlock3' skips it.
func BenchmarkRedlock3Symmetry(b *testing.B) { benchCheck(b, "redlock/cad/none/plain", "all", true, 0) }
func BenchmarkRedlock4Symmetry(b *testing.B) {
	benchCheck(b, "redlock/cad/none/plain,clients=4", "all", true, 0)
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkFix is the fix search of a few unsafe catalogue designs (the
// work behind the counterexamples' prevented sections), in CPU seconds:
//
//	go test ./explore -run '^$' -bench Fix -benchtime 1x -count 5
func BenchmarkFix(b *testing.B) {
	var ds []model.Design
	for _, name := range []string{"demo2", "demo4", "zookeeper/cad/none/plain", "db/cad/none/plain,tx=outside", "replica/cad/rw/max-token,pauses=0", "redlock/cad/none/plain"} {
		d, err := model.ParseDesign(name)
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, d)
	}
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, d := range ds {
			if _, err := Fix(FixConfig{Design: d, Bounds: Bounds{Symmetry: true}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}
