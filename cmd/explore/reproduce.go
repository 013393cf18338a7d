//go:build reality

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"lockcheck/model"
	"lockcheck/reality"
)

func init() {
	reproduceCheck = func(name, text string) error { _, err := reality.Load(name, text); return err }
	register("reproduce", "play a scenario or counterexample on a real Redis and compare it with the model", runReproduce)
}

// reproduceMaxBytes bounds what reproduce reads from FILE.
const reproduceMaxBytes = 4 << 20

// runReproduce exits 0 when model and reality agree, 1 when they differ,
// 2 on bad input, 3 when the run could not be judged (no server, or the
// machine could not keep the schedule's timing).
func runReproduce(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("reproduce", stderr)
	tick := fs.Duration("tick", 0, "one model tick in real time (whole milliseconds, 10ms to 10s; default 100ms, etcd designs 2s)")
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	retries := fs.Int("retries", 2, "replay a void run (the machine could not keep the timing) this many times, doubling the tick each time (0 to 5)")
	addr := fs.String("addr", "", "use the Redis server at this loopback host:port instead of starting redis-server (the run resets its own keys in -lock-db and -store-db)")
	etcdURL := fs.String("etcd", "", "etcd designs: use the etcd at this loopback client URL instead of an embedded one (the run deletes lock/order-42)")
	lockDB := fs.Int("lock-db", 0, "database of lock:order-42 and lock:fence (0 to 15)")
	storeDB := fs.Int("store-db", 1, "database of the counter (0 to 15, not -lock-db)")
	client := fs.String("client", reality.ClientReference, "the lock client: "+strings.Join(reality.ClientNames, ", ")+" (a library plays the schedule through its public API; a fenced Redis design takes its token from INCR after the library's lock, and etcd-mutex plays a Redis design on etcd)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: explore reproduce [flags] FILE   (a scenario file such as model/scenarios/demo2.txt, demo1…demo6, or a counterexample file)")
		fmt.Fprintln(stderr, "exit 0: model and reality agree; 1: they differ; 2: bad input; 3: not judged (the design cannot be played for real, no server, the machine could not keep the timing, or SIGINT/SIGTERM stopped the run)")
		fs.PrintDefaults()
	}
	file, code, ok := parseFileAndFlags(fs, args, stdout)
	if !ok {
		return code
	}
	if file == "" {
		return failUsage(stdout, stderr, "reproduce", *asJSON, "want one scenario or counterexample file (e.g. model/scenarios/demo2.txt)")
	}
	if *tick != 0 {
		if err := reality.CheckTick(*tick); err != nil {
			return failUsage(stdout, stderr, "reproduce", *asJSON, "-"+err.Error())
		}
	}
	if *retries < 0 || *retries > 5 {
		return failUsage(stdout, stderr, "reproduce", *asJSON, fmt.Sprintf("-retries %d: want 0 to 5", *retries))
	}
	if *lockDB < 0 || *lockDB > 15 || *storeDB < 0 || *storeDB > 15 || *lockDB == *storeDB {
		return failUsage(stdout, stderr, "reproduce", *asJSON, fmt.Sprintf("-lock-db %d, -store-db %d: want two different databases from 0 to 15", *lockDB, *storeDB))
	}
	if *addr != "" {
		if err := reality.CheckLoopback(*addr); err != nil {
			return failUsage(stdout, stderr, "reproduce", *asJSON, "-addr "+err.Error())
		}
	}
	text, err := readScenario(file)
	if err != nil {
		return failUsage(stdout, stderr, "reproduce", *asJSON, err.Error())
	}
	in, err := reality.Load(file, text)
	if err == nil {
		var how string
		if in, how, err = reality.ForClient(in, *client); err == nil && how != "" {
			fmt.Fprintf(stderr, "explore reproduce: for -client %s the design becomes %s (%s)\n", *client, in.Design.Name(), how)
		}
	}
	if _, ok := reality.IsNotPlayable(err); ok {
		// a sound file that real runs do not play: not judged, not bad input
		msg := oneLine(err.Error())
		fmt.Fprintln(stderr, "explore reproduce:", msg)
		if *asJSON {
			writeJSONError(stdout, msg)
		}
		return exitIncomplete
	}
	if err != nil {
		return failUsage(stdout, stderr, "reproduce", *asJSON, err.Error())
	}
	if *tick == 0 {
		*tick = reality.DefaultTickFor(&in.Design)
	} else if err := reality.CheckTickFor(&in.Design, *tick); err != nil {
		return failUsage(stdout, stderr, "reproduce", *asJSON, "-"+err.Error())
	}
	if *etcdURL != "" {
		u, err := url.Parse(*etcdURL)
		if err == nil && u.Scheme != "http" {
			err = fmt.Errorf("scheme %q", u.Scheme)
		}
		if err == nil {
			err = reality.CheckLoopback(u.Host)
		}
		if err != nil {
			return failUsage(stdout, stderr, "reproduce", *asJSON, fmt.Sprintf("-etcd %q: want a loopback client URL such as http://127.0.0.1:2379 (%v)", clip(*etcdURL), err))
		}
	}

	ctx, signalled, stopSignals := interruptible()
	defer stopSignals()
	// notJudged reports a run that gave no comparison: a signal's stop
	// names the signal (the servers started so far are stopped by the
	// deferred calls), anything else says what failed. Exit 3 either way.
	notJudged := func(err error) int {
		if sig := signalled(); sig != "" {
			return failInterrupted(stdout, stderr, "reproduce", *asJSON, sig, nil, "the run was not played to its end: not judged")
		}
		msg := oneLine(err.Error())
		fmt.Fprintln(stderr, "explore reproduce:", msg)
		if *asJSON {
			writeJSONError(stdout, msg)
		}
		return exitIncomplete
	}
	server := *addr
	label := "Redis at " + *addr
	if *addr == "" {
		bin, err := reality.FindServer()
		if err != nil {
			return notJudged(fmt.Errorf("%v (or give -addr of a running server)", err))
		}
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		srv, err := reality.StartServer(sctx, bin)
		cancel()
		if err != nil {
			return notJudged(err)
		}
		defer srv.Stop()
		server = srv.Addr()
		label = fmt.Sprintf("redis-server %s on %s", srv.Version(), srv.Addr())
	}
	var lockSrv *reality.Server
	var nodes []*reality.Server
	if in.Design.Lock == model.LockRedlock {
		// Redlock: a redis-server of its own per node
		bin, err := reality.FindServer()
		if err != nil {
			return notJudged(fmt.Errorf("Redlock needs a redis-server per node: %v", err))
		}
		for k := 0; k < in.Design.Nodes; k++ {
			sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			n, err := reality.StartServerPersist(sctx, bin, in.Design.Persist == 1)
			cancel()
			if err != nil {
				return notJudged(fmt.Errorf("Redlock node %d: %v", k+1, err))
			}
			defer n.Stop()
			nodes = append(nodes, n)
		}
		label += fmt.Sprintf("; Redlock: %d redis-servers of its own from %s", len(nodes), nodes[0].Addr())
	} else if in.Design.NodeCrashes > 0 {
		// a lock node of its own, which the schedule's node-crash steps kill
		bin, err := reality.FindServer()
		if err != nil {
			return notJudged(fmt.Errorf("node crashes need a redis-server of their own: %v", err))
		}
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		lockSrv, err = reality.StartServerPersist(sctx, bin, in.Design.Persist == 1)
		cancel()
		if err != nil {
			return notJudged(fmt.Errorf("lock node: %v", err))
		}
		defer lockSrv.Stop()
		label += fmt.Sprintf("; lock node: redis-server %s on %s", lockSrv.Version(), lockSrv.Addr())
	}
	endpoint := *etcdURL
	if (in.Design.Lock == model.LockEtcd || in.Design.Lock == model.LockEtcdMutex) && endpoint == "" {
		ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
		e, err := reality.StartEtcd(ectx)
		cancel()
		if err != nil {
			return notJudged(err)
		}
		defer e.Stop()
		endpoint = e.Endpoint()
	}
	var c *reality.Comparison
	for attempt := 0; ; attempt++ {
		c, err = reality.Reproduce(ctx, in, label, reality.Options{Addr: server, Etcd: endpoint, Lock: lockSrv, Nodes: nodes, Client: *client, Tick: *tick, LockDB: *lockDB, StoreDB: *storeDB})
		if err != nil {
			return notJudged(err)
		}
		if !c.Late || attempt == *retries || 2**tick > reality.MaxTick || signalled() != "" {
			break
		}
		next := 2 * *tick
		if in.Design.Lock == model.LockEtcdMutex { // its keep-alives fit 2s ticks only
			next = *tick
		}
		fmt.Fprintf(stderr, "explore reproduce: void run at tick %v (step %d answered %.1fms into its tick, window %.1fms); again at %v\n",
			*tick, c.LateSeq, c.LatestMS, c.WindowMS, next)
		*tick = next
	}
	if *asJSON {
		out, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return notJudged(err)
		}
		fmt.Fprintf(stdout, "%s\n", out)
	} else {
		fmt.Fprint(stdout, c.Text())
	}
	return reproduceExit(c)
}

