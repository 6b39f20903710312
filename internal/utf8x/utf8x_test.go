package utf8x

import "testing"

func TestInvalidLen(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"\xff", 1},             // never valid
		{"\xc2", 1},             // truncated 2-byte
		{"\xe2\x82", 2},         // truncated 3-byte: one U+FFFD for both
		{"\xe2\x82x", 2},        // stops at the non-continuation byte
		{"\xe0\x80", 1},         // overlong: 0x80 is below E0's lower bound
		{"\xed\xa0\x80", 1},     // surrogate: A0 is above ED's upper bound
		{"\xf0\x9f\x98", 3},     // truncated 4-byte emoji
		{"\xf4\x90\x80\x80", 1}, // above U+10FFFF
	} {
		if got := InvalidLen(tc.in); got != tc.want {
			t.Errorf("InvalidLen(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestInvalidOffset(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", -1},
		{"plain ascii", -1},
		{"caf\u00e9 \U0001F600", -1},
		{"\xff", 0},
		{"ok\xffthen", 2},
		{"\u00e9\xe2\x82", 2},     // truncated 3-byte sequence after a valid é
		{"ab\xed\xa0\x80cd", 2},   // surrogate
		{"\U0001F600\xc0\xaf", 4}, // overlong after a valid emoji
	} {
		if got := InvalidOffset([]byte(tc.in)); got != tc.want {
			t.Errorf("InvalidOffset(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
