package webview

import (
	"embed"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lockcheck/model"
)

// serve.go is the interactive explorer (explore serve): a page per state
// of a schedule of one's own, reached by clicking enabled actions. The
// server only drives the model (Actions, Step, Replay, Properties' Bad)
// and the search (explore.Check from the current state); every word on the
// page is the model's or the timeline page's. Nothing is kept between
// requests: the URL path names the design and the schedule (serve_path.go).

//go:embed assets
var assets embed.FS

// ExplorerConfig is what an Explorer opens on.
type ExplorerConfig struct {
	// Design is the design's name, as ParseDesign reads it or a preset
	// (demo2); Trace the schedule the opening page shows (nil: none), At
	// the step it opens on (0…len(Trace); -1: the end).
	Design string
	Trace  []model.Action
	At     int
	// MaxStates bounds each "shortest violation from here" search
	// (0: DefaultSearchStates); MaxMemory its memory in bytes (0: 1 GiB).
	MaxStates int
	MaxMemory int64
	// Reproduce, if not nil, says whether a scenario's text can be played
	// on real servers (the command line passes reality.Load's check), so
	// that the page says why not instead of a command that would refuse
	// it. Command is the command that plays a scenario file ("explore
	// reproduce"; "" for that).
	Reproduce func(name, scenario string) error
	Command   string
}

// DefaultSearchStates bounds a search from the page when ExplorerConfig
// does not.
const DefaultSearchStates = 20_000_000

// Explorer is the explorer's http.Handler.
type Explorer struct {
	cfg   ExplorerConfig
	start string
	busy  chan struct{} // one search at a time
	// busyWait is how long a search waits for the one before it to stop
	busyWait time.Duration
}

// NewExplorer checks the opening schedule (an unknown design or a step
// that is not enabled is an error) and returns the handler.
func NewExplorer(cfg ExplorerConfig) (*Explorer, error) {
	d, err := model.ParseDesign(cfg.Design)
	if err != nil {
		return nil, err
	}
	if _, err := model.Replay(&d, cfg.Trace); err != nil {
		return nil, err
	}
	if cfg.At < 0 || cfg.At > len(cfg.Trace) {
		cfg.At = len(cfg.Trace)
	}
	if cfg.MaxStates <= 0 {
		cfg.MaxStates = DefaultSearchStates
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = 1 << 30
	}
	if cfg.Command == "" {
		cfg.Command = "explore reproduce"
	}
	e := &Explorer{cfg: cfg, busy: make(chan struct{}, 1), busyWait: 5 * time.Second}
	e.start = PageURL(cfg.Design, cfg.Trace, cfg.At)
	return e, nil
}

// StartURL is the path and query of the opening page.
func (e *Explorer) StartURL() string { return e.start }

// PageURL is the path and query of the explorer's page of a schedule at
// step at.
func PageURL(designName string, trace []model.Action, at int) string {
	u := ExplorePrefix + SchedulePath(designName, trace)
	if at >= 0 && at < len(trace) {
		u += "?at=" + strconv.Itoa(at)
	}
	return u
}

// badRequest is input the page refuses, with its status.
type badRequest struct {
	status int
	msg    string
}

func (b *badRequest) Error() string { return b.msg }

func refuse(status int, format string, args ...any) error {
	return &badRequest{status, oneLine(fmt.Sprintf(format, args...))}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ServeHTTP answers the explorer's pages: / (the opening page), the pages
// under ExplorePrefix, /search/… (a search from a state, as lines of JSON),
// /scenario/… (the schedule as a scenario file), /story/… (its story) and
// /assets/….
func (e *Explorer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// a bug of the model or the page is one line too, not a dropped
		// connection (http.ErrAbortHandler is the client gone)
		if v := recover(); v != nil && v != http.ErrAbortHandler {
			e.fail(w, r, refuse(http.StatusInternalServerError, "internal error (a bug: please report the URL): %v", v))
		}
	}()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		e.fail(w, r, refuse(http.StatusMethodNotAllowed, "%s: the explorer answers GET only", r.Method))
		return
	}
	p := r.URL.Path
	var err error
	switch {
	case p == "/":
		http.Redirect(w, r, e.start, http.StatusSeeOther)
		return
	case strings.HasPrefix(p, "/assets/"):
		sub, _ := fs.Sub(assets, "assets")
		w.Header().Set("Cache-Control", "no-cache")
		http.StripPrefix("/assets/", http.FileServerFS(sub)).ServeHTTP(w, r)
		return
	case strings.HasPrefix(p, ExplorePrefix):
		err = e.servePage(w, r, p[len(ExplorePrefix):])
	case strings.HasPrefix(p, searchPrefix):
		err = e.serveSearch(w, r, p[len(searchPrefix):])
	case strings.HasPrefix(p, scenarioPrefix):
		err = e.serveScenario(w, r, p[len(scenarioPrefix):])
	case strings.HasPrefix(p, storyPrefix):
		err = e.serveStory(w, r, p[len(storyPrefix):])
	default:
		err = refuse(http.StatusNotFound, "no page %q here (the explorer's pages start with %s)", clip(p), ExplorePrefix)
	}
	if err != nil {
		e.fail(w, r, err)
	}
}

