package hybrid_test

import (
	"fmt"

	"github.com/rlsearch/rlsearch/hybrid"
)

// Compile checks a program against a schema; the SQL that runs is
// generated from the AST with every literal bound.
func ExampleCompile() {
	s, _ := hybrid.BuiltinSchema("amazon_toys")
	cp, err := hybrid.Compile(s, hybrid.Program{
		SQL:           "WHERE (brand = 'Lego' OR brand = 'Playmobil') AND price < 30 AND product_id NOT IN <text_0>",
		RetrievalList: []hybrid.Retrieval{{Type: "text", Field: "title", Query: "puzzle"}},
	}, hybrid.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	q, args := hybrid.SQL(cp.Expr, func(*hybrid.InSet) []int32 { return []int32{4, 8} })
	fmt.Println(q)
	fmt.Println(args)

	_, err = hybrid.Compile(s, hybrid.Program{SQL: "WHERE brand = 'Children's Toys'"}, hybrid.Limits{})
	fmt.Println(err)
	_, err = hybrid.Compile(s, hybrid.Program{SQL: "WHERE price < 30; DROP TABLE rows"}, hybrid.Limits{})
	fmt.Println(err)
	// Output:
	// SELECT "_row" FROM "rows" WHERE ("brand" = ? OR "brand" = ?) AND "price" < ? AND "_row" NOT IN (?,?)
	// [Lego Playmobil 30 4 8]
	// hybrid: syntax error at sql position 23: unescaped apostrophe in string literal 'Children': it ends the literal before "s"; write the apostrophe twice, as in 'Children''s'
	// hybrid: rejected at sql position 16: ';' would end the statement: a program is exactly one WHERE expression (stacked statements are rejected)
}
