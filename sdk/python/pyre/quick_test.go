package pyre

import "testing"

func TestQuick(t *testing.T) {
	r := MustCompile(`x*`, 0)
	got, err := r.Sub("-", "abxd", 0)
	if err != nil || got != "-a-b--d-" {
		t.Fatalf("%q %v", got, err)
	}
}
