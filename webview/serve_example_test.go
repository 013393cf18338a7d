package webview_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"lockcheck/webview"
)

// The explorer is an http.Handler: serve it on a loopback address (explore
// serve does, on 127.0.0.1) and open its StartURL in a browser.
func ExampleNewExplorer() {
	ex, err := webview.NewExplorer(webview.ExplorerConfig{Design: "demo2"})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(ex)
	defer srv.Close()
	fmt.Println(ex.StartURL())
	// a link names the design and the schedule: this one is A's acquire
	resp, err := http.Get(srv.URL + "/explore/demo2/-/A_acquire")
	if err != nil {
		panic(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(page), `data-action="B acquire"`))
	// Output:
	// /explore/demo2
	// 200 true
}
