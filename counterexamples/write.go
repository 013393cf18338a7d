package counterexamples

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"lockcheck/model"
)

// Write writes the counterexample of property in design d, shown by trace,
// into dir: FileBase.txt, the timeline page FileBase.html and, when the
// linearizability package gives one, porcupine's page
// FileBase-porcupine.html. bounds describes the search that found the
// trace (BoundsText). Each file is written atomically (a temporary file in
// dir, then a rename): a reader sees the old file or the new one, never
// half of one. It returns the .txt file's path.
//
// The file's regenerate command is `explore check -design NAME -out DIR`;
// WriteCounterexample takes another.
func Write(dir string, d model.Design, property string, trace []model.Action, bounds string) (string, error) {
	return WriteCounterexample(dir, Counterexample{Design: d, Property: property, Trace: trace, Bounds: bounds})
}

// WriteCounterexample is Write with every field given.
func WriteCounterexample(dir string, cx Counterexample) (string, error) {
	CleanStaleTemps(dir)
	base := FileBase(cx.Design, cx.Property)
	display := filepath.ToSlash(filepath.Join(dir, base+".txt"))
	r, err := Render(cx, display)
	if err != nil {
		return "", err
	}
	outs := r.Outputs()
	if r.Porcupine == nil {
		// a porcupine page of an earlier run of the same counterexample
		// is not this one's: a reader would take it for this run's
		p := filepath.Join(dir, base+"-porcupine.html")
		if head, err := readHead(p); err == nil && owned(base+"-porcupine.html", head) {
			if err := os.Remove(p); err != nil {
				return "", err
			}
		}
	}
	for _, out := range outs {
		if err := WriteFileAtomic(filepath.Join(dir, out.Name), out.Data); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, base+".txt"), nil
}

// Files are the files WriteCounterexample wrote for the .txt file txt:
// its timeline page, its porcupine page if it has one, and txt itself.
func Files(txt string) []string {
	base := strings.TrimSuffix(txt, ".txt")
	out := []string{base + ".html"}
	if st, err := os.Stat(base + "-porcupine.html"); err == nil && st.Mode().IsRegular() {
		out = append(out, base+"-porcupine.html")
	}
	return append(out, txt)
}

// Output is one file to write: a name in the folder and its bytes.
type Output struct {
	Name string
	Data []byte
}

// Outputs are the rendered files, the .txt last (so that a .txt on disk
// means its pages were written before it).
func (r *Rendered) Outputs() []Output {
	var outs []Output
	outs = append(outs, Output{r.Base + ".html", r.HTML})
	if r.Porcupine != nil {
		outs = append(outs, Output{r.Base + "-porcupine.html", r.Porcupine})
	}
	return append(outs, Output{r.Base + ".txt", r.Text})
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so that path never holds half of the data.
func WriteFileAtomic(path string, data []byte) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// the writer's process id in the name lets a later run tell a
	// temporary file of a killed writer from one being written, and the
	// name's tag tells one of ours from a user's file named alike
	var tmp *os.File
	for try := 0; ; try++ {
		tmp, err = os.OpenFile(filepath.Join(dir, TempFileName(name, os.Getpid(), rand.Uint32())), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// TempFileName is the name WriteFileAtomic gives the temporary file of
// name written by process pid: .NAME.tmp-PID-N-TAG, N a random number and
// TAG a hash of the rest. The tag is what lets CleanStaleTemps remove only
// the files this program made: a user's own .notes.tmp-123-4 has none.
func TempFileName(name string, pid int, n uint32) string {
	base := fmt.Sprintf(".%s.tmp-%d-%d", name, pid, n)
	return base + "-" + tempTag(base)
}

func tempTag(base string) string {
	h := fnv.New64a()
	h.Write([]byte("lockcheck WriteFileAtomic\x00"))
	h.Write([]byte(base))
	return fmt.Sprintf("%016x", h.Sum64())
}

// staleTemp matches TempFileName: the name without its tag, the PID, the tag.
var staleTemp = regexp.MustCompile(`^(\..+\.tmp-([0-9]+)-[0-9]+)-([0-9a-f]{16})$`)

// CleanStaleTemps removes the temporary files that a writer killed between
// create and rename left in dir: those named by TempFileName (tag and all)
// whose process has gone. A file named alike without the right tag is a
// user's and stays. It is best effort: a file it cannot judge or remove
// stays.
func CleanStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := staleTemp.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() || tempTag(m[1]) != m[3] {
			continue
		}
		pid, err := strconv.Atoi(m[2])
		if err != nil || processAlive(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
