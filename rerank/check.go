package rerank

import (
	"context"
	"errors"
	"fmt"

	"github.com/rlsearch/rlsearch"
)

// ErrCheckFailed is returned by Check when a reranker with real weights
// does not behave like one.
var ErrCheckFailed = errors.New("rerank: startup check failed")

// checkQuery and its documents: a question with one passage that answers it
// and passages that do not (any trained reranker ranks the first on top).
var (
	checkQuery = "What is the capital of France?"
	checkDocs  = []rlsearch.Document{
		{ID: "relevant", Contents: "\"Paris\"\nParis is the capital and most populous city of France."},
		{ID: "irrelevant-1", Contents: "\"Mitochondrion\"\nThe mitochondrion is an organelle found in the cells of most eukaryotes."},
		{ID: "irrelevant-2", Contents: "\"Basketball\"\nBasketball is a team sport in which two teams of five players try to score points."},
	}
)

// Check is the startup check for a reranker with real weights: on a fixed
// question, the passage that answers it must score strictly higher than
// each passage that does not, and the scores must not all be equal (a
// constant score means a broken export, for example logits read from the
// wrong position or a wrong yes/no token). Errors wrap ErrCheckFailed (or
// the reranker's own error). Models with random weights fail it; servers
// let the operator skip it for test models.
func Check(ctx context.Context, r rlsearch.Reranker) error {
	scores, err := r.Rerank(ctx, checkQuery, checkDocs)
	if err != nil {
		return fmt.Errorf("rerank: startup check of %s: %w", r.Name(), err)
	}
	if len(scores) != len(checkDocs) {
		return fmt.Errorf("%w: %s returned %d scores for %d documents", ErrCheckFailed, r.Name(), len(scores), len(checkDocs))
	}
	constant := true
	for _, s := range scores[1:] {
		if s != scores[0] {
			constant = false
		}
	}
	if constant {
		return fmt.Errorf("%w: %s gives every document the same score %g", ErrCheckFailed, r.Name(), scores[0])
	}
	for i, s := range scores[1:] {
		if !(scores[0] > s) {
			return fmt.Errorf("%w: %s scores the answering passage %g, not above the unrelated passage %q (%g)",
				ErrCheckFailed, r.Name(), scores[0], checkDocs[i+1].ID, s)
		}
	}
	return nil
}
