package reality

import (
	"context"
	"embed"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"lockcheck/model"
)

// The library table: each lock client under each fault, with each kind of
// storage, played for real next to the model. Its schedules are the
// seed's demos and the Redlock stories, adapted to the client by
// ForClient.
var (
	tableClients = []string{ClientReference, ClientRedsync, ClientRedislock, ClientEtcdMutex, ClientZkLock}
	everyClient  = []string{ClientReference, ClientRedsync, ClientRedislock, ClientEtcdMutex} // a row's nil clients: the Redis and etcd ones
	zkLockers    = []string{ClientReference, ClientZkLock}
	redlockers   = []string{ClientReference, ClientRedsync}
	redisClients = []string{ClientReference, ClientRedsync, ClientRedislock}
	checkers     = []string{ClientReference, ClientRedsync} // redsync's check=acquire and extend=setnx
	tableCases   = []struct {
		fault, storage string
		name           string   // a demo or story of model/scenarios, or a file of reality/testdata
		clients        []string // nil: everyClient
	}{
		{"pause longer than the TTL", "no fencing", "demo2", nil},
		{"pause longer than the TTL", "fencing token checked on writes", "demo3", nil},
		{"pause longer than the TTL", "fencing token checked on reads and writes", "demo6", nil},
		{"slow job (work outlasts the TTL)", "no fencing", "demo5", nil},
		{"crash while holding the lock", "no fencing", "reality/testdata/crash-holder.txt", redisClients},
		{"crash while holding the lock, after its lease was renewed twice (etcd's Session keeps it alive every TTL/3)", "no fencing", "reality/testdata/crash-renewed.txt", []string{ClientEtcdMutex}},
		{"acquire reply held in the network for 8 of the TTL's 10 ticks", "no fencing", "acquire-reply-delay", nil},
		{"acquire reply held in the network for a whole TTL", "no fencing", "reality/testdata/acquire-reply-ttl.txt", nil},
		// redsync's own options, each against the model's design that has it
		{"acquire reply held for 9 ticks, validity checked once at the acquire (check=acquire: redsync's Mutex.lockContext)", "no fencing", "acquire-validity", checkers},
		{"acquire reply held for a whole TTL, validity checked once at the acquire (check=acquire)", "no fencing", "reality/testdata/acquire-reply-ttl-check.txt", checkers},
		{"pause with a watchdog renewing every 3 ticks (redsync Extend, redislock Refresh)", "no fencing", "watchdog-pause", redisClients},
		{"pause with a watchdog that sets a missing key again (extend=setnx: redsync WithSetNXOnExtend)", "no fencing", "extend-setnx", checkers},
		{"a release lost on the way to Redis, sent again after the timeout (lose=request)", "no fencing", "release-retry", redisClients},
		{"Redlock, 5 redis-servers: pause after the vote", "no fencing", "redlock-pause", redlockers},
		{"Redlock, 5 redis-servers: node killed and restarted without AOF", "no fencing", "redlock-restart", redlockers},
		{"Redlock, 5 redis-servers: node killed and restarted with AOF", "no fencing", "reality/testdata/redlock-restart-aof.txt", redlockers},
		{"ZooKeeper: the session expires during a pause", "no fencing", "reality/testdata/zookeeper-pause.txt", zkLockers},
		{"ZooKeeper: crash while holding the lock, the session expires", "no fencing", "reality/testdata/zookeeper-crash.txt", zkLockers},
		{"ZooKeeper: slow job (work outlasts the session timeout; the heartbeats go on)", "no fencing", "reality/testdata/zookeeper-slow.txt", zkLockers},
		{"ZooKeeper: the session expires during a pause", "fencing token (the node's sequence number) checked on reads and writes", "zookeeper-session", []string{ClientReference}},
		{"PostgreSQL row lock (SELECT … FOR UPDATE): pause, the idle session killed", "counter updated inside the lock's transaction", "db-inside", []string{ClientReference}},
		{"PostgreSQL row lock (SELECT … FOR UPDATE): pause, the idle session killed", "counter written outside the lock's transaction", "db-outside", []string{ClientReference}},
		{"primary + replica: failover before the key is replicated", "fencing token checked on reads and writes", "replica-failover", redisClients},
		{"primary + replica: failover after a replicate step", "fencing token checked on reads and writes", "reality/testdata/replica-replicated.txt", redisClients},
	}
)

