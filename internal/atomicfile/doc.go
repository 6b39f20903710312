// Package atomicfile writes files so that a reader (or a restart after a
// crash) sees either the old file or the whole new one, never a part: the
// bytes go to a temporary file in the destination's directory, which is
// fsynced, renamed over the destination, and the directory fsynced so that
// the rename itself survives a power loss.
//
// A leftover temporary file of a crashed writer is named base+".tmp-*"
// beside the destination (the pattern every writer here used before this
// package); nothing reads it, and the next successful write does not
// depend on it.
package atomicfile
