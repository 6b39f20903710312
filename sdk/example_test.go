package sdk_test

import (
	"fmt"

	"github.com/rlsearch/rlsearch/sdk"
)

// A typed program renders to canonical source and reads back.
func ExampleProgram_Source() {
	p := sdk.Program{Queries: []string{"Robin Hood 2018 director", "Otto Bathurst"}, Mode: sdk.ModeFuse, Width: 20, Rerank: 5, Print: 3}
	src := p.Source()
	fmt.Print(src)
	back, err := sdk.Recognize(src)
	fmt.Println(back.Mode, back.Width, back.Rerank, back.Print, err)
	// Output:
	// docs = fuse([
	//     dense("Robin Hood 2018 director", k=20),
	//     sparse("Robin Hood 2018 director", k=20),
	//     dense("Otto Bathurst", k=20),
	//     sparse("Otto Bathurst", k=20),
	// ])
	// docs = rerank("Robin Hood 2018 director", docs, k=5)
	// print(docs[:3])
	// fuse 20 5 3 <nil>
}

// Policies write the program between <code> tags; the last block runs.
func ExampleExtractCode() {
	code, ok := sdk.ExtractCode("Let me search wider.\n<code>\ndocs = sparse(question, k=50)\nprint(docs[:3])\n</code>")
	fmt.Printf("%v\n%s", ok, code)
	// Output:
	// true
	// docs = sparse(question, k=50)
	// print(docs[:3])
}
