package jsonl

import "io"

// Pipe runs fn on the input at in (Open: "" or "-" = stdin; name is its
// name for errors) and the output at out (Output: written atomically, ""
// or "-" = stdout, unbuffered: fn buffers). The input is closed after fn.
func Pipe(in, out string, stdout io.Writer, fn func(r io.Reader, name string, w io.Writer) error) error {
	r, name, err := Open(in)
	if err != nil {
		return err
	}
	defer r.Close()
	return Output(out, stdout, func(w io.Writer) error { return fn(r, name, w) })
}
