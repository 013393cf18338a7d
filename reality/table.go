package reality

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"lockcheck/model"
)

// The library table: each lock client under each fault, with each kind of
// storage, played for real next to the model. Its schedules are the
// seed's demos, adapted to the client by ForClient.
var (
	tableClients = []string{ClientReference, ClientRedsync, ClientRedislock, ClientEtcdMutex}
	tableCases   = []struct {
		fault, storage string
		demo           int
	}{
		{"pause longer than the TTL", "no fencing", 2},
		{"pause longer than the TTL", "fencing token checked on writes", 3},
		{"pause longer than the TTL", "fencing token checked on reads and writes", 6},
		{"slow job (work outlasts the TTL)", "no fencing", 5},
	}
)

// TableCommand is the command that prints the table.
const TableCommand = "go run ./cmd/explore libraries"

// LibRow is one row of the library table.
type LibRow struct {
	Client  string
	Fault   string
	Storage string
	Demo    int
	How     string // how the demo was adapted to the client ("" as it is)
	In      *Input
	C       *Comparison
	// Known is the documented difference the row shows, "" when model and
	// reality agree.
	Known string
}

// Command reruns the row.
func (r *LibRow) Command() string {
	return fmt.Sprintf("explore reproduce -client %s demo%d", r.Client, r.Demo)
}

// LibraryRows lists the table's rows with their inputs (not yet played).
func LibraryRows() ([]*LibRow, error) {
	var rows []*LibRow
	for _, cl := range tableClients {
		for _, tc := range tableCases {
			dm, err := model.LoadDemo(fmt.Sprint(tc.demo))
			if err != nil {
				return nil, err
			}
			in, err := Load(fmt.Sprintf("demo%d", tc.demo), dm.Scenario.Format())
			if err != nil {
				return nil, err
			}
			in, how, err := ForClient(in, cl)
			if err != nil {
				return nil, err
			}
			rows = append(rows, &LibRow{Client: cl, Fault: tc.fault, Storage: tc.storage, Demo: tc.demo, How: how, In: in})
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
		v := r.C.Verdict()
		if r.Known != "" {
			v = "documented difference: " + r.Known
		}
		fmt.Fprintf(env.Progress, "libraries: %-10s demo%d  %s\n", r.Client, r.Demo, v)
	}
	play := func(r *LibRow, opts Options) error {
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
		r.Known = knownDifference(r)
		progress(r)
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rows))
	pair := 1
	for k, r := range rows {
		if r.In.Design.Lock != model.LockEtcd {
			continue
		}
		if 2*pair+1 >= 16 {
			return nil, fmt.Errorf("library table: more etcd rows than database pairs")
		}
		opts := Options{Addr: env.Redis, Client: r.Client, Tick: EtcdTick, LockDB: 2 * pair, StoreDB: 2*pair + 1}
		pair++
		wg.Add(1)
		go func(k int, r *LibRow, opts Options) {
			defer wg.Done()
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
		if r.In.Design.Lock == model.LockEtcd {
			continue
		}
		errs[k] = play(r, Options{Addr: env.Redis, Client: r.Client, Tick: tick, LockDB: 0, StoreDB: 1})
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
func knownDifference(r *LibRow) string {
	c := r.C
	if c.Agree {
		return ""
	}
	if r.Client == ClientEtcdMutex && r.In.Design.Fence != model.FenceNone && tokensOnly(c) {
		return "token values: each refused TryLock puts and deletes a key of its own (two revisions), so the create revisions that serve as tokens run ahead of the model's; their order, every accept and reject, the key's holder and the outcome are the model's"
	}
	if r.Client == ClientEtcdMutex && sessionKeptAlive(c) {
		return "the Session renews its lease every TTL/3 by itself: a client that is slow but running keeps its key where the model's lease (no renew steps) expires, so nobody acts without the key; from that tick on the schedule's steps no longer fit reality"
	}
	return ""
}

// sessionKeptAlive reports whether model and reality part first at a tick
// where the model's key expired from a client that was running (not
// paused), and reality still shows that client's key: an etcd session's
// keep-alive at work. Every step before must agree.
func sessionKeptAlive(c *Comparison) bool {
	pausedUntil := map[uint8]int{}
	for k := range c.run.Steps {
		st := &c.run.Steps[k]
		ob := &c.play.Steps[k+1]
		if st.Action.Kind == model.ActPause {
			pausedUntil[st.Action.Client] = ob.Tick + int(st.Action.Arg)
		}
		mv, rv := modelView(st), realView(ob)
		if mv == rv {
			continue
		}
		if st.Action.Kind != model.ActTick || mv.After != HolderNone || rv.After < 0 {
			return false
		}
		prev := realView(&c.play.Steps[k])
		return prev.After == rv.After && pausedUntil[uint8(rv.After)] <= ob.Tick
	}
	return false
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
		mv, rv := modelView(&c.run.Steps[k]), realView(&c.play.Steps[k+1])
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
	late := c.Real.Unsafe[0].Client
	for k := range c.Steps {
		sp := &c.Steps[k]
		ob := &c.play.Steps[k+1]
		if model.ClientName(int(ob.Action.Client)) != late || ob.Action.Kind.IsFault() || ob.Took != model.ActRelease {
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
	TableBegin = "<!-- libraries table: generated by " + TableCommand + " -write README.md; do not edit -->"
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
