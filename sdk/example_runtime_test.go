package sdk

import (
	"context"
	"fmt"

	"github.com/rlsearch/rlsearch"
)

// Two programs from the README against a stub index (see bench_test.go):
// wide retrieval with a narrow print, and a multi-query fuse with rerank.
// With an opened index use Config{Retrievers: ix.Retrievers(), Docs: ix}.
func ExampleRuntime_Run() {
	rt, err := New(Config{
		Retrievers: map[string]rlsearch.Retriever{"e5": stubRetriever{Route: "e5"}, "bm25": stubRetriever{Route: "bm25"}},
		Docs:       stubCorpus{},
		Reranker:   stubReranker{},
	})
	if err != nil {
		panic(err)
	}
	wide := `
docs = dense(question, k=50)          # 50 candidates stay in the program
keep = [d for d in docs if "passage" in d.text]
print(keep[:2])                       # only 2 reach the policy
`
	fused := `
queries = [question, "Otto Bathurst filmography"]
lists = []
for q in queries:
    lists.append(dense(q, k=20))
    lists.append(sparse(q, k=20))
docs = fuse(lists)                    # RRF, k = 60
top = rerank(question, docs, k=5)
print(top[:2])
print("candidates:", len(docs), "routes of the best:", top[0].routes)
`
	for _, src := range []string{wide, fused} {
		res := rt.Run(context.Background(), Request{Code: src, Question: "Who directed Robin Hood (2018)?"}, nil)
		fmt.Printf("%s%s %v calls=%d candidates=%d\n", res.Observation, res.Code, res.PrintedIDs, res.Stats.RetrievalCalls, res.Stats.Candidates)
	}
	// Output:
	// Doc 1(Title: "Title 73") Text of stub passage 73.
	// Doc 2(Title: "Title 80") Text of stub passage 80.
	// ok [doc-73 doc-80] calls=1 candidates=50
	// Doc 1(Title: "Title 3") Text of stub passage 3.
	// Doc 2(Title: "Title 101") Text of stub passage 101.
	// candidates: 30 routes of the best: ('dense', 'sparse')
	// ok [doc-3 doc-101] calls=4 candidates=80
}
