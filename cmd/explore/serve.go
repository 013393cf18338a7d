package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"lockcheck/counterexamples"
	"lockcheck/model"
	"lockcheck/webview"
)

func init() {
	register("serve", "explore a design by hand in the browser: click enabled actions, back and forward, search from any state", runServe)
}

// runServe serves the explorer on a loopback address until SIGINT or
// SIGTERM: exit 0 after a clean stop, 2 on bad input or an address it
// cannot listen on.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", stderr)
	design := fs.String("design", "", "the design to explore (a name as in explore designs, or a preset such as demo2)")
	file := fs.String("file", "", "open on a counterexample or scenario file's schedule instead (its design and steps)")
	addr := fs.String("addr", "127.0.0.1:0", "host:port to listen on (port 0: a free one); a loopback host unless -public")
	public := fs.Bool("public", false, "allow -addr on a host that is not loopback (the page runs searches for anyone who reaches it)")
	maxStates := fs.Int("max-states", webview.DefaultSearchStates, "bound on the states of one search from the page")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: explore serve -design NAME | -file FILE [-addr 127.0.0.1:0] [flags]")
		fmt.Fprintln(stderr, "Serves the explorer on http://ADDR/ (printed on stdout) until interrupted (Ctrl-C): exit 0 when stopped, 2 on bad input.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "explore serve: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q (the design is -design NAME, a file -file FILE)", clip(fs.Arg(0)))
	}
	if (*design == "") == (*file == "") {
		return bad("want -design NAME or -file FILE (one of them)")
	}
	if *maxStates < 1 {
		return bad("-max-states %d: want at least 1", *maxStates)
	}
	cfg := webview.ExplorerConfig{Design: *design, At: -1, MaxStates: *maxStates, Command: "go run ./cmd/explore reproduce",
		Reproduce: reproduceCheck}
	if *file != "" {
		name, trace, at, err := serveFile(*file)
		if err != nil {
			return bad("%s", oneLine(err.Error()))
		}
		cfg.Design, cfg.Trace, cfg.At = name, trace, at
	} else if _, err := model.ParseDesign(*design); err != nil {
		return bad("%s", oneLine(err.Error()))
	}
	if err := checkServeAddr(*addr, *public); err != nil {
		return bad("-addr %v", err)
	}
	ex, err := webview.NewExplorer(cfg)
	if err != nil {
		return bad("%s", oneLine(err.Error()))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return bad("-addr %s: %v", clip(*addr), err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var handler http.Handler = ex
	if !*public {
		handler = loopbackOnly(ex)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    4 << 20,                                           // a schedule's path of 100,000 steps
		BaseContext:       func(net.Listener) context.Context { return ctx }, // a search in flight stops with the server
	}
	url := "http://" + ln.Addr().String() + ex.StartURL()
	fmt.Fprintln(stdout, url)
	fmt.Fprintf(stderr, "explore serve: the explorer is at %s (open it in a browser; Ctrl-C stops the server)\n", url)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return bad("%v", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return bad("%v", err)
	}
	fmt.Fprintln(stderr, "explore serve: stopped")
	return exitOK
}

// loopbackOnly refuses a request whose Host is not a loopback name or
// address: a web page elsewhere that points a name of its own at
// 127.0.0.1 (DNS rebinding) gets a 403, not the explorer.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hp, _, err := net.SplitHostPort(host); err == nil {
			host = hp
		}
		if err := isLoopback(net.JoinHostPort(strings.Trim(host, "[]"), "1")); err != nil {
			http.Error(w, fmt.Sprintf("Host %q: the explorer answers loopback names only (localhost, 127.0.0.1, ::1); serve it with -public to answer others", clip(r.Host)), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// reproduceCheck, when not nil, says whether explore reproduce would play
// a schedule (a build with the real-server verbs sets it): the page then
// shows the refusal instead of the command.
var reproduceCheck func(name, text string) error

// isLoopback accepts host:port with a loopback host (localhost,
// 127.0.0.0/8, ::1) and a port from 1 to 65535. It is the rule of
// reality.CheckLoopback, kept here so that serve does not link the
// real-server clients into the main job.
func isLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want 1 to 65535", clip(port))
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q: not a loopback address", clip(host))
}

// checkServeAddr accepts host:port with a loopback host, or any host with
// public.
func checkServeAddr(addr string, public bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port, e.g. 127.0.0.1:8080", clip(addr))
	}
	if port != "0" {
		if err := isLoopback("127.0.0.1:" + port); err != nil {
			return fmt.Errorf("%q: port %q: want 0 (a free one) or 1 to 65535", clip(addr), clip(port))
		}
	}
	if public {
		return nil
	}
	if err := isLoopback(net.JoinHostPort(host, "1")); err != nil {
		return fmt.Errorf("%q: a host that is not loopback (localhost, 127.0.0.1, ::1) serves the page to the network: add -public to mean it", clip(addr))
	}
	return nil
}

// serveFile reads a counterexample or a scenario file: its design's name,
// its trace, and the step to open on (a counterexample's violation, a
// scenario's end).
func serveFile(name string) (string, []model.Action, int, error) {
	data, err := readLimited(name, counterexamples.MaxFileBytes, "a counterexample or scenario file")
	if err != nil {
		return "", nil, 0, err
	}
	if isCounterexample(data) {
		f, err := counterexamples.Parse(string(data))
		if err != nil {
			var pe *counterexamples.ParseError
			if errors.As(err, &pe) {
				return "", nil, 0, fmt.Errorf("%s:%d: %s", name, pe.Line, pe.Msg)
			}
			return "", nil, 0, fmt.Errorf("%s: %v", name, err)
		}
		at := f.ViolatedAt
		if at <= 0 || at > len(f.Trace) {
			at = len(f.Trace)
		}
		return f.Design.Name(), f.Trace, at, nil
	}
	sc, err := model.ParseScenario(string(data))
	if err != nil {
		msg := withFile(name, err.Error())
		if msg == err.Error() {
			msg = name + ": " + msg
		}
		return "", nil, 0, errors.New(msg)
	}
	if _, err := model.Replay(&sc.Design, sc.Trace); err != nil {
		return "", nil, 0, fmt.Errorf("%s: %v", name, err)
	}
	return strings.TrimSpace(sc.DesignName), sc.Trace, len(sc.Trace), nil
}
