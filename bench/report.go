package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// Report is one `rlsearch-bench run` run: the environment, the options, every
// repetition of every row, and what was skipped. report.json is its JSON.
type Report struct {
	Env          Environment `json:"environment"`
	Options      Options     `json:"options"`
	Started      time.Time   `json:"started"`
	Finished     time.Time   `json:"finished"`
	WallSeconds  float64     `json:"wall_seconds"`
	SuiteSeconds []SuiteTime `json:"suite_seconds,omitempty"`
	Rows         []Row       `json:"rows"`
	Skipped      []Skip      `json:"skipped,omitempty"`
}

// SuiteTime is the wall time of one suite (setup, cases and peers).
type SuiteTime struct {
	Suite   string  `json:"suite"`
	Seconds float64 `json:"seconds"`
}

// Skip says why a suite (Peer empty) or a peer of it did not run or did not
// finish.
type Skip struct {
	Suite  string `json:"suite"`
	Peer   string `json:"peer,omitempty"`
	Reason string `json:"reason"`
}

func (r *Report) skip(suite, peer string, err error) {
	r.Skipped = append(r.Skipped, Skip{Suite: suite, Peer: peer, Reason: err.Error()})
}

// Environment describes the machine and build a report was measured on.
type Environment struct {
	CPU         string     `json:"cpu"`
	Cores       int        `json:"cores"`
	GOMAXPROCS  int        `json:"gomaxprocs"`
	MemoryBytes int64      `json:"memory_bytes"`
	LoadBefore  [3]float64 `json:"load_before"`
	LoadAfter   [3]float64 `json:"load_after"`
	GoVersion   string     `json:"go_version"`
	OS          string     `json:"os"`
	Arch        string     `json:"arch"`
	Kernel      string     `json:"kernel,omitempty"`
	GitCommit   string     `json:"git_commit,omitempty"`
	GitDirty    bool       `json:"git_dirty,omitempty"`
	Hostname    string     `json:"hostname,omitempty"`
}

// CaptureEnv reads the environment now (LoadAfter is left zero). Fields it
// cannot read (no /proc, no git) stay empty.
func CaptureEnv() Environment {
	e := Environment{
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		OS: runtime.GOOS, Arch: runtime.GOARCH, LoadBefore: loadAvg(),
	}
	e.CPU = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		if n, err := strconv.ParseInt(strings.Fields(kb)[0], 10, 64); err == nil {
			e.MemoryBytes = n << 10
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	e.Hostname, _ = os.Hostname()
	e.GitCommit, e.GitDirty = gitCommit()
	return e
}

// procField returns the value of the first "name : value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func loadAvg() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// gitCommit is the VCS revision stamped into the binary, else `git
// rev-parse HEAD` in the working directory.
func gitCommit() (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), len(bytes.TrimSpace(st)) > 0
}

// Peer returns the rows of report r that share suite and config with row
// and come from another system (the peers of one of our rows).
func (r *Report) Peer(row Row) []Row {
	var out []Row
	for _, o := range r.Rows {
		if o.Suite == row.Suite && o.Config == row.Config && o.System != row.System {
			out = append(out, o)
		}
	}
	return out
}

// WriteJSON writes r as indented JSON to path atomically.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// ReadReport reads a report.json, or a bare JSON array of Row (a peer
// runner's output) as a report with only rows.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		rows, err := ReadRows(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &Report{Rows: rows}, nil
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bench: %s: not a report: %w", path, err)
	}
	for i, row := range r.Rows {
		if err := row.Validate(); err != nil {
			return nil, fmt.Errorf("bench: %s: row %d: %w", path, i, err)
		}
	}
	return &r, nil
}

// WriteFileAtomic writes data to path (mode 0644) through
// internal/atomicfile, so that readers never see a partial file.
func WriteFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
