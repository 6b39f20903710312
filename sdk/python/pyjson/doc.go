// Package pyjson is Python 3.11's json.dumps and json.loads over a plain Go
// value tree, for the sandbox's Python front end (sdk/python).
//
// # Value tree
//
//	nil        None / null
//	bool       True, False
//	int64      int (int and int32 are accepted by Dumps too)
//	*big.Int   int beyond int64 (Loads uses it only when int64 overflows)
//	float64    float (NaN and ±Inf as NaN / Infinity / -Infinity)
//	string     str (see "Strings" below)
//	[]any      list (Dumps also takes tuples this way)
//	*Object    dict, ordered key/value pairs; keys str, int64, *big.Int,
//	           float64, bool or nil as Python allows
//	Unsupported{TypeName}  any other Python value: Dumps fails with
//	           TypeError "Object of type set is not JSON serializable"
//
// Dumps matches json.dumps(obj, skipkeys, ensure_ascii, allow_nan, indent,
// separators, sort_keys) byte for byte: default separators ", " and ": ",
// "," and ": " once indent is given, an indent of an int (spaces; 0 or less
// is newlines only) or a string, empty containers as [] and {}, float keys
// as repr, True/False/None keys as "true"/"false"/"null", ensure_ascii's
// \uXXXX escapes with surrogate pairs.
//
// Loads matches json.loads(s): objects keep the first position of a key and
// the last value, ints are int64 or *big.Int, floats float64 (1e400 is inf),
// NaN / Infinity / -Infinity are accepted, and every JSONDecodeError text is
// CPython's, "Expecting value: line 1 column 1 (char 0)", with line, column
// and char counted in code points.
//
// # Errors
//
// Dumps returns *TypeError (TypeError in Python), *ValueError (ValueError:
// out of range floats with AllowNaN false, circular references). Loads
// returns *DecodeError (json.JSONDecodeError, a ValueError) or *ValueError
// (an int literal longer than 4300 digits, CPython's int_max_str_digits;
// nesting deeper than MaxDepth as CPython's RecursionError text).
//
// # Strings
//
// Go strings are UTF-8. A byte that is not UTF-8 stands for the lone
// surrogate U+DC00+b (Python's surrogateescape, as in sdk/python/pyfmt), and
// Dumps writes it as \udcXX in both ensure_ascii modes. Loads turns a lone
// \udc80-\udcff escape back into that byte and any other lone surrogate
// escape into U+FFFD (CPython keeps the lone surrogate in its str).
//
// # Known differences
//
//   - sort_keys with keys that do not compare (str against int) fails with
//     CPython's TypeError text, but the operand order in the message may
//     differ from CPython's sort.
//   - Nesting deeper than MaxDepth fails in Loads and Dumps; CPython's limit
//     is the interpreter's recursion limit (about 1000).
//
// Everything is pure and safe for concurrent use.
package pyjson
