package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerifyCommand(t *testing.T) {
	dir, _ := buildIndex(t)
	if code, out, errs := runCmd(t, "verify", dir); code != 0 || !strings.Contains(out, dir+": ok") || !strings.Contains(errs, "verify: docs.zst ok") {
		t.Fatalf("verify of an intact index: code %d\n%s\n%s", code, out, errs)
	}
	// One flipped byte in the first (only) docstore block, which starts
	// after the 24-byte header.
	p := filepath.Join(dir, "docs.zst")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[30] ^= 1
	os.WriteFile(p, b, 0o644)
	code, out, errs := runCmd(t, "verify", "--quiet", dir)
	if code != 1 || out != "" || !strings.Contains(errs, p+": block 0 at offset 24 fails its checksum") {
		t.Fatalf("verify of a damaged index: code %d, want 1 and a message naming %s, block 0, offset 24\n%s\n%s", code, p, out, errs)
	}
	if code, _, errs := runCmd(t, "verify"); code != 2 || !strings.Contains(errs, "one index directory") {
		t.Fatalf("verify without a directory: code %d\n%s", code, errs)
	}
}
