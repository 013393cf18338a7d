package reality

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// The tests share one redis-server, started on first use and stopped when
// the package's tests end (and, should the test binary die, by the
// parent-death signal). Each test uses its own pair of databases.

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
	nextDB     int
	dbMu       sync.Mutex
)

func TestMain(m *testing.M) {
	if kind := os.Getenv("LOCKCHECK_REALITY_CHILD"); kind != "" {
		os.Exit(childServer(kind)) // TestKilledRunsLeaveNothing's child
	}
	code := m.Run()
	if sharedPG != nil {
		sharedPG.Stop()
	}
	if sharedZK != nil {
		sharedZK.Stop()
	}
	if sharedEtcd != nil {
		sharedEtcd.Stop()
	}
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "reality tests:", err)
		}
	}
	os.Exit(code)
}

// needServer returns a running server, skips the test when redis-server is
// not installed (outside CI), and fails it when CI=true and it is missing.
func needServer(t testing.TB) *Server {
	t.Helper()
	bin, err := FindServer()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v: the real-server tests must run in CI", err)
		}
		t.Skipf("skipped: %v; the real-Redis tests need it", err)
	}
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		shared, sharedErr = StartServer(ctx, bin)
	})
	if sharedErr != nil {
		t.Fatalf("start %s: %v", bin, sharedErr)
	}
	return shared
}

var (
	sharedEtcd     *EtcdServer
	sharedEtcdErr  error
	sharedEtcdOnce sync.Once
)

// needEtcd returns an embedded etcd member shared by the tests (in this
// process, on loopback: no binary needed).
func needEtcd(t testing.TB) *EtcdServer {
	t.Helper()
	sharedEtcdOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sharedEtcd, sharedEtcdErr = StartEtcd(ctx)
	})
	if sharedEtcdErr != nil {
		t.Fatalf("embedded etcd: %v", sharedEtcdErr)
	}
	return sharedEtcd
}

var (
	sharedZK     *ZooKeeperServer
	sharedZKErr  error
	sharedZKOnce sync.Once
)

// needZooKeeper returns a ZooKeeper server shared by the tests; without
// Debian's zookeeper package it skips the test, or fails it when CI=true.
func needZooKeeper(t testing.TB) *ZooKeeperServer {
	t.Helper()
	if _, err := FindZooKeeper(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v: the real-server tests must run in CI", err)
		}
		t.Skipf("skipped: %v", err)
	}
	sharedZKOnce.Do(func() {
		sharedZK, sharedZKErr = StartZooKeeper(context.Background())
	})
	if sharedZKErr != nil {
		t.Fatalf("ZooKeeper: %v", sharedZKErr)
	}
	return sharedZK
}

var (
	sharedPG     *PostgresServer
	sharedPGErr  error
	sharedPGOnce sync.Once
)

// needPostgres returns a PostgreSQL shared by the tests; without Debian's
// postgresql package it skips the test, or fails it when CI=true.
func needPostgres(t testing.TB) *PostgresServer {
	t.Helper()
	if _, err := FindPostgres(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %v: the real-server tests must run in CI", err)
		}
		t.Skipf("skipped: %v", err)
	}
	sharedPGOnce.Do(func() {
		sharedPG, sharedPGErr = StartPostgres(context.Background())
	})
	if sharedPGErr != nil {
		t.Fatalf("PostgreSQL: %v", sharedPGErr)
	}
	return sharedPG
}

// dbPair hands each test its own lock and storage databases.
func dbPair(t testing.TB) (int, int) {
	dbMu.Lock()
	defer dbMu.Unlock()
	if nextDB+1 >= 16 {
		nextDB = 0
	}
	a := nextDB
	nextDB += 2
	return a, a + 1
}
