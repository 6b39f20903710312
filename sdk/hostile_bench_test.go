package sdk

import (
	"context"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/procstat"
)

// rssBytes is the process's resident set size (0 off Linux).
func rssBytes() uint64 { return uint64(procstat.RSS(0)) }

// cpuTime is the process's user+system CPU time (0 off Linux).
func cpuTime() time.Duration { return procstat.CPU(0) }

// BenchmarkHostilePrograms runs issue 13's four hostile programs at once on
// one Runtime (default budgets but unlimited steps, so that the deadline
// stops the 200 ms sort and the 1 s comprehension) while a client
// loop retrieves, and reports: peak RSS above the baseline (sampled every
// 2 ms) against 4 × the memory budget, p99 of the retrieval calls, the
// slowest deadline→reply, deadline→idle CPU (the process's CPU rate below
// 20% of one core over 50 ms) and the RSS after the programs.
func BenchmarkHostilePrograms(b *testing.B) {
	ix := wikiIndex(b)
	rt := newRT(b, ix, Config{Budgets: Budgets{MaxSteps: 1 << 40}}) // time, not steps, must stop the sort
	progs := []Request{
		{Code: "a = \"x\"*(1<<27)\nb = a+a\nc = b+b\nd = c+c\nprint(len(d))"},
		{Code: "l = list(range(1<<27))"},
		{Code: "y = list(range(600000))\nz = sorted(y, reverse=True)", Budgets: &Budgets{TimeoutMS: 200}},
		{Code: "l = [\"%d\" % i for i in range(1 << 30)]", Budgets: &Budgets{TimeoutMS: 1000}},
	}
	for i := 0; i < b.N; i++ {
		runtime.GC()
		debug.FreeOSMemory()
		base := rssBytes()
		var peak uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { // RSS sampler
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
					peak = max(peak, rssBytes())
				}
			}
		}()
		var lat []time.Duration
		go func() { // retrieval client
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				if _, err := rt.Search(context.Background(), RouteSparse, "Robin Hood film director", 10, nil); err != nil {
					b.Error(err)
					return
				}
				lat = append(lat, time.Since(t0))
				time.Sleep(time.Millisecond)
			}
		}()
		var pw sync.WaitGroup
		late := make([]time.Duration, len(progs))
		for j, p := range progs {
			pw.Add(1)
			go func() {
				defer pw.Done()
				t0 := time.Now()
				res := rt.Run(context.Background(), p, nil)
				to := 10 * time.Second
				if p.Budgets != nil {
					to = time.Duration(p.Budgets.TimeoutMS) * time.Millisecond
				}
				if res.Code == CodeInternal || res.Code == CodeOK {
					b.Errorf("program %d: %s %q", j, res.Code, res.Error)
				}
				if strings.Contains(res.Error, "time budget") {
					late[j] = time.Since(t0) - to
				}
			}()
		}
		pw.Wait()
		replied := time.Now()
		close(stop) // the retrieval client stops too, so that the CPU measured next is the programs'
		wg.Wait()
		// Idle: CPU rate under 20% of a core over 50 ms windows.
		idle := time.Duration(-1)
		for prev := cpuTime(); time.Since(replied) < 5*time.Second; {
			time.Sleep(50 * time.Millisecond)
			c := cpuTime()
			if c-prev <= 10*time.Millisecond {
				idle = time.Since(replied) - 50*time.Millisecond
				break
			}
			prev = c
		}
		time.Sleep(1100 * time.Millisecond) // releaseMemory runs in the background
		after := rssBytes()
		sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
		var p99 time.Duration
		if len(lat) > 0 {
			p99 = lat[len(lat)*99/100]
		}
		b.ReportMetric(float64(peak-base)/(1<<20), "peakRSS-MiB-over-base")
		b.ReportMetric(float64(4*DefaultMaxMemoryBytes)/(1<<20), "4xbudget-MiB")
		b.ReportMetric(float64(base)/(1<<20), "baseRSS-MiB")
		b.ReportMetric(float64(after)/(1<<20), "afterRSS-MiB")
		b.ReportMetric(float64(p99)/1e6, "retrieve-p99-ms")
		b.ReportMetric(float64(maxDuration(late))/1e6, "deadline-to-reply-ms")
		b.ReportMetric(float64(idle)/1e6, "reply-to-idle-ms")
	}
}

func maxDuration(d []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range d {
		m = max(m, x)
	}
	return m
}
