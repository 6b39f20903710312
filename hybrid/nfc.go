package hybrid

import (
	"database/sql/driver"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"modernc.org/sqlite"
)

// Text filters compare Unicode-equal text as equal (issue 13): string
// literals are put in NFC when parsed, and stored TEXT values are compared
// in NFC. SQLite compares bytes (BINARY collation), so a column that holds
// some value not in NFC is compared through the SQL function nfcFunc
// (rls_nfc, registered below), which costs an index and a Go call per row;
// a column whose stored values are all NFC (the usual case, checked once
// per collection) is compared as stored and keeps its index. The plain-Go
// evaluator (EvalGo) puts every stored value in NFC.

// nfcFunc is the name of the SQL function that returns its TEXT argument
// in NFC (other types unchanged).
const nfcFunc = "rls_nfc"

func init() {
	// Registered once for every connection the "sqlite" driver opens
	// later; a failure (the name taken) would only come from a programming
	// error in this package.
	if err := sqlite.RegisterDeterministicScalarFunction(nfcFunc, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		if s, ok := args[0].(string); ok {
			return nfcString(s), nil
		}
		return args[0], nil
	}); err != nil {
		panic("hybrid: register " + nfcFunc + ": " + err.Error())
	}
}

// nfcString returns s in Unicode NFC; ASCII and already-NFC text is
// returned as is (one byte scan, then the normalizer's quick check).
func nfcString(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}

// nonNFCColumns returns the columns (the id column included) holding at
// least one value not in NFC, which filters must compare through nfcFunc;
// the others keep their SQLite index. One scan of the rows at load.
func nonNFCColumns(idCol string, ids []string, colIdx map[string]int, cells [][]cell) map[string]bool {
	cols := map[string]bool{}
	for _, id := range ids {
		if !norm.NFC.IsNormalString(id) {
			cols[idCol] = true
			break
		}
	}
	for name, i := range colIdx {
		for _, row := range cells {
			if x := row[i]; x.Kind == ValString && !norm.NFC.IsNormalString(x.S) {
				cols[name] = true
				break
			}
		}
	}
	return cols
}
