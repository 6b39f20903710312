// Package cmdflags binds the flag groups that the two binaries share
// (cmd/rlsearch serves, cmd/rlsearch-bench measures): the E5 encoder, an
// index and its open options, the server (app.Config), the reranker, the
// rewards, the program runtime, the mutation verifier and a hybrid
// collection. Each group is bound in one place, so that the CLI, the server
// and the bench configure the encoder, the index and the reranker the same
// way.
//
// A group is a struct whose Bind registers its flags on a flag.FlagSet;
// after parsing, its methods turn the values into the package
// configurations (Config, Options) and open what they name (Open). The
// values are those of one command run: not safe for concurrent use.
//
// No cgo, CPU only; nothing here opens a file until Open is called.
package cmdflags
