// Package progress reports the progress of long work on a writer: a
// progress bar (github.com/schollz/progressbar/v3) with count, rate and ETA
// when the writer is a terminal, else a plain line every Every (10 s) so
// that log files and CI logs are not filled with carriage returns. Counter
// counts items out of a known total (vectors imported, programs searched,
// lines scored); Pass follows a pass over a corpus file by its bytes read
// and passages done, with named phases after it (index builds). It is the
// project's one progress reporter.
package progress
