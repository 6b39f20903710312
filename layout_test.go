package rlsearch_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rlsearch/rlsearch"

// TestImportFloors checks the floors of the package documentation on the
// real import graph (go list, non-test imports): every import of a module
// package points down.
func TestImportFloors(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Skipf("go list: %v (needs the go command)", err)
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	under := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	// allowed reports whether package from may import package to (both
	// relative to the module; "" is the root package).
	allowed := func(from, to string) bool {
		switch {
		case from == "":
			return false // the root imports nothing of the module
		case under(from, "internal"):
			return to == "" || under(to, "internal")
		case from == "server":
			return to == "" || under(to, "internal")
		case from == "server/router":
			return to == "" || to == "server" || under(to, "internal")
		case under(from, "server"): // server/app
			return !under(to, "cmd") && !under(to, "bench") && to != from
		case from == "cmd/rlsearch" || under(from, "cmd/internal"):
			return !under(to, "bench") // the serving binary and what it shares link no harness (TestServingBinaryDeps)
		case under(from, "cmd"):
			return true
		case under(from, "bench"):
			return !under(to, "cmd") // the harness measures every floor, the serving tree included
		}
		// A domain package.
		return !under(to, "server") && !under(to, "bench") && !under(to, "cmd")
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := rel(f[0])
		for _, imp := range f[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			n++
			if to := rel(imp); !allowed(from, to) {
				t.Errorf("%q imports %q: an arrow up the floors (see the package documentation)", "/"+from, "/"+to)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d imports inside the module: go list did not list the packages", n)
	}
}
