package hybrid

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestExecJSONLDecodesLikeTheEndpoint: `rlsearch hybrid exec` lines are
// decoded as /v1/hybrid/execute decodes a program, so a near-miss key
// ("SQL") is an error line instead of a program run without its filter.
func TestExecJSONLDecodesLikeTheEndpoint(t *testing.T) {
	c := shipped(t, "amazon_toys")
	in := strings.Join([]string{
		`{"id": "ok", "sql": "WHERE brand = 'Hornby'", "retrieval_list": []}`,
		`{"id": "near", "SQL": "WHERE brand = 'Hornby'", "retrieval_list": []}`,
		`{"id": "wrapped", "program": {"sql": "WHERE brand = 'Hornby'", "retrieval_list": [], "extra": 1}}`,
	}, "\n")
	var out bytes.Buffer
	if err := c.ExecJSONL(context.Background(), strings.NewReader(in), "test", &out); err != nil {
		t.Fatal(err)
	}
	lines := testutil.JSONLines(t, out.String())
	if len(lines) != 3 {
		t.Fatalf("%d output lines, want 3:\n%s", len(lines), out.String())
	}
	if _, bad := lines[0]["error"]; bad {
		t.Errorf("valid program: %v", lines[0])
	}
	for _, i := range []int{1, 2} {
		if msg, _ := lines[i]["error"].(string); msg == "" {
			t.Errorf("line %d accepted: %v", i+1, lines[i])
		}
	}
}
