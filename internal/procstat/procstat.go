// Package procstat reads a process's memory and CPU figures from Linux
// /proc, for the benchmarks that report peak RSS and idle CPU (issue 13's
// hostile-program measurement, ann's memory benchmarks). Linux only: the
// functions return an error elsewhere. Safe for concurrent use.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// dir is /proc/PID, or /proc/self for pid 0.
func dir(pid int) string {
	if pid == 0 {
		return "/proc/self"
	}
	return "/proc/" + strconv.Itoa(pid)
}

// Bytes reads a kB field of /proc/PID/status ("VmRSS", "VmHWM", ...) in
// bytes; pid 0 is the calling process.
func Bytes(pid int, field string) (int64, error) {
	b, err := os.ReadFile(dir(pid) + "/status")
	if err != nil {
		return 0, err
	}
	i := bytes.Index(b, []byte("\n"+field+":"))
	if i < 0 {
		return 0, fmt.Errorf("procstat: no %s in %s/status", field, dir(pid))
	}
	f := bytes.Fields(b[i+len(field)+2:])
	if len(f) == 0 {
		return 0, fmt.Errorf("procstat: empty %s in %s/status", field, dir(pid))
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("procstat: %s: %w", field, err)
	}
	return kb << 10, nil
}

// RSS is the resident set size (VmRSS) of pid in bytes, 0 when it cannot
// be read (the process ended, or not Linux).
func RSS(pid int) int64 {
	n, _ := Bytes(pid, "VmRSS")
	return n
}

// CPU is the user + system CPU time of pid (fields 14 and 15 of
// /proc/PID/stat, in clock ticks of 10 ms: USER_HZ is 100 on Linux), 0
// when it cannot be read.
func CPU(pid int) time.Duration {
	b, err := os.ReadFile(dir(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count fields after ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return 0
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(string(f[11]), 10, 64)
	s, _ := strconv.ParseInt(string(f[12]), 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}
