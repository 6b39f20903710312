// Package sdk is the retrieval-program SDK of RPL ("Learning to Program
// Retrievals", Section 3 and Appendix B): retrieval primitives over an
// opened index, a sandboxed runtime for the short Python-like programs a
// policy writes between <code> tags, the typed program subset the mutation
// verifier works on, and batch execution for rollouts.
//
// Only what a program prints comes back to the policy (the observation):
// a program can retrieve 50 candidates, fuse and rerank them, and print
// three. Pure Go, no cgo, no build tags; CPU only (dense retrieval uses
// whatever backend the index's "e5" retriever has).
//
// # Programs
//
// Programs are Python 3 (as CPython 3.11 runs them), executed by
// sdk/python: our own scanner, parser and interpreter in pure Go,
// deterministic, no I/O. Functions (recursion to depth 1,000), lambda,
// comprehensions and generator expressions, f-strings, % and str.format,
// try/except/finally, sets with CPython's iteration order, and the modules
// math, re, collections, itertools, functools, heapq, statistics, json and
// string are available (README "Which Python runs"). class, with, yield,
// async, match, other modules, open(), exec(), eval() and dunder access are
// refused with an unsupported_feature error observation naming the
// construct, its line and a fix.
//
// Builtins (widths are capped by Budgets.MaxWidth, default 50, the top of
// RPL's width ladder):
//
//	question                     the request's question (str)
//	dense(query, k=10)           E5 dense top-k (Config.DenseRetriever, default "e5"); list of Doc
//	sparse(query, k=10)          BM25 top-k (Config.SparseRetriever, default "bm25"); list of Doc
//	fuse(lists, k=60)            reciprocal rank fusion of a list of lists, or fuse(a, b, ...):
//	                             score = Σ 1/(k + rank), rank 1-based (Cormack et al. 2009; RPL k = 60)
//	dedup(docs)                  exact duplicates removed, first kept, order kept
//	rerank(query, docs, k=len)   reorder by the reranker (Config.Reranker), keep k; scores become rerank scores
//	doc(id)                      a Doc this program has retrieved (unknown_document otherwise)
//	print(*args, sep=" ")        a Doc, or lists of Docs, print in the observation format and count as
//	                             printed evidence; anything else prints like Python's print
//
// A Doc has .id, .title, .text, .contents ("Title"\ntext), .score (float: the
// retriever, RRF or rerank score of the primitive that produced it) and
// .routes (tuple of "dense"/"sparse" that found it). Docs compare equal when
// id and contents are equal and hash by id, so `d in docs`, sets and dict
// keys work; they are not ordered (sort with key=lambda d: d.score).
//
// Contract rules (RPL Appendix B): exact duplicates are removed (by dedup,
// fuse, rerank and within a retrieval list); the same id with different
// contents is an error (document_conflict) within a list, across lists and
// across routes; rerank can only reorder and cut the documents it was
// given; without a reranker rerank fails with "unavailable", never a fake
// score; a dense() call without a dense retriever fails the same way.
//
// # Budgets and errors
//
// Per program (Budgets; defaults in config.go): 1,000,000 steps (statements, calls, iterations and each builtin's cost rule),
// 10 s wall clock, 64 MiB of charged memory (Budgets.MaxMemoryBytes), 16
// retrieval calls, 1,000 retrieved candidates, width 50 per call, 400
// documents per rerank call, 20 printed documents (RPL), an observation of
// 2,048 policy tokens (RPL; Config.Tokens, BoundTokens by default: never
// below 1/4 of Qwen3's count, 1.20× Qwen3 on wiki passages) and 256 KiB, 64
// KiB of source, 2 KiB per query, and, as a process-wide backstop, a heap
// growth of 2 GiB (Config.MaxHeapBytes, sampled every millisecond): a
// program it stops ends "overloaded" (not budget_exceeded: the heap is the
// process's, other requests' garbage included) and Serve answers the
// request 503 with Retry-After. A request may lower the budgets, never
// raise them.
//
// Memory and work are charged before they happen (meter.go): the program's
// syntax tree is rewritten so that every operation that can allocate or
// scan in proportion to its operands (binary + - * % | & ^ << in, slices,
// method calls such as join, replace, split, format, extend, comprehension
// elements, and the builtins list, tuple, sorted, reversed, enumerate, zip,
// dict, set, str, repr, bytes, int, min, max, all, any, fail, getattr,
// print) goes through a hook that estimates its allocation (an upper
// estimate, cumulative per program: bytes it caused to be allocated, freed
// or not) and its work (steps: one per element, one per KiB copied,
// n·log2 n per sort, quadratic for big-integer products and decimal
// conversions) and refuses it with budget_exceeded when it would pass the
// memory or step budget. sorted and the size walks check the deadline every
// 4,096 elements. Not charged: list, tuple and dict literals, bounded by the
// source size times the steps. A program charged over 16 MiB returns free
// memory to the OS when it ends (debug.FreeOSMemory, at most once a second).
//
// A failing program's observation is what it printed before the failure,
// then one line (Config.ErrorFormat):
//
//	Error (budget_exceeded): line 3: sparse: width k = 1000000000 exceeds the cap of 50
//
// with the code in Result.Code: ok, syntax_error, unsupported_feature,
// runtime_error, budget_exceeded, unknown_document, document_conflict,
// unavailable, internal_error (the index or a model failed: not the
// program's fault), cancelled (the caller went away). A primitive that
// fails because the program's deadline passed is budget_exceeded, never
// internal_error. Source containing a NUL byte is a syntax_error naming its
// offset (programs are text; write \\x00 inside a string). A print that would break a budget is not printed. The
// runtime never panics on a program; the same program on the same index and
// configuration gives a byte-identical observation (timeouts aside, which
// depend on the machine; the per-program memory budget is deterministic,
// and the process-wide heap backstop answers 503 instead of an
// observation).
//
// Known limits: the few operations whose charge lets them run long (a
// huge int("9" * 10**6) with a raised step budget; an uncharged literal)
// cannot be interrupted inside: the caller still gets budget_exceeded
// (time) 50 ms after the deadline (abandonGrace); the abandoned goroutine
// runs until the operation ends, keeping its Config.MaxConcurrent slot so
// that the process stays bounded. A Go panic inside the interpreter (a Go runtime
// panic on some extreme values) is a runtime_error, not internal_error.
//
// # Typed programs
//
// Program is RPL's typed grammar: 1–4 distinct queries, mode dense | sparse
// | fuse, width ∈ {3, 5, 10, 20, 50}, rerank ∈ {0, 3, 5, 10, 20}, print ≤ 20.
// Program.Source renders canonical source; Recognize reads canonical (and
// equivalent hand-written) source back, or says why a program is not in the
// subset (ErrNotTyped). Runtime.Evaluate runs a Program with the Go
// primitives, without the interpreter, and gives the same observation as
// Runtime.RunProgram (the metamorphic test checks this).
//
// # Execution
//
// Runtime.Run runs one program; Runtime.RunBatch runs many concurrently,
// at most Config.MaxConcurrent (default 2 × GOMAXPROCS) at once across all
// of a Runtime's batches and requests, each program's time budget starting
// when it starts executing, so results do not depend on the batch size.
// Among the executing programs, RunBatch coalesces the retrieval calls
// that wait at the same moment into one Retrieve per route and memoises
// (route, query) at the widest width asked (Cache; top-k lists of exact
// retrievers are prefixes of each other), (route, query, width) on
// approximate retrievers (HNSW), so that coalesced and cached answers are
// the cold ones.
// Runtime.Serve answers POST /v1/programs/execute and Verifier.Serve POST
// /v1/programs/mutate as plain calls (decoded requests in, responses or
// errors carrying a kind out: *rlsearch.FieldError for bad input, wrapping
// rlsearch.ErrTooLarge over a limit); server owns the HTTP side,
// and the package does not import net/http. `rlsearch programs` runs JSONL
// files. A Runtime and a Cache are safe for concurrent use.
//
//	rt, _ := sdk.New(sdk.Config{Retrievers: ix.Retrievers(), Docs: ix})
//	res := rt.Run(ctx, sdk.Request{Code: "print(sparse(question, k=3))", Question: q}, nil)
//	fmt.Print(res.Observation)
package sdk
