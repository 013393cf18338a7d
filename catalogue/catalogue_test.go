package catalogue

import (
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

func TestEveryEntryParsesAndIsDistinct(t *testing.T) {
	seen := map[model.Design]string{}
	for _, e := range Entries {
		d, err := model.ParseDesign(e.Name)
		require.NoError(t, err, e.Name)
		if prev, dup := seen[d]; dup {
			t.Fatalf("%q and %q are the same design %s", prev, e.Name, d.Name())
		}
		seen[d] = e.Name
		require.NotEmpty(t, e.Why)
	}
	require.Len(t, Designs(), len(Entries))
}

// The catalogue covers every lock service and every value of every axis.
func TestCatalogueCoversEveryAxisValue(t *testing.T) {
	values := map[string]bool{}
	for _, d := range Designs() {
		for _, v := range []string{"lock=" + d.Lock.String(), "release=" + d.Release.String(), "fence=" + d.Fence.String(),
			"storage=" + d.Storage.String(), "acquire=" + d.Acquire.String(), "clock=" + d.Clock.String(),
			"check=" + d.Check.String(), "wait=" + d.Wait.String(), "tx=" + d.Tx.String(), "reenter=" + d.Reenter.String()} {
			values[v] = true
		}
	}
	for _, want := range []string{
		"lock=redis", "lock=replica", "lock=redlock", "lock=etcd", "lock=zookeeper", "lock=db",
		"release=del", "release=get-del", "release=cad",
		"fence=none", "fence=write", "fence=rw",
		"storage=plain", "storage=max-token", "storage=max-write", "storage=cond-update", "storage=cas",
		"acquire=script", "acquire=incr-before", "acquire=incr-after", "acquire=set-expire",
		"clock=urgent", "clock=free", "check=trust", "check=validity", "wait=poll", "wait=notify",
		"tx=inside", "tx=outside", "reenter=none", "reenter=nx", "reenter=owner",
	} {
		require.True(t, values[want], "no catalogue design has %s", want)
	}
}

// Entries are written as canonical names (or presets), so that a design's
// name in the matrix, the counterexample files and the tests is the same.
func TestEntriesAreCanonical(t *testing.T) {
	for _, e := range Entries {
		d, err := model.ParseDesign(e.Name)
		require.NoError(t, err)
		if len(e.Name) < 4 || e.Name[:4] != "demo" {
			require.Equal(t, d.Name(), e.Name)
		}
	}
}
