package reward_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rlsearch/rlsearch/reward"
)

// The README's /v1/rewards/qa example: the body of POST /v1/rewards/qa
// and its answer (serve mounts Service.Serve through server).
func ExampleService_Serve() {
	s, _ := reward.New(reward.Config{})
	svc, _ := reward.NewService(reward.ServiceConfig{Scorer: s})
	var req reward.Request
	json.Unmarshal([]byte(`{"rollouts": [{"id": "a", "golden_answers": ["2009"], "response": "<answer>In 2009</answer>"}]}`), &req)
	resp, _ := svc.Serve(context.Background(), reward.KindQA, req)
	b, _ := json.Marshal(resp)
	fmt.Println(string(b))
	// Output: {"kind":"qa","judge":"lexical","rewards":[{"id":"a","answer":"In 2009","found":true,"em":0,"f1":0.6666666666666666,"contains":1}]}
}

func ExampleSearchP1_Score() {
	s, _ := reward.NewSearchP1(reward.SearchP1Config{})
	r, _ := s.Score(context.Background(), reward.SearchP1Rollout{
		ID: "r1", Question: "Who directed The Informant!?", GoldenAnswers: []string{"Steven Soderbergh"},
		Response: `<reasoning>1. Search for the director of The Informant!</reasoning>
<tool_call>{"name": "search", "arguments": {"query": "The Informant! director"}}</tool_call>
<tool_response>The Informant! is a 2009 film directed by Steven Soderbergh.</tool_response>
<answer>Soderbergh</answer>`,
		ReferencePlan: []string{"Find the director of The Informant!", "Confirm the film's year"},
	})
	// "Soderbergh" does not contain "Steven Soderbergh": r_acc = F1 = 2/3, r_reason = 1 (both gold
	// terms are in the evidence), outcome = 0.5·(0.5·2/3 + 0.5·1). The query covers the plan's one step
	// (s_self = 1) and the first of the two reference steps (s_ref = 0.5); path = max = 1.
	fmt.Printf("total %.4f = 0.3·path %.4f + 0.6·outcome %.4f + 0.1·format %.4f\n", r.Total, r.Path, r.Outcome, r.Format)
	fmt.Printf("s_self %.4f s_ref %.4f correct %v r_acc %.4f r_reason %.4f\n", r.SSelf, r.SRef, r.Correct, r.RAcc, r.RReason)
	// Output:
	// total 0.6500 = 0.3·path 1.0000 + 0.6·outcome 0.4167 + 0.1·format 1.0000
	// s_self 1.0000 s_ref 0.5000 correct false r_acc 0.6667 r_reason 1.0000
}
