package explore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// The default fault budget breaks an unfenced design whatever its TTL and
// work: the pause, slow job and delay lengths are derived from them. With
// the old fixed max-pause of 15, ttl=30 "held".
func TestDefaultBudgetBreaksAnyTTL(t *testing.T) {
	for _, ttl := range []int{1, 5, 10, 17, 30, 45, 60} {
		for _, work := range []int{0, 2, 7} {
			for _, fault := range []string{"", ",pauses=0,slow=1", ",pauses=0,delays=1"} {
				name := fmt.Sprintf("redis/cad/none/plain,ttl=%d,work=%d%s", ttl, work, fault)
				d, err := model.ParseDesign(name)
				require.NoError(t, err)
				props, err := model.ParseProperties("no-lost-update")
				require.NoError(t, err)
				rep, err := Check(Config{Design: d, Properties: props, Bounds: Bounds{Symmetry: true}})
				require.NoError(t, err)
				require.Equal(t, Violated, rep.Results[0].Status, name)
			}
		}
	}
	// planted: the old fixed budget at ttl=30 breaks nothing
	d, err := model.ParseDesign("redis/cad/none/plain,ttl=30,max-pause=15,horizon=40")
	require.NoError(t, err)
	rep, err := Check(Config{Design: d, Bounds: Bounds{Symmetry: true}})
	require.NoError(t, err)
	res, _ := rep.Result("no-lost-update")
	require.Equal(t, Holds, res.Status)
}
