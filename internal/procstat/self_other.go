//go:build !unix

package procstat

import "time"

// SelfCPU is 0 where getrusage is missing (see self_unix.go).
func SelfCPU() time.Duration { return 0 }
