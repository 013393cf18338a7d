package reality

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestClosedRunSendsNothingHeld: a request the client's proxy holds (a
// pause, a crash, a gate) when the run ends is dropped at close, never
// sent: sent then, it would land in the next run on the same databases
// (a long locktest run saw a void run's late release delete the key of
// its replay). Without discardHeld the held bytes reach the upstream.
func TestClosedRunSendsNothingHeld(t *testing.T) {
	for _, discard := range []bool{true, false} {
		up, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			c, err := up.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			got <- b
		}()
		h := &netHold{}
		addr, err := h.via(up.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("PING\r\n")); err != nil { // before the hold: sent
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		h.hold()
		if _, err := c.Write([]byte("DEL k\r\n")); err != nil { // held
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if discard {
			h.discardHeld()
		}
		h.resume()
		time.Sleep(50 * time.Millisecond)
		c.Close()
		h.close()
		want := "PING\r\n"
		if !discard {
			want = "PING\r\nDEL k\r\n"
		}
		select {
		case b := <-got:
			if string(b) != want {
				t.Errorf("discard %v: the upstream got %q, want %q", discard, b, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("discard %v: the upstream's connection never ended", discard)
		}
		up.Close()
	}
}
