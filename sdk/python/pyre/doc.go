// Package pyre runs Python 3.11 `re` patterns on Go's regexp (RE2): linear
// time in the input, no catastrophic backtracking, for the sandbox's Python
// front end (sdk/python).
//
// Compile translates Python syntax to RE2 syntax: (?P<name>…), (?:…),
// scoped and global inline flags (?aimsx) and (?i-s:…), the flags I M S X A
// (re.L is refused for str patterns as CPython does), Python's escapes
// (\n \t \x41 \u00e9 \U0001F600 \0 \012, unknown ASCII-letter escapes are
// CPython's "bad escape \q at position 0"), {m,n} / {,n} / {m,}, lazy
// quantifiers, and \d \w \s \D \W \S with Python's Unicode meaning for str
// patterns (\d = Nd, \w = letters, numbers and '_', \s = str.isspace) or
// ASCII under re.A. Verbose mode strips whitespace and # comments outside
// classes.
//
// What RE2 cannot run in linear time is refused at compile time with an
// *Error whose Unsupported field is true and whose text says what to do:
// backreferences (\1, (?P=name)), lookahead and lookbehind, conditionals,
// atomic groups and possessive quantifiers, and counted repetition above
// 1000.
//
// The match operations follow CPython's semantics: Search, Match (anchored at
// the start), Fullmatch, FindAll (whole match, the single group, or a tuple
// of groups with "" for groups that did not take part), Finditer, Split
// (groups included, maxsplit), Sub / Subn with a template (\1, \g<1>,
// \g<name>, Python's template escapes and errors) or a function. Empty
// matches follow Python 3.7+: an empty match right after a non-empty match is
// kept (re.sub('x*', '-', 'abxd') == '-a-b--d-'). Spans are in code points,
// as Python reports them; ByteSpan gives byte offsets.
//
// # Known differences from CPython 3.11
//
//   - `$` without MULTILINE matches at the end and, as in CPython, just
//     before a final "\n" — except in a subject that also holds an earlier
//     "\n", where it matches only at the very end (RE2 has no lookahead).
//     (?m)$ behaves as in CPython everywhere.
//   - \b and \B use ASCII word characters (RE2); CPython uses Unicode word
//     characters for str patterns, so a boundary next to a non-ASCII letter
//     can differ.
//   - IGNORECASE uses Unicode simple case folding even under re.A; CPython
//     folds only ASCII letters then.
//   - After an empty match the next search starts one character later;
//     CPython can still take a non-empty match at the same position when the
//     pattern prefers the empty one (a*?, (|a)).
//   - A repeated group whose last iteration matched empty text reports the
//     previous iteration's span (RE2 does not take the empty iteration):
//     re.search('(.{,2})+', 'abc').span(1) is (3, 3) in CPython, (2, 3) here.
//   - pos / endpos arguments are not provided.
//   - \N{name} escapes are refused (no Unicode name table).
//   - Invalid UTF-8 in a pattern or subject is read as U+FFFD by RE2.
//
// # Metered matching
//
// RE2 is linear in the subject, but the factor is the compiled program
// (counted repetition compiles to thousands of instructions), and Finditer,
// FindAll, Split and Subn search again after every match, each search able
// to scan to the end of the subject (FindAll of a*b|a over 40,000 "a"s is
// quadratic: about 30 s in Go's regexp, which cannot be interrupted). A
// Regexp from Metered(m) runs every match on a Pike VM over the same
// syntax.Prog (leftmost-first, same submatches; differentially tested
// against Go's regexp) that reports its work to m: one step per program
// instruction handled at one position, at least every MeterEvery steps. The
// sandbox charges those steps to the program's step budget, so such a
// match ends with the budget's error. Measured (go test -bench Metered, 2
// shared cores at load ≈ 15): 9–55 ns per step, 2–8 steps per byte for
// ordinary patterns, 0.9–1.7× the time of Go's regexp on the same FindAll.
//
// A *Regexp is safe for concurrent use; a Metered copy too, as far as its
// Meter is.
package pyre
