package index

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A build works in a temporary sibling of its destination, <base>.tmp-N,
// and holds an exclusive flock on <base>.tmp-N.lock (which holds its pid)
// from before the directory is created until after it is gone (renamed
// into place or removed), and through the removal of a replaced index
// moved aside to <base>.tmp-N.old. The kernel drops the lock when the
// process dies, even by SIGKILL, so at the start of every build
// cleanStale can tell a crashed build's leftovers (lock file missing or
// not held) from a live build's (lock held) and removes only the former.
// Only names of exactly these three shapes are ever considered.

// buildLock is a held build lock and the temporary directory it guards.
type buildLock struct {
	f   *os.File
	tmp string // the temporary build directory, <base>.tmp-N
}

// staleName matches what a build of base leaves next to it: its temporary
// directory, the replaced index moved aside, and its lock file. N is the
// decimal random part that os.CreateTemp / os.MkdirTemp generate.
func staleName(base string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `\.tmp-[0-9]+(\.old|\.lock)?$`)
}

// acquireBuild creates and locks <parent>/<base>.tmp-N.lock, then creates
// the directory <base>.tmp-N (mode 0700) and returns both.
func acquireBuild(parent, base string) (*buildLock, error) {
	for attempt := 0; attempt < 20; attempt++ {
		f, err := os.CreateTemp(parent, base+".tmp-*.lock")
		if err != nil {
			return nil, fmt.Errorf("index: create build lock: %w", err)
		}
		if err := lockFile(f, true); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("index: lock %s: %w", f.Name(), err)
		}
		// A concurrent cleanStale may have locked the fresh file first (it
		// was not held yet) and removed it: then retry with a new name.
		if !stillLinked(f) {
			f.Close()
			continue
		}
		fmt.Fprintf(f, "pid %d\n", os.Getpid())
		tmp := strings.TrimSuffix(f.Name(), ".lock")
		if err := os.Mkdir(tmp, 0o700); err != nil {
			os.Remove(f.Name())
			f.Close()
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return nil, fmt.Errorf("index: %w", err)
		}
		return &buildLock{f: f, tmp: tmp}, nil
	}
	return nil, fmt.Errorf("index: could not create a build directory next to %s", filepath.Join(parent, base))
}

// release removes the lock file and drops the lock. The temporary
// directory must be gone (published or removed) before.
func (l *buildLock) release() {
	os.Remove(l.f.Name())
	l.f.Close()
}

// stillLinked reports whether f is still the file at its name.
func stillLinked(f *os.File) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(f.Name())
	return err == nil && os.SameFile(a, b)
}

// cleanStale removes leftovers of crashed builds of <parent>/<base>: every
// <base>.tmp-N directory, <base>.tmp-N.old directory and <base>.tmp-N.lock
// file whose lock is not held. It writes one line per removal (with its
// size) to log when non-nil. A live build's files (lock held), files of
// other names and entries of an unexpected type are left alone. Errors
// removing one leftover are reported and do not stop the build.
func cleanStale(parent, base string, log io.Writer) error {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	re := staleName(base)
	stems := map[string]bool{}
	var order []string
	for _, e := range ents {
		name := e.Name()
		if !re.MatchString(name) {
			continue
		}
		stem := strings.TrimSuffix(strings.TrimSuffix(name, ".old"), ".lock")
		if !stems[stem] {
			stems[stem] = true
			order = append(order, stem)
		}
	}
	var errs []error
	for _, stem := range order {
		lockPath := filepath.Join(parent, stem+".lock")
		var held *os.File
		f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
		switch {
		case err == nil:
			st, serr := f.Stat()
			if serr != nil || !st.Mode().IsRegular() {
				f.Close()
				continue
			}
			if lerr := lockFile(f, false); lerr != nil {
				f.Close()
				continue // a live build holds it (or locks are unsupported)
			}
			if !stillLinked(f) {
				f.Close()
				continue // another cleaner got there first
			}
			held = f
		case errors.Is(err, fs.ErrNotExist):
			// No lock file: the lock is created before the directory and
			// removed after it, so the directory belongs to no live build
			// (or to a build by a binary from before build locks).
		default:
			errs = append(errs, fmt.Errorf("index: open %s: %w", lockPath, err))
			continue
		}
		for _, p := range []string{stem, stem + ".old"} {
			path := filepath.Join(parent, p)
			st, err := os.Lstat(path)
			if err != nil || !st.IsDir() {
				continue
			}
			size := dirSize(path)
			if err := os.RemoveAll(path); err != nil {
				errs = append(errs, fmt.Errorf("index: remove leftover %s: %w", path, err))
				continue
			}
			if log != nil {
				fmt.Fprintf(log, "index: removed %s left by an interrupted build (%s)\n", path, humanBytes(size))
			}
		}
		if held != nil {
			if err := os.Remove(lockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("index: remove %s: %w", lockPath, err))
			} else if log != nil {
				fmt.Fprintf(log, "index: removed stale build lock %s\n", lockPath)
			}
			held.Close()
		}
	}
	return errors.Join(errs...)
}

// dirSize is the total size of the regular files under dir (best effort).
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// humanBytes formats n as "123 B", "4.5 MB", "14.2 GB" (powers of 1000).
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
