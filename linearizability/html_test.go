package linearizability

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"

	"lockcheck/model"
)

func TestHTMLDemo2(t *testing.T) {
	run := loadRun(t, "2")
	res, err := CheckRun(run, Options{HTML: true})
	if err != nil {
		t.Fatal(err)
	}
	page := string(res.HTML)
	for _, want := range []string{
		"<title>lockcheck: redis/cad/none/plain</title>",
		"A: read 0 → write 1 accepted",
		"final: counter = 2",
		`"Tag":"A"`, `"Tag":"key lock:order-42"`, `"Tag":"tick"`,
		"granted", "paused 14 ticks", "resumes at t=15",
		"expires at t=11 while A still believes it holds the lock",
		"✗ write without the key", "t=11", "t=15",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if res.Verdict != Illegal {
		t.Errorf("verdict %s", res.Verdict)
	}
	// without HTML, none
	res2, _ := CheckRun(run, Options{})
	if res2.HTML != nil || res2.Summary != res.Summary || res2.Verdict != res.Verdict {
		t.Errorf("HTML changes the verdict or summary: %q vs %q", res2.Summary, res.Summary)
	}
}

// An illegal history with several partial linearizations of the same
// length: porcupine lists them in map order; the page must not change.
func TestHTMLDeterministic(t *testing.T) {
	jobs := []model.Job{okJob(0, 1, 10, 0), okJob(1, 2, 11, 0), okJob(2, 3, 12, 0), okJob(3, 4, 13, 1), failedJob(4, 5, 6, 3)}
	first, err := CheckJobs(jobs, 2, Options{HTML: true})
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]bool{}
	for i := 0; i < 30; i++ {
		res, err := CheckJobs(jobs, 2, Options{HTML: true})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.HTML, first.HTML) || res.Summary != first.Summary {
			t.Fatalf("render %d differs", i)
		}
		ops, _ := jobHistory(jobs, 2, 0, nil)
		_, info := porcupine.CheckOperationsVerbose(counterModel, ops, 0)
		var b bytes.Buffer
		if err := porcupine.Visualize(counterModel, info, &b); err != nil {
			t.Fatal(err)
		}
		raw[b.String()] = true
	}
	t.Logf("porcupine's own page took %d forms in 30 renders; ours 1", len(raw))
}

