package pyjson

import "testing"

func FuzzLoads(f *testing.F) {
	for _, s := range []string{"", "[1, 2.5, \"x\", null, true, {\"a\": []}]", "{\"a\":1,\"a\":2}", "\"\\ud83d\\ude00\"",
		"NaN", "-Infinity", "1e400", "[", "\"\\u12", "123456789012345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Loads(s)
		if err != nil {
			return
		}
		out, err := Dumps(v, Defaults())
		if err != nil {
			t.Fatalf("dumps of loads(%q): %v", s, err)
		}
		v2, err := Loads(out)
		if err != nil {
			t.Fatalf("loads(dumps(loads(%q))) = loads(%q): %v", s, out, err)
		}
		out2, _ := Dumps(v2, Defaults())
		if out2 != out {
			t.Fatalf("round trip of %q: %q then %q", s, out, out2)
		}
	})
}
