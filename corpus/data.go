package corpus

import (
	"os"
	"path/filepath"
)

// DataDir returns the directory of the shared datasets: $RLSEARCH_DATA when
// set, else the first "shared/data" found walking up from the working
// directory (the repository sits beside ../shared).
func DataDir() string {
	if d := os.Getenv("RLSEARCH_DATA"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "data")
	}
	for {
		cand := filepath.Join(dir, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("..", "shared", "data")
		}
		dir = parent
	}
}
