package reality

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockcheck/model"
)

// FuzzLoad: Load never panics, and its errors are one line naming the
// source. Seeds: the demos, a counterexample file, broken variants.
func FuzzLoad(f *testing.F) {
	for n := 1; n <= 6; n++ {
		dm, err := model.LoadDemo(string(rune('0' + n)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(dm.Scenario.Format())
	}
	if text, err := os.ReadFile(filepath.Join("..", "counterexamples", "redis-cad-none-plain--exclusive.txt")); err == nil {
		f.Add(string(text))
		f.Add(string(text[:len(text)/2]))
	}
	f.Add("design demo2\nA acquire\nA read\nA pause 99\n")
	f.Add("design zookeeper/cad/none/plain\nA acquire\n")
	f.Add("design demo1\n")
	f.Add("lockcheck counterexample\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		in, err := Load("fuzz.txt", text)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "fuzz.txt") {
				t.Fatalf("error is not one line naming the source: %q", msg)
			}
			return
		}
		if len(in.Trace) == 0 || Playable(&in.Design) != nil {
			t.Fatalf("Load accepted an unplayable input: %d steps, design %s", len(in.Trace), in.Design.Name())
		}
	})
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "no design line"},
		{"design demo1\n", "no steps to play"},
		{"design demo2\nA read\n", "does not replay in the model"},
		{"design redis/cad/none/plain,partition=storage,partitions=1\nA acquire\n", "cannot be played for real, because partitions are played"},
		{"design redis/cad/none/plain,jumps=1\nA acquire\n", "clock jumps are not played"},
		{"design zookeeper/cad/none/plain,jobs=2\nA acquire\n", "repeated jobs are played for real on one Redis node only"},
		{"design redis/cad/none/plain,restarts=1\nA acquire\n", "client restarts are not played"},
		{"design etcd-mutex/del/none/plain,session=3,readers=1,jobs=2\nA acquire\n", "the recipe's RWMutex is played for real with one job a client"},
		{"lockcheck counterexample\ndesign: nonsense\n", "x.txt:2"},
	} {
		_, err := Load("x.txt", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
}

// FuzzCheckLoopback: never panics; accepts only loopback host:port.
func FuzzCheckLoopback(f *testing.F) {
	for _, s := range []string{"127.0.0.1:6379", "localhost:1", "[::1]:6379", "10.0.0.1:6379", "example.com:80", "127.0.0.1", ":6379", "127.0.0.1:0", "127.1.2.3:65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if CheckLoopback(addr) != nil {
			return
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("accepted %q, which is not host:port", addr)
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			t.Fatalf("accepted %q, which is not loopback", addr)
		}
	})
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:6379": true, "localhost:6379": true, "[::1]:6379": true,
		"10.0.0.1:6379": false, "192.168.1.1:6379": false, "example.com:6379": false, "127.0.0.1": false, "127.0.0.1:0": false} {
		if err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}
