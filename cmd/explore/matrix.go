package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"lockcheck/catalogue"
	"lockcheck/counterexamples"
	"lockcheck/explore"
	"lockcheck/linearizability"
	"lockcheck/model"
)

func init() {
	register("matrix", "sweep the design catalogue: one row per design, one verdict per property", runMatrix)
}

// matrixColumns are the matrix's property columns, grouped as the seed's
// last table: lock safety, data safety, liveness; then fairness, a
// sometimes-witness of designs with repeated jobs (model.Starvation).
var matrixColumns = []struct{ name, group string }{
	{"exclusive", "lock"},
	{"mutex", "lock"},
	{"own-release", "lock"},
	{"no-lost-update", "data"},
	{"linearizable", "data"},
	{"progress", "liveness"},
	{"starvation", "fairness"},
}

type matrixCell struct {
	Property string `json:"property"`
	Status   string `json:"status"`                   // holds, violated, incomplete
	Length   int    `json:"trace_length,omitempty"`   // shortest counterexample
	File     string `json:"counterexample,omitempty"` // its checked-in file, if any
	// FileSteps and FileClients are the file's trace: the fewest clients
	// that show the violation, so it may be shorter than Length
	FileSteps   int `json:"counterexample_steps,omitempty"`
	FileClients int `json:"counterexample_clients,omitempty"`
	// Vacuous: it holds, but no lock was ever lost while held (the fault
	// budget never bit); Vacuity says why (explore check gives the hint).
	Vacuous bool   `json:"vacuous"`
	Vacuity string `json:"vacuity,omitempty"`
}

type matrixRow struct {
	Design string `json:"design"`
	Name   string `json:"name"` // canonical
	Why    string `json:"why"`
	// Verdict is the row's one-line verdict (explore.Summarize): safe
	// within bounds, lock-unsafe, data-safe, loses updates, …
	Verdict  string       `json:"verdict"`
	Cells    []matrixCell `json:"cells"`
	Faults   []string     `json:"faults_used"` // fault kinds that occurred in the explored space
	Distinct int64        `json:"distinct"`
	Seconds  float64      `json:"seconds"`
}

