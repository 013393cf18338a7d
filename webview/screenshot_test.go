package webview

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"lockcheck/model"
)

// The screenshots that the README and the guide show are taken by the
// browser tests (TestBrowserScreenshot, TestExplorerScreenshot) from
// pages that this package renders. A screenshot is stale when the page it
// shows has changed since it was taken: counterexamples/screenshots.sha256
// holds, for each, the SHA-256 of what its page was made of when it was
// taken, and TestScreenshotsCurrent renders those pages again (without a
// browser) and compares.
const (
	screenshotDir  = "../counterexamples"
	screenshotSums = screenshotDir + "/screenshots.sha256"
)

// screenshots are the screenshots, by file name, with the command that
// retakes one.
var screenshots = map[string]string{
	"demo2-timeline.png": "go test ./webview -run TestBrowserScreenshot -screenshot ../counterexamples/demo2-timeline.png",
	"demo2-explorer.png": "go test ./webview -run TestExplorerScreenshot -explorer-screenshot ../counterexamples/demo2-explorer.png",
}

// screenshotSource is what the page of screenshot name is made of: the
// bytes the browser was given: for the explorer its page, its style sheet
// and script, and the search answer the screenshot shows (its progress
// lines and its seconds left out: they are timing, not content).
func screenshotSource(t *testing.T, name string) []byte {
	t.Helper()
	switch name {
	case "demo2-timeline.png":
		_, page := demo2Page(t)
		return page
	case "demo2-explorer.png":
		dm, err := model.LoadDemo("demo2")
		require.NoError(t, err)
		ex, err := NewExplorer(ExplorerConfig{Design: "demo2"})
		require.NoError(t, err)
		page := getURL(t, ex, PageURL("demo2", dm.Scenario.Trace, explorerShotAt))
		require.Equal(t, 200, page.Code)
		search := getURL(t, ex, "/search/"+SchedulePath("demo2", dm.Scenario.Trace)+"?property=no-lost-update&at="+strconv.Itoa(explorerShotAt))
		require.Equal(t, 200, search.Code)
		var result []byte
		for _, line := range bytes.Split(bytes.TrimSpace(search.Body.Bytes()), []byte("\n")) {
			var l searchLine
			require.NoError(t, json.Unmarshal(line, &l))
			if l.Kind == "result" {
				l.Seconds = 0
				result, err = json.Marshal(l)
				require.NoError(t, err)
			}
		}
		require.NotNil(t, result, "the search gave no result")
		src := append(page.Body.Bytes(), result...)
		for _, asset := range []string{"/assets/explorer.css", "/assets/explorer.js"} {
			rec := getURL(t, ex, asset)
			require.Equal(t, 200, rec.Code, asset)
			src = append(src, rec.Body.Bytes()...)
		}
		return src
	}
	t.Fatalf("no screenshot %q", name)
	return nil
}

// screenshotSum is the hex SHA-256 of screenshot name's source.
func screenshotSum(t *testing.T, name string) string {
	sum := sha256.Sum256(screenshotSource(t, name))
	return hex.EncodeToString(sum[:])
}

// readSums reads a sums file: lines of "HEX  NAME", as sha256sum writes.
func readSums(data []byte) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("line %d: %q: want a SHA-256 in hex, two spaces and a file name", n, sc.Text())
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}

// writeSum records screenshot name's source sum, beside the others.
func writeSum(t *testing.T, name string) {
	t.Helper()
	data, err := os.ReadFile(screenshotSums)
	if os.IsNotExist(err) {
		data, err = nil, nil
	}
	require.NoError(t, err)
	sums, err := readSums(data)
	require.NoError(t, err)
	sums[name] = screenshotSum(t, name)
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	tmp := screenshotSums + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(b.String()), 0o644))
	require.NoError(t, os.Rename(tmp, screenshotSums))
}

// stale compares the recorded sums with the pages as rendered now (by
// sumOf) and says, a line each, which screenshot is missing, unrecorded
// or stale, and how to retake it.
func stale(recorded map[string]string, sumOf func(name string) string, exists func(name string) bool) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(screenshots)) {
		retake := "; retake it with: " + screenshots[name]
		switch rec, ok := recorded[name]; {
		case !exists(name):
			out = append(out, "counterexamples/"+name+" is missing"+retake)
		case !ok:
			out = append(out, "counterexamples/"+name+" has no recorded source in counterexamples/screenshots.sha256"+retake)
		case rec != sumOf(name):
			out = append(out, "counterexamples/"+name+" is stale: the page it shows has changed since it was taken"+retake)
		}
	}
	return out
}

// TestScreenshotsCurrent fails when a screenshot that the docs show no
// longer shows the page as this package renders it.
func TestScreenshotsCurrent(t *testing.T) {
	data, err := os.ReadFile(screenshotSums)
	require.NoError(t, err)
	sums, err := readSums(data)
	require.NoError(t, err)
	for name := range sums {
		require.Contains(t, screenshots, name, "screenshots.sha256 names a screenshot that no test takes")
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(screenshotDir, name))
		return err == nil
	}
	sumOf := func(name string) string { return screenshotSum(t, name) }
	require.Empty(t, stale(sums, sumOf, exists))

	// the check can fail: a page that changed by one byte since its
	// screenshot was taken, a screenshot never recorded, one deleted
	changed := func(name string) string {
		s := sha256.Sum256(append(screenshotSource(t, name), ' '))
		return hex.EncodeToString(s[:])
	}
	got := stale(sums, changed, exists)
	require.Len(t, got, len(screenshots))
	require.Contains(t, got[0], "counterexamples/demo2-explorer.png is stale: the page it shows has changed since it was taken; retake it with: go test ./webview -run TestExplorerScreenshot")
	got = stale(map[string]string{"demo2-explorer.png": sums["demo2-explorer.png"]}, sumOf, func(n string) bool { return n != "demo2-explorer.png" })
	require.Equal(t, []string{
		"counterexamples/demo2-explorer.png is missing; retake it with: " + screenshots["demo2-explorer.png"],
		"counterexamples/demo2-timeline.png has no recorded source in counterexamples/screenshots.sha256; retake it with: " + screenshots["demo2-timeline.png"],
	}, got)
	_, err = readSums([]byte("abc  x.png\n"))
	require.EqualError(t, err, `line 1: "abc  x.png": want a SHA-256 in hex, two spaces and a file name`)
}