const (
	searchPrefix   = "/search/"
	scenarioPrefix = "/scenario/"
	storyPrefix    = "/story/"
)

// fail answers bad input: a one-line error, in a page for a page, as text
// for the rest.
func (e *Explorer) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusBadRequest
	var br *badRequest
	if errors.As(err, &br) {
		status = br.status
	}
	msg := oneLine(err.Error())
	if !strings.HasPrefix(r.URL.Path, ExplorePrefix) && r.URL.Path != "/" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(status)
		fmt.Fprintln(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	esc := html.EscapeString
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>lockcheck explorer: error</title>\n<link rel=\"stylesheet\" href=\"/assets/explorer.css\">\n</head>\n<body>\n")
	fmt.Fprintf(w, "<h1>lockcheck explorer</h1>\n<p class=\"error\" id=\"error\">%s</p>\n<p><a href=\"%s\">back to the start</a></p>\n</body>\n</html>\n", esc(msg), esc(e.start))
}

// state is a request's schedule and the step it is at.
type state struct {
	sc  *Schedule
	at  int
	run *model.Run // the schedule replayed up to at
}

// load reads a request's schedule and step, and replays it: a step that
// is not enabled is bad input.
func load(r *http.Request, rest string) (*state, error) {
	sc, at, err := locate(r, rest)
	if err != nil {
		return nil, err
	}
	// the run to step at, recorded; the steps after it (the forward part)
	// only checked to be enabled one after another
	run, err := model.Replay(&sc.Design, sc.Trace[:at])
	if err == nil {
		if _, ok := replay(&sc.Design, run.Final, sc.Trace[at:]); !ok {
			err = replayError(sc)
		}
	}
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "%v", err)
	}
	return &state{sc: sc, at: at, run: run}, nil
}

// locate reads a request's schedule and step (?at=, the schedule's end
// without it).
func locate(r *http.Request, rest string) (*Schedule, int, error) {
	sc, err := ParseSchedulePath(rest)
	if err != nil {
		return nil, 0, refuse(http.StatusBadRequest, "%v", err)
	}
	at := len(sc.Trace)
	if v := r.URL.Query().Get("at"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > len(sc.Trace) {
			return nil, 0, refuse(http.StatusBadRequest, "at=%q: want a step from 0 to %d (the schedule's length)", clip(v), len(sc.Trace))
		}
		at = n
	}
	return sc, at, nil
}

// stateAt is the state of sc's schedule at step at, the whole schedule
// checked to replay (a take needs no more than that: the page it leads
// to replays the run).
func stateAt(sc *Schedule, at int) (model.State, error) {
	d := &sc.Design
	s, ok := replay(d, model.Init(d), sc.Trace[:at])
	if ok {
		_, ok = replay(d, s, sc.Trace[at:])
	}
	if !ok {
		return s, replayError(sc)
	}
	return s, nil
}

// replayError is Replay's error for a schedule that does not replay: it
// names the step and what was enabled.
func replayError(sc *Schedule) error {
	_, err := model.Replay(&sc.Design, sc.Trace)
	return err
}

// replay steps trace from s, each step checked to be enabled in turn,
// and returns the state it reaches; false if a step is not enabled.
func replay(d *model.Design, s model.State, trace []model.Action) (model.State, bool) {
	var ev model.Event
	for _, a := range trace {
		if !model.Enabled(d, &s, a) {
			return s, false
		}
		model.StepTo(d, &s, a, &ev)
	}
	return s, true
}
