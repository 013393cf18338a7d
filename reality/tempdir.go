package reality

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
)

// The servers' folders are named lockcheck-KIND-PID-N-TAG in the temporary
// directory: KIND redis, zk, pg, pgbouncer or etcd, PID the process that
// started the server, N a random number and TAG a hash of the rest. A run killed before
// its Stop (kill -9, a second Ctrl-C, a test binary killed by its timeout)
// leaves its folder; the next server start of any run sweeps the folders
// whose process has gone. The tag lets the sweep remove only folders this
// program made: a user's lockcheck-redis-1-2 has none.

// serverDir makes a server's folder (mode 0700). The first call of a
// process first sweeps what killed runs left.
func serverDir(kind string) (string, error) {
	sweepOnce.Do(func() { SweepStaleDirs(os.TempDir()) })
	for try := 0; ; try++ {
		dir := filepath.Join(os.TempDir(), dirName(kind, os.Getpid(), rand.Uint32()))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return "", err
		}
	}
}

var sweepOnce sync.Once

func dirName(kind string, pid int, n uint32) string {
	base := fmt.Sprintf("lockcheck-%s-%d-%d", kind, pid, n)
	return base + "-" + dirTag(base)
}

func dirTag(base string) string {
	h := fnv.New64a()
	h.Write([]byte("lockcheck server folder\x00"))
	h.Write([]byte(base))
	return fmt.Sprintf("%016x", h.Sum64())
}

var staleDir = regexp.MustCompile(`^(lockcheck-(?:redis|zk|pg|pgbouncer|etcd)-([0-9]+)-[0-9]+)-([0-9a-f]{16})$`)

// SweepStaleDirs removes from dir (the temporary directory) the server
// folders of runs whose process has gone, and returns how many it removed.
// Only folders named by this program (tag and all) are touched; it is best
// effort: a folder it cannot judge or remove stays.
func SweepStaleDirs(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		m := staleDir.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() || dirTag(m[1]) != m[3] {
			continue
		}
		pid, err := strconv.Atoi(m[2])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// processAlive reports whether a process with this id exists (signal 0
// checks without sending; EPERM means it exists under another user).
func processAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
