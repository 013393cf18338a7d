package reality

import (
	"strings"
	"testing"

	"lockcheck/model"
)

// TestDiffShowsEachSidesKey: a step's reply difference says each side's
// key holder, not client A's (a view's zero After), as a lost request's
// once did ("nothing applied; key: A's" where the step's key was nobody's).
func TestDiffShowsEachSidesKey(t *testing.T) {
	d, err := model.ParseDesign("redis/cad/none/plain,losses=1,lose=request,lose-at=release,timeout=3")
	if err != nil {
		t.Fatal(err)
	}
	m := view{Took: model.ActLose, Result: model.ResNoop, After: HolderNone}
	r := view{Took: model.ActLose, Result: model.ResOK, Token: 1, After: 1}
	got := diffViews(&d, m, r)
	want := "reply: model release lost on the way, nothing applied; key: nobody, real release lost on the way, nothing applied; key: B's"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("diff %q, want it to begin %q", got, want)
	}
}
