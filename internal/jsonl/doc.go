// Package jsonl reads and writes JSON Lines: one JSON value per line.
//
// The Reader hands out each non-blank line with its 1-based line number, so
// that every error names the line; a line longer than the configured limit
// is an error naming the line and the limit, never a silent truncation.
// The Writer encodes one value per line without HTML escaping, buffered,
// to a stream or (WriteFile) atomically to a file.
package jsonl
