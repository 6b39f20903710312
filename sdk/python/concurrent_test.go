package python

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentImports: programs on many goroutines import every module
// and call its functions and methods at once, and each prints what it
// prints alone. Under -race it fails if an import writes shared state
// (module makers registering methods and cost rules at import time raced
// in TestPythonDifferential before modules were built once, at init).
func TestConcurrentImports(t *testing.T) {
	src := "import " + strings.Join(allowedModules, "\nimport ") + `
from collections import Counter, deque
m = re.search(r"(\w+) (\d+)", "film 2009")
print(m.group(1), m.group(2), re.findall("a", "banana"))
print(json.dumps({"k": [1, 2.5]}), math.sqrt(16), statistics.mean([1, 2, 3]))
print(Counter("abca").most_common(1), list(itertools.islice(itertools.count(), 3)))
d = deque([1, 2], maxlen=2)
d.append(3)
print(list(d), heapq.nsmallest(2, [5, 1, 3]), functools.reduce(lambda a, b: a + b, [1, 2, 3]), string.digits[:3])
`
	want := run(t, src)
	if strings.Contains(want, "Error") || strings.Contains(want, "compile") || strings.Contains(want, "Stop") {
		t.Fatalf("the program fails alone: %s", want)
	}
	var wg sync.WaitGroup
	got := make([]string, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if s := run(t, src); s != want {
					got[i] = s
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, s := range got {
		if s != "" {
			t.Fatalf("goroutine %d printed %q, alone %q", i, s, want)
		}
	}
}
