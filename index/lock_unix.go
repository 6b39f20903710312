//go:build unix

package index

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, waiting for it when wait is set.
// Without wait it fails when another open file description holds it.
func lockFile(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
