//go:build !unix

package index

import (
	"errors"
	"os"
)

// lockFile has no flock here: builds take no lock and cleanStale, unable
// to tell a live build from a crashed one, removes nothing that has a
// lock file.
func lockFile(f *os.File, wait bool) error {
	if wait {
		return nil
	}
	return errors.New("index: file locks are not supported on this platform")
}
