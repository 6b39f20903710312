package corpus

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseRows(t *testing.T) {
	dir := t.TempDir()
	literal := filepath.Join(dir, "x@1:2")
	if err := os.WriteFile(literal, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg      string
		path     string
		from, to int
		bad      bool
	}{
		{"a.jsonl", "a.jsonl", 0, 0, false},
		{"a.jsonl@3:", "a.jsonl", 3, 0, false},
		{"a.jsonl@:18175", "a.jsonl", 0, 18175, false},
		{"a.jsonl@5:9", "a.jsonl", 5, 9, false},
		{"a@b.jsonl@1:2", "a@b.jsonl", 1, 2, false},
		{literal, literal, 0, 0, false}, // a file named like a range wins
		{"a.jsonl@9:5", "", 0, 0, true},
		{"a.jsonl@5:5", "", 0, 0, true},
		{"a.jsonl@x", "", 0, 0, true},
		{"a.jsonl@99999999999999999999:", "", 0, 0, true},
		{"/home/u@x/c.jsonl", "/home/u@x/c.jsonl", 0, 0, false}, // an @ in a directory is no range
	} {
		t.Run(tc.arg, func(t *testing.T) {
			path, from, to, err := ParseRows(tc.arg)
			if tc.bad {
				if !errors.Is(err, ErrBadRows) {
					t.Fatalf("ParseRows(%q) = %q %d %d %v, want an ErrBadRows error", tc.arg, path, from, to, err)
				}
				return
			}
			if err != nil || path != tc.path || from != tc.from || to != tc.to {
				t.Fatalf("ParseRows(%q) = %q [%d, %d) %v, want %q [%d, %d)", tc.arg, path, from, to, err, tc.path, tc.from, tc.to)
			}
		})
	}
}
