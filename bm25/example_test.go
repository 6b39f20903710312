package bm25_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/rlsearch/rlsearch/bm25"
)

func Example() {
	dir, err := os.MkdirTemp("", "bm25-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	b, err := bm25.NewBuilder(bm25.Config{}) // Pyserini defaults: k1=0.9, b=0.4
	if err != nil {
		log.Fatal(err)
	}
	for _, text := range []string{
		"\"The Informant!\"\nThe Informant! is a 2009 film directed by Steven Soderbergh.",
		"\"Mark Whitacre\"\nMark Whitacre is a whistleblower.",
		"\"Ocean's Eleven\"\nA heist film directed by Steven Soderbergh in 2001.",
	} {
		if _, err := b.Add(text); err != nil {
			log.Fatal(err)
		}
	}
	path := filepath.Join(dir, "tiny.bm25")
	if err := b.WriteFile(path); err != nil {
		log.Fatal(err)
	}
	ix, err := bm25.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	fmt.Println(bm25.Analyze("Who directed the whistleblower's films?"))
	for _, h := range ix.Search("Soderbergh film about a whistleblower", 2) {
		fmt.Printf("row %d score %.4f\n", h.Row, h.Score)
	}
	// Output:
	// [who direct whistleblow film]
	// row 1 score 0.5419
	// row 0 score 0.4901
}
