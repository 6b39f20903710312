package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// bodyEncoding is how a dialect request's body was encoded; its reply is
// encoded the same way.
type bodyEncoding uint8

const (
	encJSON    bodyEncoding = iota
	encMsgpack              // MessagePack (GEM, ROLL: msgspec.msgpack.encode, no Content-Type)
)

// MsgpackContentType is the Content-Type of MessagePack replies (what
// mosec's TypedMsgPackMixin, behind GEM's retrieval server, sends).
const MsgpackContentType = "application/msgpack"

// isMsgpackType reports whether a media type names MessagePack.
func isMsgpackType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "application/msgpack", "application/x-msgpack", "application/vnd.msgpack":
		return true
	}
	return false
}

// isMsgpackMap reports whether b starts with a MessagePack map header
// (fixmap 0x80–0x8f, map16 0xde, map32 0xdf). No JSON object starts with
// one of these bytes, so a body without Content-Type is told apart without
// guessing.
func isMsgpackMap(b []byte) bool {
	return len(b) > 0 && (msgpcode.IsFixedMap(b[0]) || b[0] == msgpcode.Map16 || b[0] == msgpcode.Map32)
}

// readDialectBody reads a body as readBody does (Content-Type policy,
// limit, read timeout) and returns it as JSON: a MessagePack map (sent
// with a MessagePack Content-Type, or with none and a map header as its
// first byte) is transcoded to the equivalent JSON object, so that every
// dialect has one decoder and one set of error messages. A body whose
// Content-Type says JSON but that starts with a MessagePack map header is
// a 400 naming Content-Type rather than a guess.
func (s *Server) readDialectBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bodyEncoding, error) {
	body, err := s.readBody(w, r, max)
	if err != nil {
		return nil, encJSON, err
	}
	ct := r.Header.Get("Content-Type")
	switch {
	case isMsgpackType(ct):
		if !isMsgpackMap(body) {
			return nil, encMsgpack, rlsearch.BadField("", "Content-Type %q but the body is not a MessagePack map (first byte %s)", ct, firstByte(body))
		}
	case isMsgpackMap(body) && strings.TrimSpace(ct) == "":
	case isMsgpackMap(body):
		return nil, encJSON, rlsearch.BadField("Content-Type", "the body is MessagePack (first byte 0x%02x, a map header) but Content-Type is %q; send it with Content-Type application/msgpack or none", body[0], ct)
	default:
		return body, encJSON, nil
	}
	js, err := msgpackToJSON(body)
	if err != nil {
		return nil, encMsgpack, err
	}
	return js, encMsgpack, nil
}

func firstByte(b []byte) string {
	if len(b) == 0 {
		return "none: empty body"
	}
	return fmt.Sprintf("0x%02x", b[0])
}

// msgpackToJSON transcodes one MessagePack map into the JSON object with
// the same members: nil → null, booleans, integers, floats (NaN and ±Inf
// refused: JSON cannot hold them), UTF-8 strings; arrays and maps with
// string keys at most jsonbody.MaxDepth deep. Binary data, extensions,
// non-string keys, invalid UTF-8, truncated input and trailing bytes are
// errors naming the JSON path, as *rlsearch.FieldError (400). Lengths are
// checked against the bytes left before anything is allocated, so a
// 5-byte body claiming 2³² elements costs nothing.
func msgpackToJSON(b []byte) ([]byte, error) {
	if !isMsgpackMap(b) {
		return nil, rlsearch.BadField("", "invalid MessagePack: the body must be a map (first byte %s)", firstByte(b))
	}
	rd := bytes.NewReader(b)
	t := transcoder{rd: rd, dec: msgpack.NewDecoder(rd), out: make([]byte, 0, 2*len(b)+16)}
	if err := t.value("", 0); err != nil {
		return nil, err
	}
	if rd.Len() > 0 {
		return nil, rlsearch.BadField("", "invalid MessagePack: %d bytes after the map", rd.Len())
	}
	return t.out, nil
}

type transcoder struct {
	rd  *bytes.Reader
	dec *msgpack.Decoder
	out []byte
}

func mpErr(path, format string, args ...any) error {
	where := "the body"
	if path != "" {
		where = path
	}
	return rlsearch.BadField(path, "invalid MessagePack at %s: "+format, append([]any{where}, args...)...)
}

