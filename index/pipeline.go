package index

import (
	"context"
	"io"

	"github.com/rlsearch/rlsearch/corpus"
)

// readBatch is passages read and decoded by readCorpus, in corpus order.
type readBatch struct {
	passages []corpus.Passage
	bytes    int64 // corpus bytes read after the last passage
	err      error // the corpus error that ends the stream (not io.EOF)
}

// readBatchSize is the number of passages per readBatch, and
// readBatchQueue the batches queued ahead of the indexer: at most
// (readBatchQueue+2)·readBatchSize passages (≈ 5k, a few MB) are held.
const (
	readBatchSize  = 512
	readBatchQueue = 8
)

// readCorpus reads and JSON-decodes rd on its own goroutine, so that
// decoding overlaps with docstore compression and BM25 indexing, and sends
// batches in corpus order. The channel closes after the last batch (one
// with err set on a corpus error) or when ctx is done; the caller must
// drain it before closing rd.
func readCorpus(ctx context.Context, rd *corpus.Reader) <-chan readBatch {
	out := make(chan readBatch, readBatchQueue)
	go func() {
		defer close(out)
		batch := make([]corpus.Passage, 0, readBatchSize)
		send := func(b readBatch) bool {
			select {
			case out <- b:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			p, err := rd.Next()
			if err == io.EOF {
				if len(batch) > 0 {
					send(readBatch{passages: batch, bytes: rd.BytesRead()})
				}
				return
			}
			if err != nil {
				send(readBatch{passages: batch, bytes: rd.BytesRead(), err: err})
				return
			}
			batch = append(batch, p)
			if len(batch) == readBatchSize {
				if !send(readBatch{passages: batch, bytes: rd.BytesRead()}) {
					return
				}
				batch = make([]corpus.Passage, 0, readBatchSize)
			}
		}
	}()
	return out
}
