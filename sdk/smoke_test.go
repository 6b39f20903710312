package sdk

import "testing"

func TestSmoke(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{Reranker: &lexReranker{}})
	res := run(t, rt, `
docs = fuse([sparse("Robin Hood film director", k=20), sparse("Otto Bathurst", k=20)])
docs = rerank("Robin Hood 2018 film", docs, k=5)
print(docs[:3])
print(len(docs), docs[0].routes, docs[0].score)
`)
	t.Logf("%+v\n%s", res, res.Observation)
}
