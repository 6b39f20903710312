// Package hybrid executes ProRetrieval's hybrid retrieval programs (paper
// 003, §3.1): a SQL WHERE expression over a collection's structured columns
// whose placeholders <text_i> / <image_i> stand for the top-K results of
// vector (or BM25) retrievals on text and image fields.
//
//	{"sql": "WHERE brand = 'Hornby' AND price < 30 AND product_id IN <text_0>",
//	 "retrieval_list": [{"type": "text", "field": "title", "query": "steam locomotive"}]}
//
// Pure Go, no cgo, no build tags, CPU only (SQLite through modernc.org/sqlite;
// E5 fields use whatever rlsearch.Encoder the caller passes).
//
// # Collections
//
// A collection directory (Build, Open) holds collection.json (the Schema and
// index descriptions), rows.db (SQLite: table rows with _row, the id column
// and the structured columns, one index per column; table texts with the
// text fields) and one index per text field: BM25 (package bm25, the
// default) or E5 vectors (an rlsearch.Encoder + exact ann.Flat search), and
// one vector index per image field built from user-supplied vectors. Rows
// come from a JSONL file; Schema maps JSON paths to columns (see the shipped
// schemas/amazon_toys.json and schemas/enron_emails.json, BuiltinSchema).
// At query time the database is opened read-only (mode=ro, immutable=1,
// PRAGMA query_only=1).
//
// # Integrity
//
// collection.json (format 2, CollectionFormat) carries a manifest, written
// last by Build inside the temporary directory that is renamed into place:
// the size and CRC-32C of every other file (rows.db, *.bm25, *.vec,
// *.rows), the row count of each rows.db table, and a CRC-32C of its own
// decoded contents. Open checks all of it before using anything — every
// byte of every file is read once (about 8 ms for each shipped collection,
// 7 and 17 MB) — then the row counts of both tables as it loads them; a
// mismatch fails with an error wrapping ErrCorrupt that names the file. A
// whole-file checksum is needed because SQLite does not checksum values:
// a flipped byte inside a value passes PRAGMA quick_check, and one in an
// unindexed column passes integrity_check too, while the collection
// serves wrong rows. The CRCs guard against damage, not against someone
// who rewrites the manifest too. Collections of format 1 (built before the
// manifest) are refused with ErrRebuild: rebuild them with Build. CheckIntegrity
// (`rlsearch check DIR`) adds what Open does not run: integrity_check,
// _row numbering, bm25.Index.Check of each BM25 file and a full read of
// each vector shard and row map.
//
// # Safety
//
// Parse turns the sql text into an AST (comparisons, AND/OR/NOT,
// parentheses, IN lists, BETWEEN, LIKE, IS [NOT] NULL, LOWER/UPPER/LENGTH,
// string and numeric literals, placeholders); Check validates it against the
// schema and the retrieval_list. Everything else — a second statement,
// comments, subqueries, UNION, ATTACH, PRAGMA, other functions, parameters,
// operators — is rejected with an *Error naming the position and the
// reason (ErrSyntax, ErrRejected, ErrCheck, ErrLimit; all wrap
// rlsearch.ErrBadInput). An apostrophe inside a string that ends the literal
// early ('Children's') gets its own message showing the apostrophe doubled,
// the one error the paper's trained models still make (Figure 5). The SQL that
// runs is rendered from the AST (SQL): identifiers come from the schema,
// every literal and every candidate row is a bound parameter.
//
// # Execution and ranking
//
// Each retrieval entry returns its top K rows (K = 20, §3.1); the
// placeholder becomes a membership test on those rows; SQLite evaluates the
// WHERE clause. Result rows are ranked by reciprocal rank fusion
// (k = 60) of their ranks in the positive entries (placeholders under an
// even number of negations), ties by collection order; see Result. An
// independent plain-Go evaluator of the same AST (EvalGo) is the test
// oracle for the SQL path. The selected rows stream from SQLite (at most
// OpenConfig.MaxRows+1 of them, LIMIT) and only those the ranking can
// return are kept, so a program's memory does not grow with what its WHERE
// clause selects; selecting more than MaxRows rows is an *Error of Kind
// ErrTooManyRows.
//
// # Benchmarks and metrics
//
// Generate implements the query-construction pipeline of §3.2 steps i–iii
// (levels L1/L2/L3, two-level Boolean templates, grounding in gold rows,
// compilation, pruning with the structural-only super-query, execution and
// filtering); a Verbalizer does step iv (TemplateVerbalizer, or
// OpenAIVerbalizer against an OpenAI-compatible endpoint). Score and
// Evaluate compute Hit@1, Hit@3, MRR, NDCG@3 and execution success overall,
// per level and per modality.
//
// # Serving
//
// Service.Serve answers POST /v1/hybrid/execute (batch of programs, one
// result or error per program) as a plain call; server owns the
// HTTP side (decoding, statuses). NewExecutor adapts collections to
// reward.HybridExecutor for the ProRetrieval reward. The only HTTP in this
// package is an outbound client: OpenAIVerbalizer calls an
// OpenAI-compatible chat endpoint.
//
// A Collection, Executor and Service are safe for concurrent use.
//
//	c, err := hybrid.Open(ctx, "collections/amazon_toys", hybrid.OpenConfig{})
//	res, err := c.Execute(ctx, hybrid.Program{SQL: "WHERE rating >= 4.5 AND product_id IN <text_0>",
//		RetrievalList: []hybrid.Retrieval{{Type: "text", Field: "reviews", Query: "durable"}}})
//	fmt.Println(res.IDs[:3], res.Total)
package hybrid
