package hybrid

import (
	"database/sql/driver"
	"runtime"
	"sync"
	"unicode/utf8"
	"weak"

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

// nfcInfo records, per collection, the TEXT columns (and the id column)
// that hold at least one value not in NFC.
type nfcInfo struct {
	once sync.Once
	cols map[string]bool
}

// nfcInfos caches nfcInfo per open Collection without keeping it alive:
// the entry is dropped when the Collection is garbage collected.
var nfcInfos sync.Map // weak.Pointer[Collection] -> *nfcInfo

// nonNFCColumns returns the columns of c that must be compared through
// nfcFunc. It scans the rows in memory once per collection (O(cells)
// byte scans) and is safe for concurrent use. The returned map must not be
// modified.
func (c *Collection) nonNFCColumns() map[string]bool {
	key := weak.Make(c)
	v, loaded := nfcInfos.LoadOrStore(key, &nfcInfo{})
	if !loaded {
		runtime.AddCleanup(c, func(k weak.Pointer[Collection]) { nfcInfos.Delete(k) }, key)
	}
	info := v.(*nfcInfo)
	info.once.Do(func() {
		info.cols = map[string]bool{}
		for _, id := range c.ids {
			if !norm.NFC.IsNormalString(id) {
				info.cols[c.Meta.Schema.ID] = true
				break
			}
		}
		for name, i := range c.colIdx {
			for _, row := range c.cells {
				if x := row[i]; x.Kind == ValString && !norm.NFC.IsNormalString(x.S) {
					info.cols[name] = true
					break
				}
			}
		}
	})
	return info.cols
}
