// Package transcript runs data-driven tests from transcript files, in the
// manner of cockroachdb/datadriven: each case is a command, its input and
// the output the test must print, kept in testdata/*.txt where a reader can
// see every case at once and `go test -update` can regenerate them.
//
// # File format
//
// A file is a sequence of cases. Between cases, blank lines and lines
// starting with '#' are comments (kept verbatim by -update). A case is
//
//	command key=value key2=(a,b) flag     the command line
//	input lines                           zero or more, any text
//	----
//	expected output lines                 zero or more, ended by a blank line or the end of the file
//
// The command line is a name followed by arguments separated by spaces: a
// bare key, key=value, key=(v1,v2,...), or a value written as a Go
// double-quoted string (key="two words"). Input lines may be blank or start
// with '#' (they are the input); input ends at the first line "----".
//
// An expected output that holds a blank line, or whose first line is
// "----", is written between two separator lines and closed by two
// (datadriven's convention):
//
//	command
//	input
//	----
//	----
//	first line
//
//	line after a blank line
//	----
//	----
//
// An output that contains the pair of lines "----","----" or ends with the
// line "----" cannot be written; Run reports it as a failure of the case.
// Outputs are compared as text with a final newline added when missing, so
// "x" and "x\n" are the same output.
//
// # Running
//
// Run parses a file and runs each case as a subtest named file:line (the
// command's line); a mismatch reports file:line, the command, the input,
// the want, the got and a line diff. With the -update flag
// (`go test ./hybrid -run TestParse -update`) Run instead rewrites the file
// with the outputs the test produced, atomically (internal/atomicfile),
// keeping the comments, commands and inputs byte for byte; a second
// -update gives the same bytes, and a run without -update then passes.
//
// Expand turns an input written as quoted pieces ("[" * 30000) into the
// bytes they denote, for inputs that cannot sit in a text file as they are
// (NUL bytes, invalid UTF-8, megabytes, trailing spaces); Printable renders
// such bytes back as readable output.
//
// Nothing here is safe for concurrent use on one file; different files
// (and different Cases) are independent.
package transcript
