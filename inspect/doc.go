// Package inspect is the rollout inspector: it reads the rollout dumps of
// search-agent RL (verl's {"input", "output", "gts"}, Search-R1's flat
// {"prompt", "response"}, chat "messages" with retrieval_program tool
// calls, rlsearch trajectories with "turns", RPL reward rollouts with
// program results) and shows, per rollout, what the policy searched, what
// it was shown and why it was paid, and, per dump, the distribution of
// every reward component and the common failure patterns.
//
// Two front ends share one page (assets/, embedded with go:embed, no CDN,
// no external chart library): UI, an http.Handler that `rlsearch serve`
// mounts at /ui/ (dumps given with --inspect, paged and summarised in Go,
// programs replayed and edited against the live index through the
// server's own /v1 endpoints), and WriteReport, one self-contained HTML
// file (`rlsearch inspect ROLLOUTS.jsonl --out report.html`) whose
// Content-Security-Policy allows only its own inline script and style.
//
// Reading: ParseLine recognises a line's format and joins gold from a
// questions file (Gold) by id, question or prompt text, as
// integrations/mutate_rollouts.py does; a line that cannot be read is a
// BadLine (counted, and listed with its number and reason), never a
// failure of the dump. Analyzer.Analyze reads programs (sdk.ExtractCode,
// sdk.Recognize), searches, answers, printed documents and outcome codes
// from the turns and scores the rollout with package reward's Scorer (the
// code behind POST /v1/rewards/*) on inputs it keeps beside the results.
// Dump keeps one compact Row per rollout (about 0.5 KB) and the line's
// offset, and reads a rollout again when it is opened, so a 100,000-line
// dump needs the memory of its rows, not of its text. Tracer replays
// programs with recording retrievers and reranker to show every call's
// candidates with scores, gold and printed marks.
//
// Everything from a rollout reaches the page as text (textContent,
// attribute values), never as HTML; the served page's CSP forbids inline
// script and foreign origins.
//
// Concurrency: Analyzer, Dump, Tracer and UI are safe for concurrent use;
// Dump.Load runs once.
//
// Example (what `rlsearch inspect dump.jsonl --out report.html --gold questions.jsonl` does):
//
//	f, _ := os.Open("questions.jsonl")
//	gold, err := inspect.ReadGold(f, "questions.jsonl")
//	an, err := inspect.NewAnalyzer(inspect.AnalyzerConfig{Gold: gold})
//	sum, err := inspect.WriteReport(ctx, "report.html", "dump.jsonl", an, inspect.ReportConfig{})
//	fmt.Println(sum.Rollouts, sum.Bad)
package inspect
