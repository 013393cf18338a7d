package counterexamples

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

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
	for _, out := range r.Outputs() {
		if err := WriteFileAtomic(filepath.Join(dir, out.Name), out.Data); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, base+".txt"), nil
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
	// temporary file of a killed writer from one being written
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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

// staleTemp matches WriteFileAtomic's temporary files: .NAME.tmp-PID-N.
var staleTemp = regexp.MustCompile(`^\..+\.tmp-([0-9]+)-[0-9]+$`)

// CleanStaleTemps removes the temporary files that a writer killed between
// create and rename left in dir: those whose process has gone. It is best
// effort: a file it cannot judge or remove stays.
func CleanStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := staleTemp.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || processAlive(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