// The canonical page holds the same partial linearizations, longest first
// and then by ids, and Largest points at the first longest one holding
// each operation, as porcupine defines it.
func TestCanonicalHTML(t *testing.T) {
	jobs := []model.Job{okJob(0, 1, 10, 0), okJob(1, 2, 11, 0), okJob(2, 3, 12, 1), unknownJob(3, 4, 13, 1)}
	ops, err := jobHistory(jobs, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, info := porcupine.CheckOperationsVerbose(counterModel, ops, 0)
	var b bytes.Buffer
	if err := porcupine.Visualize(counterModel, info, &b); err != nil {
		t.Fatal(err)
	}
	out, ok := canonicalHTML(b.Bytes(), "a <title>")
	if !ok {
		t.Fatal("porcupine's page does not have the shape canonicalHTML expects (a porcupine upgrade?)")
	}
	if !bytes.Contains(out, []byte("<title>a &lt;title&gt;</title>")) {
		t.Error("title not set and escaped")
	}
	var data struct {
		Partitions []struct {
			PartialLinearizations [][]vizStep
			Largest               map[int]int
		}
	}
	start := bytes.LastIndex(out, dataStart) + len(dataStart)
	end := bytes.LastIndex(out, dataEnd)
	if err := json.Unmarshal(out[start:end], &data); err != nil {
		t.Fatal(err)
	}
	lins := data.Partitions[0].PartialLinearizations
	if len(lins) != len(info.PartialLinearizations()[0]) || len(lins) < 2 {
		t.Fatalf("%d partial linearizations, porcupine has %d (want 2 or more for this test)", len(lins), len(info.PartialLinearizations()[0]))
	}
	ids := func(l []vizStep) []int {
		var out []int
		for _, s := range l {
			out = append(out, s.Index)
		}
		return out
	}
	for i := 1; i < len(lins); i++ {
		a, b := ids(lins[i-1]), ids(lins[i])
		if len(a) < len(b) || (len(a) == len(b) && slices.Compare(a, b) >= 0) {
			t.Errorf("partials %v then %v: not canonical", a, b)
		}
	}
	for id, at := range data.Partitions[0].Largest {
		for i := 0; i < at; i++ {
			if slices.Contains(ids(lins[i]), id) && len(lins[i]) >= len(lins[at]) {
				t.Errorf("Largest[%d] = %d, but partial %d holds it and is as long", id, at, i)
			}
		}
		if !slices.Contains(ids(lins[at]), id) {
			t.Errorf("Largest[%d] = %d does not hold it", id, at)
		}
	}
	bad := []byte("<html>not porcupine</html>")
	if got, ok := canonicalHTML(bad, "x"); ok || !bytes.Equal(got, bad) {
		t.Error("a page of another shape must come back unchanged, with ok false")
	}
}

func TestHTMLStorage(t *testing.T) {
	res, err := CheckStorage(loadRun(t, "3"), Options{HTML: true})
	if err != nil {
		t.Fatal(err)
	}
	// the page's JSON escapes <, > and & (\u003c …)
	page := strings.ReplaceAll(string(res.HTML), `\u003c`, "<")
	for _, want := range []string{
		"<title>lockcheck storage: redis/cad/write/max-token,token=33</title>",
		"A: write 1 (token 33) → rejected: 33 < 34  ✗ the key is C's",
		"counter 1, highest token 34",
		"granted (token 34)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// CheckRun is safe to call from several goroutines at once (explore's
// workers may): the models are read-only. Run with -race.
func TestConcurrentUse(t *testing.T) {
	demos := []string{"1", "2", "3", "4", "5", "6"}
	runs := map[string]*model.Run{}
	want := map[string]Result{}
	for _, d := range demos {
		runs[d] = loadRun(t, d)
		res, err := CheckRun(runs[d], Options{HTML: true})
		if err != nil {
			t.Fatal(err)
		}
		want[d] = res
	}
	errs := make(chan string, 64)
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			for _, d := range demos {
				res, err := CheckRun(runs[d], Options{HTML: true})
				if err != nil || res.Summary != want[d].Summary || !bytes.Equal(res.HTML, want[d].HTML) {
					errs <- "demo " + d + ": " + res.Summary
				}
			}
			done <- true
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Porcupine labels its job rows 0, 1, 2; the page names them A, B, C and
// the final read, as the rest of lockcheck does: the data carries the
// names and porcupine's two labelling expressions read them.
func TestHTMLNamesTheClients(t *testing.T) {
	jobs := []model.Job{okJob(0, 1, 10, 0), okJob(1, 2, 11, 0), okJob(2, 3, 12, 1)}
	ops, err := jobHistory(jobs, 2, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, info := porcupine.CheckOperationsVerbose(counterModel, ops, 0)
	var b bytes.Buffer
	if err := porcupine.Visualize(counterModel, info, &b); err != nil {
		t.Fatal(err)
	}
	out, ok := canonicalHTML(b.Bytes(), "t")
	if !ok {
		t.Fatal("porcupine's page does not have the shape canonicalHTML expects (a porcupine upgrade?)")
	}
	if !bytes.Contains(out, []byte(`"ClientNames":["A","B","C","final read"]`)) {
		t.Errorf("the data does not name the rows A, B, C, final read")
	}
	for _, r := range rowLabels {
		if bytes.Contains(out, []byte(r[0])) || !bytes.Contains(out, []byte(r[1])) {
			t.Errorf("porcupine's row label %q is not replaced", r[0])
		}
	}
}
