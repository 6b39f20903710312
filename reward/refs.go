package reward

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// ErrBadReferences marks a malformed reference-plan file.
var ErrBadReferences = errors.New("reward: bad reference plan file")

// ReferenceRecord is one line of a reference-plan cache (JSONL):
// {"qid": "hotpotqa-5a80...", "plan": ["step", ...]}.
type ReferenceRecord struct {
	QID  string   `json:"qid"`
	Plan []string `json:"plan"`
}

// ReadReferences reads a reference-plan cache: JSONL of ReferenceRecord,
// blank lines skipped, lines up to 16 MiB. A malformed line, an empty qid
// or plan, or a repeated qid is an error wrapping ErrBadReferences and
// naming the line.
func ReadReferences(r io.Reader) (map[string][]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	out := map[string][]string{}
	first := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec ReferenceRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadReferences, line, err)
		}
		var plan []string
		for _, s := range rec.Plan {
			if s = strings.TrimSpace(s); s != "" {
				plan = append(plan, s)
			}
		}
		switch {
		case rec.QID == "":
			return nil, fmt.Errorf("%w: line %d: empty qid", ErrBadReferences, line)
		case len(plan) == 0:
			return nil, fmt.Errorf("%w: line %d: empty plan", ErrBadReferences, line)
		case first[rec.QID] != 0:
			return nil, fmt.Errorf("%w: line %d: qid %q repeats line %d", ErrBadReferences, line, rec.QID, first[rec.QID])
		}
		first[rec.QID] = line
		out[rec.QID] = plan
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadReferences, err)
	}
	return out, nil
}

// LoadReferences reads the reference-plan cache at path.
func LoadReferences(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reward: %w", err)
	}
	defer f.Close()
	m, err := ReadReferences(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// writeFileAtomic writes data to path through internal/atomicfile
// (temp file, fsync, rename, directory fsync), so readers see the old or
// the new file, never a part.
func writeFileAtomic(path string, data []byte) error {
	err := atomicfile.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("reward: write %s: %w", path, err)
	}
	return nil
}
