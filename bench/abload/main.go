// Command abload compares the /retrieve throughput of two rlsearch
// binaries (an old and a new build) over one index in the same run:
// both servers start side by side (`serve --cache-bytes off`, so every
// request is searched), then closed-loop rounds at one concurrency
// alternate between them per retriever (old, new; new, old on the next
// round), so that the load of a shared machine falls on both alike. It
// prints one line per measurement (with the server's CPU time per request,
// from /proc/PID/stat: less sensitive to other load than requests/s) and,
// per retriever, the new/old ratio of the summed requests/s with the
// spread of the per-round ratios, and the old/new ratio of CPU per request.
//
//	go run ./bench/abload -old /tmp/rlsearch-main -new bin/rlsearch -index IX -model MODEL -args "--dense-backend hnsw" -c 32 -duration 10s -rounds 3
//
// With -old-url (and -old-pid for its CPU time) the old side is a server
// already running that speaks Search-R1's /retrieve, e.g. the Python peer
// bench/peers/searchr1_server.py; likewise -new-url and -new-pid.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/bench/loadgen"
)

func main() {
	data := os.Getenv("RLSEARCH_DATA")
	if data == "" {
		data = "../shared/data"
	}
	oldBin := flag.String("old", "", "old rlsearch binary (required)")
	newBin := flag.String("new", "", "new rlsearch binary (required)")
	ix := flag.String("index", "", "index directory (required)")
	model := flag.String("model", "", "E5 model directory (for the e5 retriever)")
	extra := flag.String("args", "", "more serve flags, space-separated")
	questions := flag.String("questions", filepath.Join(data, "wiki_multihop", "questions.jsonl"), "queries (JSONL with \"question\")")
	retrievers := flag.String("retrievers", "bm25,e5", "retrievers to measure")
	conc := flag.Int("c", 32, "concurrency")
	k := flag.Int("k", 10, "topk")
	dur := flag.Duration("duration", 10*time.Second, "time per measurement")
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	oldURL := flag.String("old-url", "", "instead of -old: the base URL of a running server (Search-R1 /retrieve)")
	newURL := flag.String("new-url", "", "instead of -new: the base URL of a running server")
	oldPID := flag.Int("old-pid", 0, "with -old-url: its process id, for CPU time per request")
	newPID := flag.Int("new-pid", 0, "with -new-url: its process id")
	flag.Parse()
	if (*oldBin == "") == (*oldURL == "") || (*newBin == "") == (*newURL == "") || (*ix == "" && (*oldBin != "" || *newBin != "")) {
		fmt.Fprintln(os.Stderr, "abload: give each side as a binary (-old, -new, with -index) or a running server (-old-url, -new-url)")
		flag.Usage()
		os.Exit(2)
	}
	qs, err := readQuestions(*questions)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := []string{"serve", "--index", *ix, "--addr", "127.0.0.1:0", "--cache-bytes", "off"}
	if *model != "" {
		args = append(args, "--model", *model)
	}
	args = append(args, strings.Fields(*extra)...)
	urls, pids := map[string]string{}, map[string]int{}
	for _, name := range []string{"old", "new"} {
		if u := map[string]string{"old": *oldURL, "new": *newURL}[name]; u != "" {
			urls[name], pids[name] = strings.TrimRight(u, "/"), map[string]int{"old": *oldPID, "new": *newPID}[name]
			continue
		}
		bin := map[string]string{"old": *oldBin, "new": *newBin}[name]
		url, pid, stop, err := start(ctx, bin, args)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
		defer stop()
		urls[name], pids[name] = url, pid
	}
	for _, retr := range strings.Split(*retrievers, ",") {
		var sum = map[string]float64{}
		cpu, reqs := map[string]float64{}, map[string]float64{}
		var ratios []float64
		for r := 0; r < *rounds; r++ {
			order := []string{"old", "new"}
			if r%2 == 1 {
				order = []string{"new", "old"}
			}
			rps := map[string]float64{}
			for _, name := range order {
				cpu0 := cpuSeconds(pids[name])
				res, err := loadgen.RunClosed(ctx, loadgen.ClosedConfig{
					URL:         urls[name] + "/retrieve",
					Concurrency: *conc,
					Duration:    *dur,
					Body: func(i int) []byte {
						b, _ := json.Marshal(map[string]any{"queries": []string{qs[i%len(qs)]}, "topk": *k, "retriever": retr})
						return b
					},
				})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				used := cpuSeconds(pids[name]) - cpu0
				cpu[name] += used
				reqs[name] += float64(res.OK)
				fmt.Printf("round %d %-4s %-3s c=%d: %8.1f requests/s  p50 %6.1f ms  p99 %6.1f ms  %6.3f CPU ms/request  errors %d %s\n", r, retr, name, *conc, res.Throughput,
					res.P50.Seconds()*1e3, res.P99.Seconds()*1e3, 1e3*used/float64(max(res.OK, 1)), res.Errors, res.FirstError)
				rps[name] = res.Throughput
				sum[name] += res.Throughput
			}
			ratios = append(ratios, rps["new"]/rps["old"])
		}
		lo, hi := ratios[0], ratios[0]
		for _, x := range ratios {
			lo, hi = min(lo, x), max(hi, x)
		}
		fmt.Printf("%s: new/old = %.3f (per-round ratios %.3f…%.3f); CPU per request old/new = %.3f (%.3f vs %.3f ms)\n", retr, sum["new"]/sum["old"], lo, hi,
			(cpu["old"]/reqs["old"])/(cpu["new"]/reqs["new"]), 1e3*cpu["old"]/reqs["old"], 1e3*cpu["new"]/reqs["new"])
	}
}

// cpuSeconds is the user + system CPU time of process pid so far
// (/proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s), 0 when it
// cannot be read.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // after "pid (comm) "
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}

// start runs bin with args and returns the URL it prints ("listening on
// http://ADDR"), its pid and a function that stops it.
func start(ctx context.Context, bin string, args []string) (string, int, func(), error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = nil
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return strings.Fields(url)[0], cmd.Process.Pid, stop, nil
		}
	}
	stop()
	return "", 0, nil, fmt.Errorf("%s exited before listening", bin)
}

func readQuestions(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct {
			Question string `json:"question"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		qs = append(qs, q.Question)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return qs, sc.Err()
}
