package sdk

import (
	"strings"
)

// ExtractCode returns the program in the last <code>…</code> block of a
// model response, as RPL policies write it. A Markdown fence inside the
// block (```python … ```) is removed. ok is false when the response has no
// complete block.
func ExtractCode(response string) (code string, ok bool) {
	end := strings.LastIndex(response, "</code>")
	if end < 0 {
		return "", false
	}
	start := strings.LastIndex(response[:end], "<code>")
	if start < 0 {
		return "", false
	}
	code = response[start+len("<code>") : end]
	t := strings.TrimSpace(code)
	if strings.HasPrefix(t, "```") {
		t = t[3:]
		if i := strings.IndexByte(t, '\n'); i >= 0 {
			t = t[i+1:] // drop the language tag line
		} else {
			t = ""
		}
		t = strings.TrimSuffix(strings.TrimRight(t, " \t\r\n"), "```")
		code = t
	}
	return strings.Trim(code, "\r\n") + "\n", true
}

// FormatObservation renders documents as the policy sees them with a
// DocFormat template (see Config.DocFormat), numbering them from 1.
func FormatObservation(format string, docs []Doc) string {
	if format == "" {
		format = DefaultDocFormat
	}
	var sb strings.Builder
	for i, d := range docs {
		sb.WriteString(FormatDoc(format, i+1, d))
	}
	return sb.String()
}
