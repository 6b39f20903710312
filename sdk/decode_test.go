package sdk

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeBatchTypeErrors checks that JSON type errors name the field by
// its JSON path with the program's index, not by Go type names.
func TestDecodeBatchTypeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body, field, msg string
	}{
		{"id number", `{"programs":[{"id":1,"code":"print(1)"}]}`, "programs[0].id", "programs[0].id must be a string, got number"},
		{"second program", `{"programs":[{"code":"print(1)"},{"code":true}]}`, "programs[1].code", "programs[1].code must be a string, got bool"},
		{"budgets", `{"programs":[{"code":"print(1)","budgets":{"max_steps":"x"}}]}`, "programs[0].budgets.max_steps", "must be an integer, got string"},
		{"programs not a list", `{"programs":"x"}`, "programs", "programs must be a list, got string"},
		{"inline", `{"code":5}`, "code", "code must be a string, got number"},
		{"coalesce", `{"code":"print(1)","coalesce":"yes"}`, "coalesce", "coalesce must be a boolean, got string"},
		{"unknown program field", `{"programs":[{"code":"print(1)"},{"code":"x","bogus":1}]}`, "programs[1].bogus", `unknown field "programs[1].bogus"`},
		{"unknown top-level field", `{"code":"print(1)","bogus":1}`, "bogus", `unknown field "bogus"`},
		{"near-miss", `{"Code":"print(1)"}`, "Code", `unknown field "Code": did you mean "code"?`},
		{"not json", `{"programs":`, "", "invalid JSON"},
		{"trailing brackets", `{"code":"print(1)"}]]]not json`, "", "unexpected data after the top-level object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, field, err := DecodeBatch(strings.NewReader(tc.body))
			if err == nil || !errors.Is(err, ErrBadArgument) {
				t.Fatalf("err = %v, want an ErrBadArgument", err)
			}
			if field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got field %q, error %q; want field %q and an error containing %q", field, err, tc.field, tc.msg)
			}
			if strings.Contains(err.Error(), "Go struct") {
				t.Fatalf("error %q leaks Go type paths", err)
			}
		})
	}
}
