package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// ErrClosed is returned by Write, Commit and Abort after Commit or Abort.
var ErrClosed = errors.New("atomicfile: writer already committed or aborted")

// Writer is a file being written in place of Path. It is an *os.File for
// the caller's writes (including Seek and WriteAt), which become visible at
// Path only on Commit. Not safe for concurrent use.
type Writer struct {
	*os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts writing path, which gets exactly the permissions perm on
// Commit (set with chmod, so the umask does not apply). The temporary file lives in path's
// directory so that the final rename never crosses file systems. Errors:
// those of os.CreateTemp (a missing directory, no permission).
func Create(path string, perm os.FileMode) (*Writer, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &Writer{File: f, path: path, perm: perm}, nil
}

// Path is the destination.
func (w *Writer) Path() string { return w.path }

// TempName is the temporary file's path (removed by Abort, renamed by
// Commit).
func (w *Writer) TempName() string { return w.File.Name() }

// Commit makes the written bytes the content of Path: chmod, fsync, close,
// rename, fsync of the directory. On any error the temporary file is
// removed and Path is left as it was (except when only the directory
// fsync failed: then the rename happened but may not be durable, and the
// error says so).
func (w *Writer) Commit() error {
	if w.done {
		return ErrClosed
	}
	w.done = true
	f := w.File
	err := f.Chmod(w.perm)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), w.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("atomicfile: write %s: %w", w.path, err)
	}
	if err := SyncDir(filepath.Dir(w.path)); err != nil {
		return fmt.Errorf("atomicfile: %s renamed, but its directory was not synced: %w", w.path, err)
	}
	return nil
}

// Abort discards the temporary file; Path is untouched. Abort after
// Commit returns ErrClosed and does nothing, so `defer w.Abort()` is safe
// on every path.
func (w *Writer) Abort() error {
	if w.done {
		return ErrClosed
	}
	w.done = true
	w.File.Close()
	return os.Remove(w.File.Name())
}

// WriteFile writes path atomically with the bytes fn writes to the
// temporary file (buffer them if fn writes many small pieces). An error of
// fn aborts the write and is returned as it is.
func WriteFile(path string, perm os.FileMode, fn func(io.Writer) error) error {
	w, err := Create(path, perm)
	if err != nil {
		return err
	}
	if err := fn(w.File); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

// SyncDir fsyncs a directory so that renames and creations in it are
// durable. File systems that cannot sync a directory (EINVAL) are not an
// error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}
