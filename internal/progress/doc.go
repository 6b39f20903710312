// Package progress reports the progress of long work counted in items
// (vectors imported, programs searched, lines scored) on a writer: a
// progress bar (github.com/schollz/progressbar/v3) with count, rate and ETA
// when the writer is a terminal, else a plain line every Every (10 s) so
// that log files and CI logs are not filled with carriage returns.
package progress