func runMatrix(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("matrix", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	markdown := fs.Bool("markdown", false, "print the table in Markdown, each violated cell linked to its counterexample file (as in the README), instead of aligned columns for a terminal")
	workers := fs.Int("workers", 0, "search goroutines per design (0 = GOMAXPROCS)")
	maxStates := fs.Int("max-states", 20_000_000, "distinct states per design before the verdict is incomplete (1 to 500000000)")
	filter := fs.String("only", "", "only designs whose name contains this text")
	dir := fs.String("dir", "counterexamples", "folder of checked-in counterexample files, linked from violated cells")
	if code, ok := parseFlagsJSON(fs, args, stdout); !ok {
		return code
	}
	bad := func(format string, a ...any) int {
		return failUsage(stdout, stderr, "matrix", *asJSON, fmt.Sprintf(format, a...))
	}
	if fs.NArg() != 0 {
		return bad("unexpected argument %q (flags only)", clip(fs.Arg(0)))
	}
	if *asJSON && *markdown {
		return bad("-json and -markdown: give one of them")
	}
	if *workers < 0 || *workers > 256 {
		return bad("-workers %d: want 0 (all cores) to 256", *workers)
	}
	if *maxStates < 1 || *maxStates > 500_000_000 {
		return bad("-max-states %d: want 1 to 500000000", *maxStates)
	}
	var entries []catalogue.Entry
	for _, e := range catalogue.Entries {
		if strings.Contains(e.Name, *filter) {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return bad("no catalogue design contains %q (see 'explore designs')", clip(*filter))
	}
	start := time.Now()
	var rows []matrixRow
	code := exitOK
	for k, e := range entries {
		d, err := model.ParseDesign(e.Name)
		if err != nil {
			return bad("catalogue: %v", err)
		}
		t0 := time.Now()
		rep, err := explore.Check(explore.Config{Design: d, Bounds: explore.Bounds{Symmetry: true, Workers: *workers, MaxStates: *maxStates}})
		if err != nil {
			return bad("%s: %v", e.Name, err)
		}
		row := matrixRow{Design: e.Name, Name: d.Name(), Why: e.Why, Verdict: explore.Summarize(rep).Verdict, Faults: resultFaults(explore.Result{}, rep), Distinct: rep.Stats.Distinct, Seconds: time.Since(t0).Seconds()}
		for _, col := range matrixColumns {
			cell, err := matrixVerdict(&d, rep, col.name, *dir)
			if err != nil {
				return bad("%s: %v", e.Name, err)
			}
			switch {
			case cell.Status == string(explore.Incomplete) && code == exitOK:
				code = exitIncomplete
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
		fmt.Fprintf(stderr, "[%d/%d] %s: %d states, %.1fs\n", k+1, len(entries), e.Name, rep.Stats.Distinct, row.Seconds)
	}
	if *asJSON {
		out := struct {
			Rows    []matrixRow `json:"rows"`
			Seconds float64     `json:"seconds"`
		}{rows, time.Since(start).Seconds()}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			if !outputLost(stdout) { // else run says so, once
				fmt.Fprintln(stderr, "explore matrix:", err)
			}
			return exitUsage
		}
		return code
	}
	if *markdown {
		writeMatrixMarkdown(stdout, rows)
	} else {
		writeMatrixTable(stdout, rows)
	}
	return code
}

// writeMatrixTable is the matrix for a terminal: aligned columns of short
// cells (the counterexample files and each row's story are in -markdown
// and -json), then what the words mean.
func writeMatrixTable(w io.Writer, rows []matrixRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"design", "verdict"}
	for _, c := range matrixColumns {
		head = append(head, c.name)
	}
	fmt.Fprintln(tw, strings.Join(append(head, "faults used", "states"), "\t"))
	for _, r := range rows {
		line := []string{r.Design, r.Verdict}
		for _, c := range r.Cells {
			line = append(line, shortCellText(c))
		}
		faults := strings.Join(r.Faults, ",")
		if faults == "" {
			faults = "none"
		}
		fmt.Fprintln(tw, strings.Join(append(line, faults, thousands(r.Distinct)), "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, l := range []string{
		"✗ N      violated, shortest counterexample N steps (check -out DIR writes it; -markdown links the files)",
		"vacuous  holds, but no lock ever expired or was lost while held: the faults never put it to the test",
		"seen N   a witness (starvation: a client still waits while another finished); –: one job per client",
		"lock safety: exclusive, mutex, own-release; data safety: no-lost-update, linearizable (porcupine)",
	} {
		fmt.Fprintln(w, l)
	}
}

// shortCellText is a cell in a word or two, for the terminal table.
func shortCellText(c matrixCell) string {
	switch explore.Status(c.Status) {
	case explore.Violated:
		return fmt.Sprintf("✗ %d", c.Length)
	case explore.Holds:
		if c.Vacuous {
			return "vacuous"
		}
		return "holds"
	}
	return cellText(c)
}

// matrixVerdict is one cell. "linearizable" is not a state property: its
// cell is porcupine's verdict on the shortest no-lost-update counterexample
// (for these counter histories a finished run is linearizable exactly when
// no update is lost, so the search's verdict on no-lost-update stands for
// every history; porcupine confirms it on each counterexample).
func matrixVerdict(d *model.Design, rep *explore.Report, name, dir string) (matrixCell, error) {
	prop := name
	if name == "linearizable" {
		prop = "no-lost-update"
	}
	res, ok := rep.Result(prop)
	if !ok && name == model.Starvation.Name {
		return matrixCell{Property: name, Status: "not applicable"}, nil // one job per client
	}
	if !ok {
		return matrixCell{}, fmt.Errorf("no result for %s", prop)
	}
	cell := matrixCell{Property: name, Status: string(res.Status), Vacuous: res.Vacuous != "", Vacuity: res.Vacuous}
	if res.Status == explore.Seen {
		cell.Length = len(res.Trace)
	}
	if res.Status != explore.Violated {
		return cell, nil
	}
	cell.Length = len(res.Trace)
	if f := filepath.Join(dir, counterexamples.FileBase(*d, prop)+".txt"); fileExists(f) {
		cell.File = filepath.ToSlash(f)
		if data, err := os.ReadFile(f); err == nil {
			if cf, err := counterexamples.Parse(string(data)); err == nil {
				cell.FileSteps, cell.FileClients = len(cf.Trace), cf.Design.Clients
			}
		}
	}
	if name != "linearizable" {
		return cell, nil
	}
	run, err := model.Replay(d, res.Trace)
	if err != nil {
		return cell, fmt.Errorf("counterexample does not replay: %v", err)
	}
	lr, err := linearizability.CheckRun(run, linearizability.Options{Timeout: 10 * time.Second})
	if err != nil {
		return cell, err
	}
	switch lr.Verdict {
	case linearizability.Illegal:
	case linearizability.Ok:
		// the model lost an update but porcupine found an order: the two
		// drivers disagree, which is a bug to find, never a verdict to print
		return cell, fmt.Errorf("porcupine finds the no-lost-update counterexample linearizable: %s", lr.Summary)
	default:
		cell.Status = string(explore.Incomplete)
	}
	return cell, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func writeMatrixMarkdown(w io.Writer, rows []matrixRow) {
	fmt.Fprintln(w, "| design | what it shows | verdict | exclusive | mutex | own-release | no-lost-update | linearizable | progress | starvation | faults used | states |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| `%s` | %s | %s |", r.Design, r.Why, r.Verdict)
		for _, c := range r.Cells {
			fmt.Fprintf(w, " %s |", cellText(c))
		}
		faults := strings.Join(r.Faults, ", ")
		if faults == "" {
			faults = "none"
		}
		fmt.Fprintf(w, " %s | %d |\n", faults, r.Distinct)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "verdict: safe within bounds (every property holds, put to the test); lock-unsafe, data-safe (the lock breaks, no-lost-update holds, put to the test); lock-unsafe (the lock breaks, data safety untested); loses updates; stuck (only progress breaks); holds only vacuously;")
	fmt.Fprintln(w, "holds: no reachable state within the design's horizon and fault budget breaks it; holds, vacuously: it holds, but no lock ever expired or was lost while held")
	fmt.Fprintln(w, "(own-release: nor did a release reach another's lock; progress: nor did a client crash), so the faults never put it to the test; ✗ N: violated, shortest counterexample N steps;")
	fmt.Fprintln(w, "lock safety = exclusive, mutex, own-release; data safety = no-lost-update, linearizable (porcupine, on the shortest counterexample); liveness = progress;")
	fmt.Fprintln(w, "fairness = starvation, a witness and not a verdict (jobs ≥ 2 only; –: one job per client): seen N: in N steps a client still waits for its first lock while another has finished all its jobs; not seen: no schedule within the bounds does that.")
}

func cellText(c matrixCell) string {
	switch explore.Status(c.Status) {
	case explore.Violated:
		if c.File != "" && c.FileSteps != 0 && c.FileSteps != c.Length {
			// the file shows it with the fewest clients: say so, not a
			// link that promises the same trace
			return fmt.Sprintf("✗ %d ([%d steps, %s](%s))", c.Length, c.FileSteps, plural(c.FileClients, "client", "clients"), c.File)
		}
		if c.File != "" {
			return fmt.Sprintf("[✗ %d](%s)", c.Length, c.File)
		}
		return fmt.Sprintf("✗ %d", c.Length)
	case explore.Holds:
		if c.Vacuous {
			return "holds, vacuously"
		}
		return "holds"
	case explore.Seen:
		return fmt.Sprintf("seen %d", c.Length)
	case explore.NotSeen:
		return "not seen"
	case "not applicable":
		return "–"
	}
	return c.Status
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
