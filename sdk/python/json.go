package python

import (
	"errors"
	"math/big"

	"github.com/rlsearch/rlsearch/sdk/python/pyjson"
)

// The json module over sdk/python/pyjson (CPython 3.11's output and
// JSONDecodeError messages). Values convert to pyjson's plain Go tree and
// back; every element is charged.

func toJSONTree(t *Thread, v Value, depth int) any {
	if depth > 200 {
		t.raise(ValueError, "Circular reference detected")
	}
	t.Charge("json", 16, 1)
	switch x := v.(type) {
	case NoneType:
		return nil
	case bool, int64, *big.Int, float64, string:
		return x
	case *List:
		out := make([]any, len(x.V))
		for i, e := range x.V {
			out[i] = toJSONTree(t, e, depth+1)
		}
		return out
	case Tuple:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJSONTree(t, e, depth+1)
		}
		return out
	case *Dict:
		o := &pyjson.Object{}
		for _, kv := range x.Items() {
			var k any
			switch kk := kv[0].(type) {
			case NoneType:
				k = nil
			case bool, int64, *big.Int, float64, string:
				k = kk
			default:
				k = pyjson.Unsupported{TypeName: typeName(kk)}
			}
			o.Keys = append(o.Keys, k)
			o.Values = append(o.Values, toJSONTree(t, kv[1], depth+1))
		}
		return o
	}
	return pyjson.Unsupported{TypeName: typeName(v)}
}

func fromJSONTree(t *Thread, v any) Value {
	t.Charge("json.loads", slotBytes, 1)
	switch x := v.(type) {
	case nil:
		return None
	case bool, int64, float64, string:
		return x
	case *big.Int:
		return normBig(x)
	case []any:
		out := make([]Value, len(x))
		for i, e := range x {
			out[i] = fromJSONTree(t, e)
		}
		return &List{V: out}
	case *pyjson.Object:
		d := NewDict()
		for i, k := range x.Keys {
			t.Charge("json.loads", entryBytes, 0)
			d.Set(fromJSONTree(t, k), fromJSONTree(t, x.Values[i]))
		}
		return d
	}
	return None
}

func jsonErr(t *Thread, err error) {
	var de *pyjson.DecodeError
	var te *pyjson.TypeError
	var ve *pyjson.ValueError
	switch {
	case errors.As(err, &de):
		panic(&Exception{Class: JSONDecodeError, Args: []Value{de.Error()}, Line: t.line})
	case errors.As(err, &te):
		t.raise(TypeError, "%s", te.Msg)
	case errors.As(err, &ve):
		t.raise(ValueError, "%s", ve.Msg)
	}
	t.raise(ValueError, "%s", err.Error())
}

func makeJSON() *Module {
	a := map[string]Value{"JSONDecodeError": JSONDecodeError}
	modFn(a, "json", "dumps", costRender, func(t *Thread, args []Value, kw []KV) Value {
		if len(args) != 1 {
			t.raise(TypeError, "dumps() takes 1 positional argument but %d were given", len(args))
		}
		o := pyjson.Defaults()
		for _, k := range kw {
			switch k.Name {
			case "indent":
				switch x := k.Value.(type) {
				case NoneType:
				case int64:
					o.Indent = int(min(x, 64))
				case string:
					o.Indent = x
				default:
					t.raise(TypeError, "indent must be None, an int or a str")
				}
			case "sort_keys":
				o.SortKeys = Truth(k.Value)
			case "ensure_ascii":
				o.EnsureASCII = Truth(k.Value)
			case "allow_nan":
				o.AllowNaN = Truth(k.Value)
			case "skipkeys":
				o.SkipKeys = Truth(k.Value)
			case "separators":
				if k.Value != None {
					p := toSlice(t, k.Value)
					if len(p) != 2 {
						t.raise(ValueError, "separators must be a (item_separator, key_separator) pair")
					}
					o.HasSeparators = true
					o.ItemSep, o.KeySep = asStr(t, p[0], "separator"), asStr(t, p[1], "separator")
				}
			case "default", "cls", "check_circular":
				if k.Value != None && k.Name != "check_circular" {
					t.raise(TypeError, "json.dumps(%s=...) is not supported in this sandbox", k.Name)
				}
			default:
				t.raise(TypeError, "dumps() got an unexpected keyword argument '%s'", k.Name)
			}
		}
		out, err := pyjson.Dumps(toJSONTree(t, args[0], 0), o)
		if err != nil {
			jsonErr(t, err)
		}
		t.Charge("json.dumps", uint64(len(out)), uint64(len(out))/kib)
		return out
	})
	modFn(a, "json", "loads", costCopy, func(t *Thread, args []Value, kw []KV) Value {
		x := argParse(t, "loads", args, kw, "s")
		s, ok := x[0].(string)
		if !ok {
			t.raise(TypeError, "the JSON object must be str, bytes or bytearray, not %s", typeName(x[0]))
		}
		v, err := pyjson.Loads(s)
		if err != nil {
			jsonErr(t, err)
		}
		return fromJSONTree(t, v)
	})
	return &Module{Name: "json", Attrs: a}
}