//go:embed testdata/acquire-reply-ttl.txt testdata/acquire-reply-ttl-check.txt testdata/crash-holder.txt testdata/crash-renewed.txt testdata/redlock-restart-aof.txt testdata/replica-replicated.txt testdata/zookeeper-pause.txt testdata/zookeeper-crash.txt testdata/zookeeper-slow.txt
var tableFiles embed.FS

// tablePairs is how many etcd rows of the library table play at once,
// each on a database pair of its own.
const tablePairs = 5

// TableCommand is the command that prints the table.
const TableCommand = "go run ./cmd/explore libraries"

// LibRow is one row of the library table.
type LibRow struct {
	Client  string
	Fault   string
	Storage string
	Name    string // the demo, story or file played
	How     string // how the schedule was adapted to the client ("" as it is)
	// NotPlayed says why the client cannot play the schedule ("": played)
	NotPlayed string
	In        *Input
	C         *Comparison
	// Known is the documented difference the row shows, "" when model and
	// reality agree.
	Known string
}

// Command reruns the row.
func (r *LibRow) Command() string {
	return fmt.Sprintf("explore reproduce -client %s %s", r.Client, r.Name)
}

// LibraryRows lists the table's rows with their inputs (not yet played).
func LibraryRows() ([]*LibRow, error) {
	var rows []*LibRow
	for _, cl := range tableClients {
		for _, tc := range tableCases {
			if clients := tc.clients; clients == nil && !slices.Contains(everyClient, cl) || clients != nil && !slices.Contains(clients, cl) {
				continue
			}
			var text string
			if data, err := tableFiles.ReadFile(strings.TrimPrefix(tc.name, "reality/")); err == nil {
				text = string(data)
			} else {
				dm, err := model.LoadDemo(tc.name)
				if err != nil {
					return nil, err
				}
				text = dm.Scenario.Format()
			}
			in, err := Load(tc.name, text)
			if err != nil {
				return nil, err
			}
			row := &LibRow{Client: cl, Fault: tc.fault, Storage: tc.storage, Name: tc.name}
			if row.In, row.How, err = ForClient(in, cl); err != nil {
				np, ok := IsNotPlayable(err)
				if !ok { // not a client's limit: a broken row
					return nil, err
				}
				row.NotPlayed, row.In = tc.name+": "+np.Because, in
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// TableEnv is where the table's runs happen.
type TableEnv struct {
	Redis  string // a Redis server for the storage and the Redis locks
	Server string // its description, for the reports
	// StartEtcd starts an etcd of the row's own (etcd rows run side by
	// side, each on its own member); stop is called when the row is done.
	StartEtcd func(ctx context.Context) (endpoint string, stop func(), err error)
	Tick      time.Duration // the Redis rows' first tick (0: DefaultTick)
	Progress  io.Writer     // one line per row played (nil: none)
}

// RunLibraryTable plays every row. Redis rows run one after the other on
// database pairs (0,1); etcd rows run side by side, each with an etcd of
// its own and databases (2k, 2k+1). A void run (the machine missed the
// timing) is played again with a doubled tick, up to four times in all.
func RunLibraryTable(ctx context.Context, env TableEnv) ([]*LibRow, error) {
	rows, err := LibraryRows()
	if err != nil {
		return nil, err
	}
	tick := env.Tick
	if tick == 0 {
		tick = DefaultTick
	}
	var mu sync.Mutex
	progress := func(r *LibRow) {
		if env.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(env.Progress, "libraries: %-10s %-16s %s\n", r.Client, r.Name, r.C.Verdict())
	}
	play := func(r *LibRow, opts Options) error {
		if r.In.Design.Lock == model.LockRedlock { // five redis-servers of the row's own
			bin, err := FindServer()
			if err != nil {
				return err
			}
			for k := 0; k < r.In.Design.Nodes; k++ {
				n, err := StartServerPersist(ctx, bin, r.In.Design.Persist == 1)
				if err != nil {
					return fmt.Errorf("%s: node %d: %v", r.Command(), k+1, err)
				}
				defer n.Stop()
				opts.Nodes = append(opts.Nodes, n)
			}
		}
		for attempt := 1; ; attempt++ {
			c, err := Reproduce(ctx, r.In, env.Server, opts)
			if err != nil {
				return fmt.Errorf("%s: %v", r.Command(), err)
			}
			r.C = c
			if !c.Late || attempt == 4 {
				break
			}
			opts.Tick *= 2
		}
		if r.C.Late {
			return fmt.Errorf("%s: four void runs, the last at a %v tick: the machine could not keep the timing", r.Command(), opts.Tick)
		}
		r.Known = r.C.Known
		progress(r)
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rows))
	// the etcd rows share tablePairs database pairs, (2,3) to (10,11): the
	// tests use 12 to 15 alongside the table
	pairs := make(chan int, tablePairs)
	for p := 1; p <= tablePairs; p++ {
		pairs <- p
	}
	for k, r := range rows {
		if r.In.Design.Lock != model.LockEtcd || r.NotPlayed != "" {
			continue
		}
		opts := Options{Addr: env.Redis, Client: r.Client, Tick: EtcdTick}
		wg.Add(1)
		go func(k int, r *LibRow, opts Options) {
			defer wg.Done()
			pair := <-pairs
			defer func() { pairs <- pair }()
			opts.LockDB, opts.StoreDB = 2*pair, 2*pair+1
			endpoint, stop, err := env.StartEtcd(ctx)
			if err != nil {
				errs[k] = err
				return
			}
			defer stop()
			opts.Etcd = endpoint
			errs[k] = play(r, opts)
		}(k, r, opts)
	}
	for k, r := range rows {
		if r.In.Design.Lock == model.LockEtcd || r.NotPlayed != "" {
			continue
		}
		opts := Options{Addr: env.Redis, Client: r.Client, Tick: tick, LockDB: 0, StoreDB: 1}
		if r.In.Design.Lock == model.LockZooKeeper {
			// ZooKeeper ends a session by its session tracker's timer,
			// which a loaded machine runs late: a doubled first tick
			// (the tests' too: reproduce)
			opts.Tick = 2 * tick
		}
		errs[k] = play(r, opts)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// knownDifference names the documented difference a row shows, or ""
// when model and reality agree. A difference is documented only when it
// is exactly the known one; anything else is left for the caller to see
// (LibRow.C.Agree false and Known "").
func knownDifference(c *Comparison) string {
	if c.Agree {
		return ""
	}
	if c.Client == ClientEtcdMutex && c.d.Fence != model.FenceNone && tokensOnly(c) {
		return "token values: each refused TryLock puts and deletes a key of its own (two revisions), so the create revisions that serve as tokens run ahead of the model's; their order, every accept and reject, the key's holder and the outcome are the model's"
	}
	if c.Client == ClientRedsync && c.d.Lock == model.LockRedlock && redlockAhead(c) {
		return "redsync's TryLock sends its SET NX PX to every node at once, at the attempt's first step, where the model sends one per step: between an attempt's first and last step the nodes run ahead of the model; each node's answer, the votes, the decision and every step after are the model's"
	}
	return ""
}

// redlockAhead reports whether model and reality differ only in the
// nodes' keys (and so the majority's holder) after acquire steps that are
// not an attempt's last: a library that asks every node at once.
func redlockAhead(c *Comparison) bool {
	if c.Late {
		return false
	}
	for k := range c.run.Steps {
		st := &c.run.Steps[k]
		mv, rv := modelView(&c.d, st), realView(&c.play.Steps[k+1])
		if mv == rv {
			continue
		}
		if st.Action.Kind != model.ActAcquire || mv.Node == c.d.Nodes-1 {
			return false
		}
		mv.Nodes, mv.After, rv.Nodes, rv.After = "", 0, "", 0
		if mv != rv {
			return false
		}
	}
	for _, d := range c.Differences {
		if !strings.HasPrefix(d, "step ") {
			return false
		}
	}
	return true
}

// tokensOnly reports whether every difference between the model and
// reality is in token numbers alone: equal views once tokens are set
// aside, every write and read accepted or rejected alike, the same
// counter, writes, ✗ and properties, and no timing trouble.
func tokensOnly(c *Comparison) bool {
	if c.Late {
		return false
	}
	for k := range c.run.Steps {
		mv, rv := modelView(&c.d, &c.run.Steps[k]), realView(&c.play.Steps[k+1])
		mv.Token, mv.MaxTok, rv.Token, rv.MaxTok = 0, 0, 0, 0
		if mv != rv {
			return false
		}
	}
	for _, d := range c.Differences {
		if !strings.HasPrefix(d, "step ") {
			return false // an outcome differs: counter, writes, a property
		}
	}
	return true
}

// rowTold is what the library told the late client: the one that acted
// without the key first (✗), at its release, the first call after its
// pause or its work; the reference client's release reply otherwise.
func rowTold(r *LibRow) string {
	c := r.C
	if len(c.Real.Unsafe) == 0 {
		return "—"
	}
	late, from := c.Real.Unsafe[0].Client, c.Real.Unsafe[0].Seq
	for k := range c.Steps {
		sp := &c.Steps[k]
		ob := &c.play.Steps[k+1]
		if model.ClientName(int(ob.Action.Client)) != late || ob.Action.Kind.IsFault() || ob.Seq < from {
			continue
		}
		if ob.Result == model.ResRejected && ob.Took != model.ActRelease { // the storage or the database said no
			return fmt.Sprintf("%s: its late request failed: %s", late, sp.Real)
		}
		if ob.Took != model.ActRelease {
			continue
		}
		if sp.Told != "" {
			return fmt.Sprintf("%s: nothing until its release: `%s`", late, sp.Told)
		}
		return fmt.Sprintf("%s: nothing until its release: %s", late, sp.Real)
	}
	return late + ": nothing"
}

func outcomeText(s *Side) string {
	switch {
	case !s.AllEnded:
		return "jobs unfinished"
	case s.LostUpdate:
		return fmt.Sprintf("lost update (counter %d after %d accepted writes)", s.Counter, s.Accepted)
	case s.Rejected+s.ReadsRejected > 0:
		return fmt.Sprintf("no lost update: %d late %s rejected (counter %d)", s.Rejected+s.ReadsRejected, plural(s.Rejected+s.ReadsRejected, "request", "requests"), s.Counter)
	}
	return fmt.Sprintf("no lost update (counter %d)", s.Counter)
}

func unsafeText(s *Side) string {
	if len(s.Unsafe) == 0 {
		return ""
	}
	return fmt.Sprintf(", ✗ %s at t=%d", s.Unsafe[0].Client, s.Unsafe[0].Tick)
}

// FormatLibraryTable is the table in Markdown, one row per client, fault
// and storage.
func FormatLibraryTable(rows []*LibRow) string {
	var b strings.Builder
	b.WriteString("| client | fault | storage | real outcome | model's verdict | agree | what the client was told | rerun |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.NotPlayed != "" {
			fmt.Fprintf(&b, "| %s | %s | %s | not played: %s | | | | |\n", r.Client, r.Fault, r.Storage, r.NotPlayed)
			continue
		}
		agree := "yes"
		switch {
		case r.Known != "":
			agree = "documented difference: " + r.Known
		case !r.C.Agree:
			agree = fmt.Sprintf("**no**: %s", strings.Join(r.C.Differences, "; "))
		}
		storage := r.Storage
		if r.How != "" {
			storage += " (" + r.How + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s%s | %s%s | %s | %s | `%s` |\n",
			r.Client, r.Fault, storage,
			outcomeText(&r.C.Real), unsafeText(&r.C.Real),
			outcomeText(&r.C.Model), unsafeText(&r.C.Model),
			agree, rowTold(r), r.Command())
	}
	return b.String()
}

// README markers around the generated table.
const (
	TableBegin = "<!-- libraries table: generated by " + TableCommand + " -write docs/guide.md; do not edit -->"
	TableEnd   = "<!-- end of libraries table -->"
)

// TableSection returns the table between the markers in a README.
func TableSection(readme string) (string, error) {
	i := strings.Index(readme, TableBegin)
	j := strings.Index(readme, TableEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("no libraries table: want the lines %q and %q around it", TableBegin, TableEnd)
	}
	return strings.TrimSpace(readme[i+len(TableBegin) : j]), nil
}

// ReplaceTable puts table between the README's markers.
func ReplaceTable(readme, table string) (string, error) {
	if _, err := TableSection(readme); err != nil {
		return "", err
	}
	i := strings.Index(readme, TableBegin) + len(TableBegin)
	j := strings.Index(readme, TableEnd)
	return readme[:i] + "\n" + strings.TrimSpace(table) + "\n" + readme[j:], nil
}
