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
	"os/signal"
	"strings"
	"time"

	"lockcheck/model"
	"lockcheck/reality"
)

func init() {
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
		fmt.Fprintln(stderr, "exit 0: model and reality agree; 1: they differ; 2: bad input; 3: not judged (no server, or the machine could not keep the timing)")
		fs.PrintDefaults()
	}
	file, code, ok := parseFileAndFlags(fs, args)
	if !ok {
		return code
	}
	if file == "" {
		fmt.Fprintln(stderr, "explore reproduce: want one scenario or counterexample file (e.g. model/scenarios/demo2.txt)")
		return exitUsage
	}
	if *tick != 0 {
		if err := reality.CheckTick(*tick); err != nil {
			fmt.Fprintln(stderr, "explore reproduce: -"+err.Error())
			return exitUsage
		}
	}
	if *retries < 0 || *retries > 5 {
		fmt.Fprintf(stderr, "explore reproduce: -retries %d: want 0 to 5\n", *retries)
		return exitUsage
	}
	if *lockDB < 0 || *lockDB > 15 || *storeDB < 0 || *storeDB > 15 || *lockDB == *storeDB {
		fmt.Fprintf(stderr, "explore reproduce: -lock-db %d, -store-db %d: want two different databases from 0 to 15\n", *lockDB, *storeDB)
		return exitUsage
	}
	if *addr != "" {
		if err := reality.CheckLoopback(*addr); err != nil {
			fmt.Fprintln(stderr, "explore reproduce: -addr", err)
			return exitUsage
		}
	}
	text, err := readScenario(file)
	if err != nil {
		fmt.Fprintln(stderr, "explore reproduce:", err)
		return exitUsage
	}
	in, err := reality.Load(file, text)
	if err != nil {
		fmt.Fprintln(stderr, "explore reproduce:", err)
		return exitUsage
	}
	in, how, err := reality.ForClient(in, *client)
	if err != nil {
		fmt.Fprintln(stderr, "explore reproduce:", err)
		return exitUsage
	}
	if how != "" {
		fmt.Fprintf(stderr, "explore reproduce: for -client %s the design becomes %s (%s)\n", *client, in.Design.Name(), how)
	}
	if *tick == 0 {
		*tick = reality.DefaultTickFor(&in.Design)
	} else if err := reality.CheckTickFor(&in.Design, *tick); err != nil {
		fmt.Fprintln(stderr, "explore reproduce: -"+err.Error())
		return exitUsage
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
			fmt.Fprintf(stderr, "explore reproduce: -etcd %q: want a loopback client URL such as http://127.0.0.1:2379 (%v)\n", clip(*etcdURL), err)
			return exitUsage
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	server := *addr
	label := "Redis at " + *addr
	if *addr == "" {
		bin, err := reality.FindServer()
		if err != nil {
			fmt.Fprintln(stderr, "explore reproduce:", err, "(or give -addr of a running server)")
			return exitIncomplete
		}
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		srv, err := reality.StartServer(sctx, bin)
		cancel()
		if err != nil {
			fmt.Fprintln(stderr, "explore reproduce:", err)
			return exitIncomplete
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
			fmt.Fprintln(stderr, "explore reproduce: Redlock needs a redis-server per node:", err)
			return exitIncomplete
		}
		for k := 0; k < in.Design.Nodes; k++ {
			sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			n, err := reality.StartServerPersist(sctx, bin, in.Design.Persist == 1)
			cancel()
			if err != nil {
				fmt.Fprintf(stderr, "explore reproduce: Redlock node %d: %v\n", k+1, err)
				return exitIncomplete
			}
			defer n.Stop()
			nodes = append(nodes, n)
		}
		label += fmt.Sprintf("; Redlock: %d redis-servers of its own from %s", len(nodes), nodes[0].Addr())
	} else if in.Design.NodeCrashes > 0 {
		// a lock node of its own, which the schedule's node-crash steps kill
		bin, err := reality.FindServer()
		if err != nil {
			fmt.Fprintln(stderr, "explore reproduce: node crashes need a redis-server of their own:", err)
			return exitIncomplete
		}
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		lockSrv, err = reality.StartServerPersist(sctx, bin, in.Design.Persist == 1)
		cancel()
		if err != nil {
			fmt.Fprintln(stderr, "explore reproduce: lock node:", err)
			return exitIncomplete
		}
		defer lockSrv.Stop()
		label += fmt.Sprintf("; lock node: redis-server %s on %s", lockSrv.Version(), lockSrv.Addr())
	}
	endpoint := *etcdURL
	if in.Design.Lock == model.LockEtcd && endpoint == "" {
		ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
		e, err := reality.StartEtcd(ectx)
		cancel()
		if err != nil {
			fmt.Fprintln(stderr, "explore reproduce:", err)
			return exitIncomplete
		}
		defer e.Stop()
		endpoint = e.Endpoint()
	}
	var c *reality.Comparison
	for attempt := 0; ; attempt++ {
		c, err = reality.Reproduce(ctx, in, label, reality.Options{Addr: server, Etcd: endpoint, Lock: lockSrv, Nodes: nodes, Client: *client, Tick: *tick, LockDB: *lockDB, StoreDB: *storeDB})
		if err != nil {
			fmt.Fprintln(stderr, "explore reproduce:", err)
			return exitIncomplete
		}
		if !c.Late || attempt == *retries || 2**tick > reality.MaxTick {
			break
		}
		fmt.Fprintf(stderr, "explore reproduce: void run at tick %v (step %d answered %.1fms into its tick, window %.1fms); again at %v\n",
			*tick, c.LateSeq, c.LatestMS, c.WindowMS, 2**tick)
		*tick *= 2
	}
	if *asJSON {
		out, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, "explore reproduce:", err)
			return exitIncomplete
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
func parseFileAndFlags(fs *flag.FlagSet, args []string) (file string, code int, ok bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return "", code, false
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return "", 0, true
	}
	file = rest[0]
	if code, ok := parseFlags(fs, rest[1:]); !ok {
		return "", code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "explore reproduce: one FILE only, got also %q\n", clip(fs.Arg(0)))
		return "", exitUsage, false
	}
	return file, 0, true
}

// readScenario reads FILE, or, when no such file exists, the demo it names
// (demo2, or 2).
func readScenario(name string) (string, error) {
	data, err := readLimited(name, reproduceMaxBytes)
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
