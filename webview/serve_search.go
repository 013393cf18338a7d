package webview

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"lockcheck/explore"
	"lockcheck/model"
)

// searchLine is one line of a search's answer (lines of JSON): progress
// while it runs, then the result.
type searchLine struct {
	Kind     string  `json:"kind"` // "progress", "result" or "error"
	Property string  `json:"property"`
	States   int64   `json:"states"`
	Depth    int     `json:"depth"`
	Seconds  float64 `json:"seconds"`
	// the result: explore's status (violated, holds, seen, not-seen,
	// incomplete), the length of the shortest violation (witness) from
	// here and the page after it
	Status  string `json:"status,omitempty"`
	Steps   int    `json:"steps"`
	Href    string `json:"href,omitempty"`
	Stopped string `json:"stopped,omitempty"` // what stopped the search short (Stats.StoppedBy)
	Text    string `json:"text"`              // the line the page shows
}

// serveSearch runs "shortest violation of P from here": explore.Check from
// the current state, breadth-first, bounded, for one property. The answer
// is a line of JSON a second while it runs, then the result; closing the
// request (the page's stop button) stops the search.
func (e *Explorer) serveSearch(w http.ResponseWriter, r *http.Request, rest string) error {
	st, err := load(r, rest)
	if err != nil {
		return err
	}
	d := st.sc.Design
	name := r.URL.Query().Get("property")
	var prop model.Property
	var names []string
	for _, p := range model.PropertiesFor(&d) {
		names = append(names, p.Name)
		if p.Name == name {
			prop = p
		}
	}
	if prop.Bad == nil {
		return refuse(http.StatusBadRequest, "property=%q: want one of %s", clip(name), strings.Join(names, ", "))
	}
	// one search at a time; a stopped one lets go within a work unit, so
	// a new one waits a moment for it
	wait := time.NewTimer(e.busyWait)
	defer wait.Stop()
	select {
	case e.busy <- struct{}{}:
		defer func() { <-e.busy }()
	case <-wait.C:
		return refuse(http.StatusConflict, "another search is running: stop it first (one search at a time)")
	case <-r.Context().Done():
		return nil
	}
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	send := func(l searchLine) {
		enc.Encode(l)
		if flusher != nil {
			flusher.Flush()
		}
	}
	progress := make(chan explore.Progress, 1)
	type done struct {
		rep *explore.Report
		err error
	}
	finished := make(chan done, 1)
	from := st.sc.Trace[:st.at:st.at]
	go func() {
		rep, err := explore.Check(explore.Config{
			Design:     d,
			Properties: []model.Property{prop},
			From:       from,
			Bounds:     explore.Bounds{MaxStates: e.cfg.MaxStates, MaxMemory: e.cfg.MaxMemory, Symmetry: true},
			Context:    r.Context(),
			Progress: func(p explore.Progress) {
				select {
				case <-progress: // the newest wins
				default:
				}
				progress <- p
			},
		})
		finished <- done{rep, err}
	}()
	send(searchLine{Kind: "progress", Property: prop.Name, Text: "searching…"})
	for {
		select {
		case p := <-progress:
			send(searchLine{Kind: "progress", Property: prop.Name, States: p.States, Depth: p.Depth, Seconds: p.Seconds,
				Text: fmt.Sprintf("searching: %d states, depth %d, %.0f s", p.States, p.Depth, p.Seconds)})
		case f := <-finished:
			if f.err != nil {
				send(searchLine{Kind: "error", Property: prop.Name, Text: oneLine(f.err.Error())})
				return nil
			}
			send(searchResult(st, prop, f.rep))
			return nil
		}
	}
}

// searchResult says what a search from the current state found.
func searchResult(st *state, p model.Property, rep *explore.Report) searchLine {
	res := rep.Results[0]
	l := searchLine{Kind: "result", Property: p.Name, Status: string(res.Status), States: rep.Stats.Distinct, Depth: rep.Stats.Depth, Seconds: rep.Stats.Seconds, Stopped: rep.Stats.StoppedBy}
	what := "violation"
	if p.Expect == model.Sometimes {
		what = "witness"
	}
	switch res.Status {
	case explore.Violated, explore.Seen:
		l.Steps = len(res.Trace)
		trace := append(append([]model.Action(nil), st.sc.Trace[:st.at]...), res.Trace...)
		l.Href = PageURL(st.sc.DesignName, trace, -1)
		l.Text = fmt.Sprintf("shortest %s from here: %d steps (step %d from the start); %d states searched", what, l.Steps, st.at+l.Steps, rep.Stats.Distinct)
	case explore.Holds, explore.NotSeen:
		l.Text = fmt.Sprintf("no %s from here: %s (every state reachable from here, %d, searched)", what, res.Status, rep.Stats.Distinct)
		if res.Vacuous != "" {
			l.Text += "; vacuous: " + res.Vacuous
		}
	default:
		l.Text = fmt.Sprintf("no %s found before the search stopped (%s) after %d states, depth %d", what, rep.Stats.StoppedBy, rep.Stats.Distinct, rep.Stats.Depth)
	}
	return l
}

// serveScenario answers the schedule so far as a scenario file.
func (e *Explorer) serveScenario(w http.ResponseWriter, r *http.Request, rest string) error {
	st, err := load(r, rest)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", scenarioFileName(st.sc.DesignName)))
	_, err = w.Write([]byte(scenarioText(st.sc, st.at)))
	return err
}
