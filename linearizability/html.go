package linearizability

import (
	"bytes"
	"encoding/json"
	"html"
	"slices"
	"strconv"
)

// The visualisation is porcupine's HTML page: a template with the CSS, the
// JavaScript and then the data as one JSON line, "const data = {…}", just
// before "render(data)". Porcupine lists the partial linearizations of a
// partition in Go map order and sorts them by length with an unstable sort,
// so two renderings of one history can differ. canonicalHTML rewrites the
// data with the partial linearizations in a fixed order (longest first,
// then by operation ids) and the "Largest" index recomputed the way
// porcupine computes it (the first longest partial holding the operation),
// so that the page is the same bytes every time. It also sets the title.
// If the page does not have the expected shape (a porcupine upgrade), the
// page is returned as it was, with ok false; a test checks ok.

var (
	dataStart = []byte("const data = ")
	dataEnd   = []byte("\n\n      render(data)")
	titleTag  = []byte("<title>Porcupine</title>")
	// porcupine labels the job rows by client number (0, 1, …); the page
	// names them as everything else does (A, B, …, the final read), from
	// the data's ClientNames
	rowLabels = [][2]string{
		{"const tag = i < realClients ? i.toString() :", "const tag = i < realClients ? (data.ClientNames?.[i] ?? i.toString()) :"},
		{"text.textContent = i < realClients ? i :", "text.textContent = i < realClients ? (data.ClientNames?.[i] ?? i) :"},
	}
)

// clientNames are the row labels of the job rows: A, B, … by ClientId,
// "final read" for the row of the counter read after every job.
func clientNames(data map[string]any) []string {
	n := 0
	final := -1
	parts, _ := data["Partitions"].([]any)
	for _, p := range parts {
		part, _ := p.(map[string]any)
		hist, _ := part["History"].([]any)
		for _, h := range hist {
			el, _ := h.(map[string]any)
			id, err := el["ClientId"].(json.Number).Int64()
			if err != nil {
				continue
			}
			n = max(n, int(id)+1)
			if md, _ := el["Metadata"].(string); md == finalMetadata {
				final = int(id)
			}
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = clientName(i)
		if i == final {
			names[i] = "final read"
		}
	}
	return names
}

type vizStep struct {
	Index            int
	StateDescription string
}

func canonicalHTML(page []byte, title string) (out []byte, ok bool) {
	end := bytes.LastIndex(page, dataEnd)
	if end < 0 {
		return page, false
	}
	start := bytes.LastIndex(page[:end], dataStart)
	if start < 0 {
		return page, false
	}
	start += len(dataStart)
	dec := json.NewDecoder(bytes.NewReader(page[start:end]))
	dec.UseNumber()
	var data map[string]any
	if err := dec.Decode(&data); err != nil {
		return page, false
	}
	parts, _ := data["Partitions"].([]any)
	for _, p := range parts {
		part, isMap := p.(map[string]any)
		if !isMap {
			return page, false
		}
		raw, err := json.Marshal(part["PartialLinearizations"])
		if err != nil {
			return page, false
		}
		var lins [][]vizStep
		if err := json.Unmarshal(raw, &lins); err != nil {
			return page, false
		}
		slices.SortStableFunc(lins, func(a, b []vizStep) int {
			if len(a) != len(b) {
				return len(b) - len(a)
			}
			return slices.CompareFunc(a, b, func(x, y vizStep) int { return x.Index - y.Index })
		})
		largest := map[string]int{}
		size := map[int]int{}
		for i, lin := range lins {
			for _, st := range lin {
				if size[st.Index] < len(lin) {
					size[st.Index] = len(lin)
					largest[strconv.Itoa(st.Index)] = i
				}
			}
		}
		if lins == nil {
			lins = [][]vizStep{}
		}
		part["PartialLinearizations"] = lins
		part["Largest"] = largest
	}
	data["ClientNames"] = clientNames(data)
	js, err := json.Marshal(data)
	if err != nil {
		return page, false
	}
	var b bytes.Buffer
	b.Grow(len(page) + len(title))
	head := page[:start-len(dataStart)]
	if i := bytes.Index(head, titleTag); i >= 0 && title != "" {
		b.Write(head[:i])
		b.WriteString("<title>" + html.EscapeString(title) + "</title>")
		b.Write(head[i+len(titleTag):])
	} else {
		b.Write(head)
	}
	b.Write(dataStart)
	b.Write(js)
	b.Write(page[end:])
	out = b.Bytes()
	for _, r := range rowLabels {
		if !bytes.Contains(out, []byte(r[0])) {
			return page, false // a porcupine upgrade: the test of ok says so
		}
		out = bytes.Replace(out, []byte(r[0]), []byte(r[1]), 1)
	}
	return out, true
}
