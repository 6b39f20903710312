// Command hostile measures `rlsearch serve` while hostile programs run
// (issue 13): it starts the server on an index, waits for it, records its
// baseline RSS, then sends four hostile programs at once to
// POST /v1/programs/execute while a client loop sends POST /retrieve, and
// reports
//
//   - the server's peak RSS (VmRSS from /proc/PID/status every 2 ms) and
//     its growth over the baseline, against 1.2 × 4 × the per-program
//     memory budget (sdk.DefaultMaxMemoryBytes);
//   - /retrieve latency percentiles meanwhile (one request at a time);
//   - for the programs stopped by their time budget, the time from their
//     deadline to the reply;
//   - the time from the last reply until the server's CPU use falls under
//     20% of a core (over 50 ms windows, /proc/PID/stat);
//   - the RSS 2 s after the programs.
//
// Linux only (/proc). Usage:
//
//	go build -o bin/rlsearch ./cmd/rlsearch
//	bin/rlsearch index --corpus CORPUS.jsonl --out /tmp/ix
//	go run ./bench/hostile --bin bin/rlsearch --index /tmp/ix
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rlsearch/rlsearch/internal/procstat"
	"github.com/rlsearch/rlsearch/sdk"
)

// programs are issue 13's hostile programs (the sort on 600,000 elements so
// that it fits the 64 MiB memory budget and is stopped by its 200 ms deadline),
// plus one that holds 40 MiB and grows a list until its memory or time
// budget stops it; timeout_ms 0 means the server's default (10 s).
var programs = []struct {
	code      string
	timeoutMS int64
}{
	{"a = \"x\"*(1<<29)\nb = a+a\nc = b+b\nprint(len(c))", 0},
	{"l = list(range(1<<27))", 0},
	{"y = list(range(600000))\nz = sorted(y, reverse=True)", 200},
	{"s = \"x\"*(40<<20)\nl = [\"%d\" % i for i in range(1 << 30)]", 1000},
}

func main() {
	bin := flag.String("bin", "bin/rlsearch", "rlsearch binary")
	ix := flag.String("index", "", "index directory (required)")
	rounds := flag.Int("rounds", 3, "rounds of four programs")
	only := flag.Int("only", 0, "run only program N (1-based) of the four, to find which one costs what")
	steps := flag.Uint64("steps", 1<<40, "serve --program-max-steps: high, so that time budgets, not steps, stop the sort and the comprehension")
	flag.Parse()
	if *ix == "" {
		fmt.Fprintln(os.Stderr, "hostile: --index is required")
		os.Exit(2)
	}
	if *only > 0 && *only <= len(programs) {
		programs = programs[*only-1 : *only]
	}
	if err := run(*bin, *ix, *rounds, *steps); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

func run(bin, ix string, rounds int, steps uint64) error {
	cmd := exec.Command(bin, "serve", "--index", ix, "--addr", "127.0.0.1:0", "--program-max-steps", strconv.FormatUint(steps, 10))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = nil // serve logs every request
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("serve did not start: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	base := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	pid := cmd.Process.Pid
	for i := 0; i < 50; i++ { // warm up
		if _, err := retrieve(base); err != nil {
			return err
		}
	}
	time.Sleep(500 * time.Millisecond)
	baseline := rss(pid)
	fmt.Printf("serve pid %d, baseline RSS %.1f MiB, per-program budget %d MiB\n", pid, mib(baseline), sdk.DefaultMaxMemoryBytes>>20)
	for r := 0; r < rounds; r++ {
		var peak uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
					peak = max(peak, rss(pid))
				}
			}
		}()
		var lat []time.Duration
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d, err := retrieve(base)
				if err != nil {
					fmt.Fprintln(os.Stderr, "retrieve:", err)
					return
				}
				lat = append(lat, d)
			}
		}()
		var pw sync.WaitGroup
		lines := make([]string, len(programs))
		var late time.Duration
		var mu sync.Mutex
		for i, p := range programs {
			pw.Add(1)
			go func() {
				defer pw.Done()
				t0 := time.Now()
				code, msg, err := execute(base, p.code, p.timeoutMS)
				el := time.Since(t0)
				if err != nil {
					lines[i] = "error: " + err.Error()
					return
				}
				lines[i] = fmt.Sprintf("%-16s %6.0f ms  %.110s", code, float64(el)/1e6, msg)
				if strings.Contains(msg, "time budget") {
					to := 10 * time.Second
					if p.timeoutMS > 0 {
						to = time.Duration(p.timeoutMS) * time.Millisecond
					}
					mu.Lock()
					late = max(late, el-to)
					mu.Unlock()
				}
			}()
		}
		pw.Wait()
		replied := time.Now()
		close(stop) // the retrieval client stops too, so that the CPU measured next is the programs'
		wg.Wait()
		idle := time.Duration(-1)
		for prev := cpu(pid); time.Since(replied) < 10*time.Second; {
			time.Sleep(50 * time.Millisecond)
			c := cpu(pid)
			if c-prev <= 10*time.Millisecond {
				idle = time.Since(replied) - 50*time.Millisecond
				break
			}
			prev = c
		}
		time.Sleep(2 * time.Second)
		after := rss(pid)
		sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
		pct := func(q float64) float64 {
			if len(lat) == 0 {
				return 0
			}
			return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / 1e6
		}
		fmt.Printf("round %d:\n", r+1)
		for i, l := range lines {
			fmt.Printf("  program %d: %s\n", i+1, l)
		}
		goal := 1.2 * 4 * float64(sdk.DefaultMaxMemoryBytes)
		fmt.Printf("  peak RSS %.1f MiB (+%.1f over baseline; goal ≤ 1.2 × 4 × budget + baseline = %.0f MiB)\n", mib(peak), mib(peak-min(peak, baseline)), mib(uint64(goal)+baseline))
		fmt.Printf("  /retrieve: %d requests, p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", len(lat), pct(0.5), pct(0.99), pct(1))
		fmt.Printf("  deadline → reply (time-budget stops): %.0f ms; last reply → idle CPU: %.0f ms; RSS 2 s later %.1f MiB\n", float64(late)/1e6, float64(idle)/1e6, mib(after))
	}
	return nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func retrieve(base string) (time.Duration, error) {
	t0 := time.Now()
	resp, err := http.Post(base+"/retrieve", "application/json", strings.NewReader(`{"queries": ["who directed the Robin Hood film"], "topk": 10}`))
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("/retrieve: status %d", resp.StatusCode)
	}
	return time.Since(t0), nil
}

func execute(base, code string, timeoutMS int64) (string, string, error) {
	req := sdk.Request{Code: code}
	if timeoutMS > 0 {
		req.Budgets = &sdk.Budgets{TimeoutMS: timeoutMS}
	}
	body, _ := json.Marshal(sdk.BatchRequest{Programs: []sdk.Request{req}})
	resp, err := http.Post(base+"/v1/programs/execute", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var br sdk.BatchResponse
	if err := json.NewDecoder(resp.Body).Decode(&br); err != nil || len(br.Results) != 1 {
		return "", "", fmt.Errorf("status %d: bad response (%v)", resp.StatusCode, err)
	}
	return string(br.Results[0].Code), br.Results[0].Error, nil
}

// rss is the VmRSS of pid in bytes (0 when unreadable).
func rss(pid int) uint64 { return uint64(procstat.RSS(pid)) }

// cpu is pid's user+system CPU time.
func cpu(pid int) time.Duration { return procstat.CPU(pid) }
