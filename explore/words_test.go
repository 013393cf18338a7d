package explore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// The words of an etcd run: a keep-alive that fails because its client is
// cut off says the lease still runs, and until when (before: "fails, the
// lease is gone" while the lease had 7 ticks left); a refused acquire is
// etcd's put-if-absent transaction, not a SET NX.
func TestEtcdWords(t *testing.T) {
	rep := checkName(t, "etcd/cad/none/plain,renew=3,pauses=0,slow=1,partitions=1")
	res, _ := rep.Result("exclusive")
	require.Equal(t, Violated, res.Status)
	run, err := model.Replay(&rep.Design, res.Trace)
	require.NoError(t, err)
	out := model.Render(run)
	require.NotContains(t, out, "the lease is gone")
	require.NotContains(t, out, "SET NX")
	var failed []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "keep-alive: fails") {
			failed = append(failed, l)
		}
	}
	require.NotEmpty(t, failed, out)
	require.Contains(t, failed[0], "keep-alive: fails, cut off from etcd (a partition); the lease still runs until t=15 (7 ticks left), then expires; the worker goes on")
	require.Contains(t, out, "contended           seen at step 3: a client's put-if-absent transaction is refused because another holds the key")
}
