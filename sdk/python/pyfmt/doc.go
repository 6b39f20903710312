// Package pyfmt renders values the way CPython 3.11 prints them: float and
// str repr, the format-spec mini-language (format(), str.format, f-strings),
// str.format's field syntax, printf-style % formatting and round().
//
// It is a leaf package (standard library only) used by the sandbox's Python
// front end (sdk/python). Every function is pure and safe for concurrent use.
//
// # What is matched
//
//   - FloatRepr: repr(float) and str(float): the shortest round-trip digits,
//     fixed notation when -4 < decpt <= 16, else d.ddde±XX; 'inf', '-inf',
//     'nan', '-0.0'.
//   - StrRepr: repr(str): quote choice, \\ \' \n \r \t, \xNN, \uNNNN,
//     \UNNNNNNNN for code points that str.isprintable rejects.
//   - Spec and FormatInt/FormatFloat/FormatStr: format(x, spec) for int, float
//     and str, with CPython's ValueError texts. IntFormat, FloatFormat and
//     StrFormat parse and format in one call and give the exact messages that
//     name the object's type.
//   - ParseFormat: str.format/format_map field syntax with CPython's errors.
//   - ParsePercent and PercentInt/PercentFloat/PercentStr: the % operator.
//   - RoundFloat: round(x, n), correctly rounded through the exact decimal
//     value (ties to even); RoundHalfEven: round(x).
//
// The differential tables in testdata/*.json were produced by
// testdata/gen.py under CPython 3.11 (go test -run . -args -update reruns
// it; the tests themselves never need python3).
//
// # Known differences
//
//   - Code points are classified with Go's unicode tables (Unicode 15) where
//     CPython 3.11 uses Unicode 14: a code point assigned in 15.0 is printable
//     here and escaped by CPython.
//   - A Go string may hold bytes that are not UTF-8. Each such byte b is treated
//     as the lone surrogate U+DC00+b (Python's surrogateescape), so StrRepr
//     shows it as \udcXX.
//   - Widths and precisions above MaxWidth are refused with a *LimitError
//     instead of building the string (CPython would try, and may raise
//     MemoryError).
//   - CPython parses str.format and % templates while rendering, so an error in
//     a later field only shows once the earlier fields have rendered. ParseFormat
//     and ParsePercent return the parts before the error together with the
//     error; a caller that renders those parts first and then raises the error
//     reports what CPython reports.
//   - The 'n' presentation type uses the C locale (as CPython does before
//     setlocale): like 'd' / 'g' with no grouping.
package pyfmt
