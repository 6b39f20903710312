package transcript

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxExpand is the most bytes Expand produces (64 MiB), so that a typo in
// a count cannot exhaust the test's memory.
const MaxExpand = 64 << 20

// Expand reads an input written as quoted pieces, one a line, and returns
// their concatenation. A piece is a Go string literal ("a\x00b" or
// `raw`), optionally repeated: "[" * 30000. Blank lines and lines starting
// with '#' are skipped. Nothing is added between pieces (write "\n" where
// a newline belongs). Errors name the input's line (1-based): a line that
// is not a literal, a bad count, a result over MaxExpand.
func Expand(input string) (string, error) {
	var b strings.Builder
	for n, l := range strings.Split(input, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		q, err := strconv.QuotedPrefix(l)
		if err != nil || q[0] == '\'' {
			return "", fmt.Errorf("transcript: input line %d: want a Go string literal, optionally * count: %q", n+1, l)
		}
		s, _ := strconv.Unquote(q)
		count := 1
		if rest := strings.TrimSpace(l[len(q):]); rest != "" {
			c, ok := strings.CutPrefix(rest, "*")
			if !ok {
				return "", fmt.Errorf("transcript: input line %d: after the literal want * count, found %q", n+1, rest)
			}
			count, err = strconv.Atoi(strings.TrimSpace(c))
			if err != nil || count < 0 {
				return "", fmt.Errorf("transcript: input line %d: bad count %q", n+1, strings.TrimSpace(c))
			}
		}
		if len(s) > 0 && count > (MaxExpand-b.Len())/len(s) {
			return "", fmt.Errorf("transcript: input line %d: the input would be longer than %d bytes", n+1, MaxExpand)
		}
		b.WriteString(strings.Repeat(s, count))
	}
	return b.String(), nil
}

// Printable renders s for an expected output: valid printable text, '\n'
// and '\t' as they are, every other byte or rune escaped as Go would
// (\x00, \xff, \u200b), so that a transcript never holds control bytes
// or invalid UTF-8.
func Printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t' || unicode.IsPrint(r):
			b.WriteString(s[i : i+n])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}