// reproduceExit maps a comparison to the exit code.
func reproduceExit(c *reality.Comparison) int {
	switch {
	case c.Late:
		return exitIncomplete
	case c.Agree:
		return exitOK
	}
	return exitViolated
}

// parseFileAndFlags parses flags given before or after the one FILE
// argument. file is "" when none was given.
func parseFileAndFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (file string, code int, ok bool) {
	if code, ok := parseFlagsJSON(fs, args, stdout); !ok {
		return "", code, false
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return "", 0, true
	}
	file = rest[0]
	if code, ok := parseFlagsJSON(fs, rest[1:], stdout); !ok {
		return "", code, false
	}
	if fs.NArg() > 0 {
		return "", failUsage(stdout, fs.Output(), "reproduce", wantsJSON(args), fmt.Sprintf("one FILE only, got also %q", clip(fs.Arg(0)))), false
	}
	return file, 0, true
}

// readScenario reads FILE, or, when no such file exists, the demo it names
// (demo2, or 2).
func readScenario(name string) (string, error) {
	data, err := readLimited(name, reproduceMaxBytes, "a counterexample or scenario file")
	if err == nil {
		return string(data), nil
	}
	if errors.Is(err, os.ErrNotExist) {
		if dm, derr := model.LoadDemo(name); derr == nil {
			return dm.Scenario.Format(), nil
		}
		return "", fmt.Errorf("%s: no such file (and not a demo: demo1 … demo6)", clip(name))
	}
	return "", err
}
