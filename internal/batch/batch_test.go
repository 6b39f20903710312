package batch

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// feed queues items on a buffered channel so that they are all waiting.
func feed(items ...int) chan int {
	c := make(chan int, len(items))
	for _, it := range items {
		c <- it
	}
	return c
}

func TestFullAndCarry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []int
		cfg   Config[int]
		want  [][]int
	}{
		{"full by count", []int{1, 2, 3, 4, 5}, Config[int]{Max: 2}, [][]int{{1, 2}, {3, 4}, {5}}},
		{"size overflow is carried", []int{2, 2, 3, 1}, Config[int]{Max: 4, Size: func(i int) int { return i }}, [][]int{{2, 2}, {3, 1}}},
		{"first larger than max runs alone", []int{9, 1, 1}, Config[int]{Max: 4, Size: func(i int) int { return i }}, [][]int{{9}, {1, 1}}},
		{"alone items", []int{1, 7, 1, 1}, Config[int]{Max: 8, Alone: func(i int) bool { return i == 7 }}, [][]int{{1}, {7}, {1, 1}}},
		{"max < 1 means 1", []int{1, 2}, Config[int]{}, [][]int{{1}, {2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := feed(tc.items...)
			stop := make(chan struct{})
			tc.cfg.Stop = stop
			g := New(in, tc.cfg)
			var got [][]int
			for range tc.want {
				b, ok := g.Next()
				if !ok {
					t.Fatalf("Next reported false after %v", got)
				}
				got = append(got, b)
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
				t.Fatalf("batches %v, want %v (order kept, overflow carried)", got, tc.want)
			}
		})
	}
}

// TestTimeout: a batch that does not fill is returned once Wait passes,
// and holds what arrived meanwhile; no timing is asserted beyond that the
// call returns.
func TestTimeout(t *testing.T) {
	in := make(chan int)
	g := New(in, Config[int]{Max: 100, Wait: 20 * time.Millisecond})
	go func() { in <- 1; in <- 2 }()
	b, ok := g.Next()
	if !ok || len(b) == 0 || b[0] != 1 {
		t.Fatalf("got %v %v, want a batch starting with 1", b, ok)
	}
	if len(b) == 1 { // 2 came after the timeout
		if b2, _ := g.Next(); !slices.Equal(b2, []int{2}) {
			t.Fatalf("second batch %v, want [2]", b2)
		}
	}
}

// TestArrivedPast: a first item that arrived longer than Wait ago does not
// wait at all: the batch holds only what is queued.
func TestArrivedPast(t *testing.T) {
	in := make(chan int) // unbuffered, nobody sends more
	old := time.Now().Add(-time.Hour)
	g := New(in, Config[int]{Max: 10, Wait: time.Hour, Arrived: func(int) time.Time { return old }})
	go func() { in <- 1 }()
	if b, ok := g.Next(); !ok || !slices.Equal(b, []int{1}) {
		t.Fatalf("got %v %v, want [1] without waiting an hour", b, ok)
	}
}

func TestStop(t *testing.T) {
	t.Run("while waiting for a first item", func(t *testing.T) {
		stop := make(chan struct{})
		g := New(make(chan int), Config[int]{Max: 4, Wait: time.Hour, Stop: stop})
		close(stop)
		if b, ok := g.Next(); ok {
			t.Fatalf("got %v, want false after Stop", b)
		}
	})
	t.Run("while gathering, with a carried item", func(t *testing.T) {
		stop := make(chan struct{})
		in := make(chan int)
		g := New(in, Config[int]{Max: 3, Wait: time.Hour, Size: func(i int) int { return i }, Stop: stop})
		go func() { in <- 1; in <- 3 }() // 3 overflows: carried
		b, ok := g.Next()
		if !ok || !slices.Equal(b, []int{1}) {
			t.Fatalf("first batch %v %v, want [1]", b, ok)
		}
		// The carried 3 fills the next batch by itself (3 = Max).
		go func() { in <- 1 }()
		b, _ = g.Next()
		if !slices.Equal(b, []int{3}) {
			t.Fatalf("second batch %v, want [3]", b)
		}
		done := make(chan []int)
		go func() { b, _ := g.Next(); done <- b }() // gets the 1, waits an hour for more
		time.Sleep(10 * time.Millisecond)
		close(stop)
		if b := <-done; !slices.Equal(b, []int{1}) {
			t.Fatalf("batch cut by Stop %v, want [1]", b)
		}
		if b, ok := g.Next(); ok {
			t.Fatalf("after Stop got %v, want false", b)
		}
	})
}

// TestConcurrentProducers (-race): items from many goroutines all come out
// exactly once, in batches no larger than Max.
func TestConcurrentProducers(t *testing.T) {
	in := make(chan int)
	stop := make(chan struct{})
	g := New(in, Config[int]{Max: 7, Wait: time.Millisecond, Stop: stop})
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				in <- p*100 + i
			}
		}()
	}
	go func() { wg.Wait(); close(stop) }()
	seen := map[int]bool{}
	for {
		b, ok := g.Next()
		if !ok {
			break
		}
		if len(b) > 7 {
			t.Fatalf("batch of %d > Max 7", len(b))
		}
		for _, it := range b {
			if seen[it] {
				t.Fatalf("item %d twice", it)
			}
			seen[it] = true
		}
	}
	if len(seen) != 800 {
		t.Fatalf("%d items out, want 800", len(seen))
	}
}

func TestRun(t *testing.T) {
	in := feed(1, 2, 3, 4, 5)
	stop := make(chan struct{})
	var got [][]int
	New(in, Config[int]{Max: 2, Stop: stop}).Run(func(b []int) {
		got = append(got, b)
		if len(got) == 3 {
			close(stop)
		}
	})
	if want := [][]int{{1, 2}, {3, 4}, {5}}; !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Fatalf("Run saw %v, want %v", got, want)
	}
}