func (t *transcoder) value(path string, depth int) error {
	c, err := t.dec.PeekCode()
	if err != nil {
		return mpErr(path, "truncated (%v)", err)
	}
	switch {
	case c == msgpcode.Nil:
		if err := t.dec.DecodeNil(); err != nil {
			return mpErr(path, "%v", err)
		}
		t.out = append(t.out, "null"...)
	case c == msgpcode.False || c == msgpcode.True:
		v, err := t.dec.DecodeBool()
		if err != nil {
			return mpErr(path, "%v", err)
		}
		t.out = strconv.AppendBool(t.out, v)
	case c == msgpcode.Uint64:
		v, err := t.dec.DecodeUint64()
		if err != nil {
			return mpErr(path, "%v", err)
		}
		t.out = strconv.AppendUint(t.out, v, 10)
	case msgpcode.IsFixedNum(c) || (c >= msgpcode.Uint8 && c <= msgpcode.Int64):
		v, err := t.dec.DecodeInt64()
		if err != nil {
			return mpErr(path, "%v", err)
		}
		t.out = strconv.AppendInt(t.out, v, 10)
	case c == msgpcode.Float || c == msgpcode.Double:
		v, err := t.dec.DecodeFloat64()
		if err != nil {
			return mpErr(path, "%v", err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return mpErr(path, "%v is not a number JSON can hold", v)
		}
		t.out = strconv.AppendFloat(t.out, v, 'g', -1, 64)
	case msgpcode.IsString(c):
		s, err := t.str(path)
		if err != nil {
			return err
		}
		t.out = appendString(t.out, s)
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		if depth >= jsonbody.MaxDepth {
			return mpErr(path, "nested deeper than %d arrays and maps", jsonbody.MaxDepth)
		}
		n, err := t.dec.DecodeArrayLen()
		if err != nil {
			return mpErr(path, "%v", err)
		}
		if n > t.rd.Len() { // every element takes at least one byte
			return mpErr(path, "array of %d elements in %d bytes (truncated)", n, t.rd.Len())
		}
		t.out = append(t.out, '[')
		for i := range n {
			if i > 0 {
				t.out = append(t.out, ',')
			}
			if err := t.value(path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		t.out = append(t.out, ']')
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		if depth >= jsonbody.MaxDepth {
			return mpErr(path, "nested deeper than %d arrays and maps", jsonbody.MaxDepth)
		}
		n, err := t.dec.DecodeMapLen()
		if err != nil {
			return mpErr(path, "%v", err)
		}
		if 2*n > t.rd.Len() {
			return mpErr(path, "map of %d entries in %d bytes (truncated)", n, t.rd.Len())
		}
		t.out = append(t.out, '{')
		for i := range n {
			if i > 0 {
				t.out = append(t.out, ',')
			}
			kc, err := t.dec.PeekCode()
			if err != nil {
				return mpErr(path, "truncated (%v)", err)
			}
			if !msgpcode.IsString(kc) {
				return mpErr(path, "map key %d is not a string (code 0x%02x); keys must be strings, as in JSON", i, kc)
			}
			k, err := t.str(path)
			if err != nil {
				return err
			}
			t.out = appendString(t.out, k)
			t.out = append(t.out, ':')
			if err := t.value(joinPath(path, k), depth+1); err != nil {
				return err
			}
		}
		t.out = append(t.out, '}')
	case msgpcode.IsBin(c):
		return mpErr(path, "binary data (code 0x%02x); send text as a MessagePack str", c)
	default:
		return mpErr(path, "unsupported type code 0x%02x (extension types are not JSON)", c)
	}
	return nil
}

// str decodes a string and checks that it is UTF-8.
func (t *transcoder) str(path string) (string, error) {
	s, err := t.dec.DecodeString()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return "", mpErr(path, "truncated string")
		}
		return "", mpErr(path, "%v", err)
	}
	if !utf8.ValidString(s) {
		return "", mpErr(path, "string is not valid UTF-8")
	}
	return s, nil
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// writeDialect encodes v whole, as JSON (HTML characters not escaped, one
// line) or as MessagePack (struct fields named by their json tags), and
// writes it with status 200; an encoding failure is a 500 before any byte.
func (s *Server) writeDialect(w *respWriter, r *http.Request, enc bodyEncoding, v any) {
	var (
		buf bytes.Buffer
		ct  = "application/json"
	)
	switch enc {
	case encMsgpack:
		ct = MsgpackContentType
		e := msgpack.NewEncoder(&buf)
		e.SetCustomStructTag("json")
		if err := e.Encode(v); err != nil {
			s.failErr(w, r, fmt.Errorf("encode MessagePack response: %w", err))
			return
		}
	default:
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			s.failErr(w, r, fmt.Errorf("encode response: %w", err))
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		w.errKind = kindWrite
		s.metrics.errors.WithLabelValues(kindWrite).Inc()
	}
}
