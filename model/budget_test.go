package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// At the seed's TTL and work the derived defaults are the old fixed ones,
// so the golden files of default-TTL designs did not move.
func TestDerivedDefaultsAtTheSeedsTTL(t *testing.T) {
	d := DefaultDesign()
	require.Equal(t, 15, d.MaxPauseTicks)
	require.Equal(t, 12, d.SlowWorkTicks)
	require.Equal(t, 15, d.MaxDelayTicks)
	require.Equal(t, 40, d.HorizonTicks)
	for _, p := range intParams {
		require.Equal(t, p.def, *p.field(&d), "%s: the table's default is the derived one at ttl=10, work=2", p.name)
	}
}

func TestDerivedDefaultsFollowTheTTL(t *testing.T) {
	d, err := ParseDesign("redis/cad/none/plain,ttl=30")
	require.NoError(t, err)
	require.Equal(t, 35, d.MaxPauseTicks, "a pause must be able to outlast the TTL")
	require.Equal(t, 32, d.SlowWorkTicks)
	require.Equal(t, 35, d.MaxDelayTicks)
	require.Equal(t, 100, d.HorizonTicks)
	require.Equal(t, "redis/cad/none/plain,ttl=30", d.Name(), "derived values are not printed")

	// a preset takes the same derivation
	p, err := ParseDesign("demo2,ttl=30")
	require.NoError(t, err)
	require.Equal(t, d, p)

	// a value given explicitly stays, and is printed when it differs from
	// its derived default; the horizon follows the pause actually given
	e, err := ParseDesign("redis/cad/none/plain,ttl=30,max-pause=15")
	require.NoError(t, err)
	require.Equal(t, 15, e.MaxPauseTicks)
	require.Equal(t, 100, e.HorizonTicks) // slow-work and max-delay still 32, 35
	require.Equal(t, "redis/cad/none/plain,ttl=30,max-pause=15", e.Name())
	f, err := ParseDesign("redis/cad/none/plain,ttl=30,max-pause=35,horizon=100")
	require.NoError(t, err)
	require.Equal(t, "redis/cad/none/plain,ttl=30", f.Name(), "a value equal to its derived default is left out")

	// ZooKeeper's lock lives as long as the session
	z, err := ParseDesign("zookeeper/cad/none/plain,session=25")
	require.NoError(t, err)
	require.Equal(t, 30, z.MaxPauseTicks)

	// the lengths stay within their ranges at the largest TTL and work
	m, err := ParseDesign("redis/cad/none/plain,ttl=60,work=60")
	require.NoError(t, err)
	require.Equal(t, MaxWaitTicks, m.MaxPauseTicks)
	require.Equal(t, MaxHorizonTicks, m.HorizonTicks)
	require.NoError(t, m.Validate())
}

func TestDerivedNamesRoundTrip(t *testing.T) {
	for _, name := range []string{
		"redis/cad/none/plain,ttl=30",
		"redis/cad/none/plain,ttl=30,max-pause=15",
		"redis/cad/none/plain,ttl=3,pauses=0",
		"redis/cad/none/plain,work=7,horizon=40",
		"zookeeper/cad/none/plain,slow=1,slow-work=12,session=20",
		"redis/cad/rw/max-token,clock=free,horizon=41",
	} {
		d, err := ParseDesign(name)
		require.NoError(t, err, name)
		require.Equal(t, name, d.Name())
		again, err := ParseDesign(d.Name())
		require.NoError(t, err)
		require.Equal(t, d, again)
	}
}

// KeepBudget pins the fault lengths and horizon of a design changed on
// another axis.
func TestKeepBudget(t *testing.T) {
	d := DefaultDesign()
	n, err := ParseDesign("redis/cad/none/plain,ttl=30")
	require.NoError(t, err)
	KeepBudget(&n, &d, map[string]bool{"ttl": true})
	require.Equal(t, 15, n.MaxPauseTicks)
	require.Equal(t, 40, n.HorizonTicks)
	require.Equal(t, "redis/cad/none/plain,ttl=30,horizon=40,max-pause=15", n.Name())
}
