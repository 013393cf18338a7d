package reality

import (
	"testing"
)

// TestLibrariesDemo2 plays Demo 2's schedule (a pause longer than the TTL,
// no fencing) with each lock library: model and reality must agree, the
// update must be lost for real, and A must learn nothing until its release.
func TestLibrariesDemo2(t *testing.T) {
	for _, lib := range []string{ClientRedsync, ClientRedislock, ClientEtcdMutex} {
		t.Run(lib, func(t *testing.T) {
			in, how, err := ForClient(demoInput(t, 2), lib)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(how)
			c := reproduce(t, in, Options{Client: lib})
			t.Log(c.Text())
			if !c.Agree {
				t.Fatalf("reality differs from the model:\n%s", c.Text())
			}
		})
	}
}
