package locktest_test

import (
	"fmt"
	"testing"

	"lockcheck/locktest"
)

// BenchmarkSchedules plays b.N random schedules of the default design
// (three clients, a pause, a slow job, a crash and a write held in the
// network; fenced storage) against the correct client on real Redis, one
// at a time and several at once. Its schedules/s is what a locktest run
// plays a second; a schedule spends nearly all its time sleeping until its
// ticks (about 13 ticks of 100ms), so schedules at once multiply it, until the
// machine misses a tick's timing and the run is played again with a
// longer tick (void/op).
//
//	go test -run '^$' -bench 'Schedules/parallel' -benchtime 64x -count 3 ./locktest
//	go test -run '^$' -bench 'Schedules/etcd,' -benchtime 16x ./locktest
//	go test -run '^$' -bench 'Schedules/etcd-mutex' -benchtime 16x ./locktest
//	go test -run '^$' -bench 'Schedules/postgres' -benchtime 32x ./locktest
//	go test -run '^$' -bench 'Schedules/zookeeper' -benchtime 16x ./locktest
//	go test -run '^$' -bench 'Schedules/redlock' -benchtime 32x ./locktest
func BenchmarkSchedules(b *testing.B) {
	for _, par := range []int{1, 8, 16, 32} {
		b.Run(fmt.Sprintf("parallel=%d", par), func(b *testing.B) {
			cfg := locktest.Config{Storage: locktest.TokenOnReadsAndWrites, Parallel: par, New: newLock("")}
			void := locktest.PlayRandom(b, cfg, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(void)/float64(b.N), "void/op")
		})
	}
	// etcd: an embedded member per schedule at once, 2s ticks (leases are
	// whole seconds), the design's TTL 3 ticks; a random schedule is about
	// 10 ticks, 20s
	for _, par := range []int{1, 8, 16} {
		b.Run(fmt.Sprintf("etcd,parallel=%d", par), func(b *testing.B) {
			cfg := locktest.Config{Service: locktest.Etcd, Parallel: par, New: newEtcdLock}
			void := locktest.PlayRandom(b, cfg, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(void)/float64(b.N), "void/op")
		})
	}
	// etcd's queued Mutex: an embedded member per schedule at once, 2s
	// ticks, concurrency.Mutex (example_etcd_mutex_test.go) on a 3-tick
	// session; two clients, as its tests play it
	for _, par := range []int{1, 8, 16} {
		b.Run(fmt.Sprintf("etcd-mutex,parallel=%d", par), func(b *testing.B) {
			cfg := locktest.Config{Service: locktest.EtcdMutex, Clients: 2, Parallel: par, New: newEtcdMutex("")}
			void := locktest.PlayRandom(b, cfg, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(void)/float64(b.N), "void/op")
		})
	}
	// PostgreSQL: a server per schedule at once, a session-level advisory
	// lock (two clients, a pause and a slow job), 100ms ticks
	for _, par := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("postgres,parallel=%d", par), func(b *testing.B) {
			cfg := locktest.Config{Service: locktest.Postgres, Clients: 2, Parallel: par, New: newPgLock("")}
			void := locktest.PlayRandom(b, cfg, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(void)/float64(b.N), "void/op")
		})
	}
	// ZooKeeper: a standalone server per schedule at once, 100ms ticks,
	// go-zookeeper's lock recipe (example_zookeeper_test.go), session 10
	// ticks; two clients, as its tests play it (with three, a waiter whose
	// Lock returns between its predecessor's release and its own pause
	// parts from the model: docs/guide.md, Known limits)
	for _, par := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("zookeeper,parallel=%d", par), func(b *testing.B) {
			cfg := locktest.Config{Service: locktest.ZooKeeper, Clients: 2, Parallel: par, New: newZkLock("")}
			void := locktest.PlayRandom(b, cfg, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(void)/float64(b.N), "void/op")
		})
	}
	// Redlock: five redis-servers beside each storage server (eight
	// schedules to them, a database each), redsync's Redlock
	// (example_redlock_test.go), two clients, 100ms ticks
	for _, par := range []int{1, 8, 16} {
		b.Run(fmt.Sprintf("redlock,parallel=%d", par), func(b *testing.B) {
			cfg := locktest.Config{Service: locktest.Redlock, Parallel: par, New: newRedlock("")}
			void := locktest.PlayRandom(b, cfg, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(void)/float64(b.N), "void/op")
		})
	}
}
