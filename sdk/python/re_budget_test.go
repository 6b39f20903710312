package python

import (
	"strings"
	"testing"
)

// TestReChargesMatcherSteps: regular expressions whose matching costs
// hundreds of millions of engine steps (findall re-scanning to the end
// after every match; counted repetition multiplying the subject by
// thousands of instructions) end with the step budget's error, charged
// while they match. Before the metered matcher they were charged by their
// length only (len/64 steps) and ran to the end, uninterruptibly: about
// 30 s for the first case, minutes for the second. The cheap ones still
// answer, and the classic catastrophic-backtracking pattern is linear.
func TestReChargesMatcherSteps(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"findall quadratic", "import re\nprint(len(re.findall('a*b|a', 'a' * 40000)))", "Stop: steps budget of 1000000 exceeded: re"},
		{"sub quadratic", "import re\nprint(len(re.sub('(?:a|b)*c|a', '', 'a' * 40000)))", "Stop: steps budget of 1000000 exceeded: re"},
		{"split quadratic", "import re\nprint(len(re.split('a*b|a', 'a' * 40000)))", "Stop: steps budget of 1000000 exceeded: re"},
		{"finditer quadratic", "import re\nprint(sum(1 for _ in re.finditer('a*b|a', 'a' * 40000)))", "Stop: steps budget of 1000000 exceeded: re"},
		{"search counted repetition", "import re\nprint(re.search('(?:(?:a|aa){0,30}){0,30}b', 'a' * 200000))", "Stop: steps budget of 1000000 exceeded: re"},
		{"compiled pattern too", "import re\np = re.compile('(?:[a-z]?){1000}b')\nprint(p.search('a' * 100000))", "Stop: steps budget of 1000000 exceeded: re"},
		{"(a+)+$ is linear", "import re\nprint(re.search('(a+)+$', 'a' * 40 + 'b'), re.match('(a+)+$', 'a' * 40 + 'b'))", "None None\n"},
		{"ordinary use", "import re\nprint(re.findall(r'\\d+', 'a1b22' * 1000)[:3], re.sub(r'\\s+', ' ', 'a  b\\n c'))", "['1', '22', '1'] a b c\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := run(t, c.src)
			if !strings.HasPrefix(got, c.want) {
				t.Fatalf("got %q, want prefix %q", got, c.want)
			}
		})
	}
}
