package transformer

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// The part of an ONNX model (onnx.proto3) the loader reads: the graph's
// nodes (op type, inputs, outputs, int attributes) and its initializers
// (name, dims, data type, raw or typed data, external data). Field numbers
// are onnx.proto's.

// onnxTensor is a TensorProto.
type onnxTensor struct {
	name     string
	dims     []int64
	dataType int32
	raw      []byte    // raw_data, or the external bytes once resolved
	floats   []float32 // float_data
	int32s   []int32   // int32_data (fp16 / bf16 bit patterns)
	external map[string]string
}

// onnxNode is a NodeProto.
type onnxNode struct {
	op      string
	inputs  []string
	outputs []string
	ints    map[string][]int64 // int and ints attributes
}

type onnxGraph struct {
	nodes []onnxNode
	inits []*onnxTensor
}

// ONNX TensorProto.DataType values used here.
const (
	onnxFloat   = 1
	onnxFloat16 = 10
	onnxBFloat  = 16
)

var errProto = errors.New("malformed protobuf")

// protoFields calls fn for every field of the message b. fn gets the field
// number, wire type and the value: the bytes for BytesType, the varint or
// fixed value for the others.
func protoFields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errProto
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errProto
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// int64s reads a repeated int64 field, packed (BytesType) or not.
func appendInt64s(dst []int64, typ protowire.Type, v []byte, x uint64) ([]int64, error) {
	if typ == protowire.VarintType {
		return append(dst, int64(x)), nil
	}
	if typ != protowire.BytesType {
		return dst, errProto
	}
	for len(v) > 0 {
		u, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return dst, errProto
		}
		dst = append(dst, int64(u))
		v = v[n:]
	}
	return dst, nil
}

func parseONNXTensor(b []byte) (*onnxTensor, error) {
	t := &onnxTensor{}
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		switch num {
		case 1: // dims
			t.dims, err = appendInt64s(t.dims, typ, v, x)
		case 2: // data_type
			t.dataType = int32(x)
		case 4: // float_data (packed fixed32, or one fixed32)
			switch typ {
			case protowire.Fixed32Type:
				t.floats = append(t.floats, math.Float32frombits(uint32(x)))
			case protowire.BytesType:
				if len(v)%4 != 0 {
					return errProto
				}
				for i := 0; i < len(v); i += 4 {
					t.floats = append(t.floats, math.Float32frombits(uint32(v[i])|uint32(v[i+1])<<8|uint32(v[i+2])<<16|uint32(v[i+3])<<24))
				}
			default:
				return errProto
			}
		case 5: // int32_data (varints; fp16/bf16 store their bits here)
			var vals []int64
			vals, err = appendInt64s(nil, typ, v, x)
			for _, u := range vals {
				t.int32s = append(t.int32s, int32(u))
			}
		case 8: // name
			t.name = string(v)
		case 9: // raw_data
			t.raw = v
		case 13: // external_data: StringStringEntryProto {1 key, 2 value}
			var k, val string
			if err := protoFields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				switch num {
				case 1:
					k = string(v)
				case 2:
					val = string(v)
				}
				return nil
			}); err != nil {
				return err
			}
			if t.external == nil {
				t.external = map[string]string{}
			}
			t.external[k] = val
		}
		return err
	})
	return t, err
}

func parseONNXNode(b []byte) (onnxNode, error) {
	n := onnxNode{ints: map[string][]int64{}}
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			n.inputs = append(n.inputs, string(v))
		case 2:
			n.outputs = append(n.outputs, string(v))
		case 4:
			n.op = string(v)
		case 5: // AttributeProto {1 name, 3 i, 8 ints}
			var name string
			var vals []int64
			if err := protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				var err error
				switch num {
				case 1:
					name = string(v)
				case 3:
					vals = append(vals, int64(x))
				case 8:
					vals, err = appendInt64s(vals, typ, v, x)
				}
				return err
			}); err != nil {
				return err
			}
			if len(vals) > 0 {
				n.ints[name] = vals
			}
		}
		return nil
	})
	return n, err
}

// parseONNX reads a ModelProto's graph (field 7): nodes (1) and
// initializers (5).
func parseONNX(model []byte) (*onnxGraph, error) {
	g := &onnxGraph{}
	seen := false
	err := protoFields(model, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 7 || typ != protowire.BytesType {
			return nil
		}
		seen = true
		return protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			if typ != protowire.BytesType {
				return nil
			}
			switch num {
			case 1:
				n, err := parseONNXNode(v)
				if err != nil {
					return err
				}
				g.nodes = append(g.nodes, n)
			case 5:
				t, err := parseONNXTensor(v)
				if err != nil {
					return err
				}
				g.inits = append(g.inits, t)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if !seen {
		return nil, errors.New("no graph")
	}
	return g, nil
}

// tensorOf turns a floating-point initializer into a Tensor (stored
// order, Transposed false). External data is read from the mapped files
// in ext (file name → bytes), opened on demand with open.
func tensorOf(t *onnxTensor, open func(location string) ([]byte, error)) (*Tensor, bool, error) {
	var dt DType
	switch t.dataType {
	case onnxFloat:
		dt = F32
	case onnxFloat16:
		dt = F16
	case onnxBFloat:
		dt = BF16
	default:
		return nil, false, nil // integer constants (shapes, axes) are not weights
	}
	shape := make([]int, len(t.dims))
	n := 1
	for i, d := range t.dims {
		if d < 0 || d > 1<<40 {
			return nil, false, fmt.Errorf("initializer %q has dimension %d", t.name, d)
		}
		shape[i] = int(d)
		if d > 0 && n > (1<<40)/int(d) {
			return nil, false, fmt.Errorf("initializer %q is too large", t.name)
		}
		n *= int(d)
	}
	size := n * dt.Size()
	data := t.raw
	switch {
	case t.external != nil:
		loc := t.external["location"]
		if loc == "" || filepath.IsAbs(loc) || strings.Contains(filepath.ToSlash(loc), "..") {
			return nil, false, fmt.Errorf("initializer %q has external location %q (want a file beside model.onnx)", t.name, loc)
		}
		file, err := open(loc)
		if err != nil {
			return nil, false, fmt.Errorf("initializer %q: %w", t.name, err)
		}
		off, length := int64(0), int64(size)
		if s, ok := t.external["offset"]; ok {
			if off, err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, false, fmt.Errorf("initializer %q: offset %q", t.name, s)
			}
		}
		if s, ok := t.external["length"]; ok {
			if length, err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, false, fmt.Errorf("initializer %q: length %q", t.name, s)
			}
		}
		if off < 0 || length != int64(size) || off+length > int64(len(file)) {
			return nil, false, fmt.Errorf("initializer %q: external bytes [%d, %d+%d) of %s (%d bytes) for %d elements of %v",
				t.name, off, off, length, loc, len(file), n, dt)
		}
		data = file[off : off+length]
	case len(t.raw) > 0 || n == 0:
	case dt == F32 && len(t.floats) == n:
		data = make([]byte, size)
		for i, f := range t.floats {
			u := math.Float32bits(f)
			data[4*i], data[4*i+1], data[4*i+2], data[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
	case dt != F32 && len(t.int32s) == n:
		data = make([]byte, size)
		for i, v := range t.int32s {
			data[2*i], data[2*i+1] = byte(v), byte(v>>8)
		}
	}
	if len(data) != size {
		return nil, false, fmt.Errorf("initializer %q holds %d bytes for %d elements of %v", t.name, len(data), n, dt)
	}
	return &Tensor{Name: t.name, DType: dt, Shape: shape, data: data}, true, nil
}

// loadONNXFile maps dir/model.onnx and parses its graph; external data
// files are mapped on demand and owned by the returned Weights.
func loadONNXFile(dir, file string) (*onnxGraph, *Weights, map[string]*Tensor, error) {
	path := filepath.Join(dir, file)
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	w := &Weights{Format: "onnx", Source: path, tensors: map[string]*Tensor{}, closers: []func() error{unmap}}
	g, err := parseONNX(data)
	if err != nil {
		w.Close()
		return nil, nil, nil, fmt.Errorf("%w: %s: %v", ErrWeights, path, err)
	}
	ext := map[string][]byte{}
	open := func(loc string) ([]byte, error) {
		if b, ok := ext[loc]; ok {
			return b, nil
		}
		b, unmap, err := mapFile(filepath.Join(dir, loc))
		if err != nil {
			return nil, err
		}
		w.closers = append(w.closers, unmap)
		ext[loc] = b
		return b, nil
	}
	inits := map[string]*Tensor{}
	for _, t := range g.inits {
		tt, ok, err := tensorOf(t, open)
		if err != nil {
			w.Close()
			return nil, nil, nil, fmt.Errorf("%w: %s: %v", ErrWeights, path, err)
		}
		if ok {
			inits[t.name] = tt
		}
	}
	return g, w, inits, nil
}

// ONNXOutput describes one graph output of an ONNX file.
type ONNXOutput struct {
	// Elem is the element type: "float32", "float16", or "type N" for
	// another TensorProto.DataType.
	Elem string
	// Dims are the declared dimensions, -1 for a symbolic one ("batch").
	Dims []int64
}

// ONNXOutputInfo returns the graph output named name of the ONNX file at
// path, from the graph's output ValueInfoProto (GraphProto field 12: name
// 1, type 2 → TypeProto.tensor_type 1 → elem_type 1, shape 2 → dim 1 →
// dim_value 1 or dim_param 2). The file is mapped, not read: initializers
// are skipped over. embed and rerank use it to size the output buffers of
// fp16 exports.
func ONNXOutputInfo(path, name string) (ONNXOutput, error) {
	b, unmap, err := mapFile(path)
	if err != nil {
		return ONNXOutput{}, err
	}
	defer unmap()
	var out ONNXOutput
	elem, found := int64(-1), false
	err = protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 7 || typ != protowire.BytesType {
			return nil
		}
		return protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			if num != 12 || typ != protowire.BytesType || found {
				return nil
			}
			var n string
			e := int64(-1)
			var dims []int64
			err := protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					n = string(v)
				case num == 2 && typ == protowire.BytesType: // TypeProto
					return protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
						if num != 1 || typ != protowire.BytesType { // tensor_type
							return nil
						}
						return protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
							switch {
							case num == 1 && typ == protowire.VarintType:
								e = int64(x)
							case num == 2 && typ == protowire.BytesType: // TensorShapeProto
								return protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
									if num != 1 || typ != protowire.BytesType { // dim
										return nil
									}
									d := int64(-1)
									err := protoFields(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
										if num == 1 && typ == protowire.VarintType {
											d = int64(x)
										}
										return nil
									})
									dims = append(dims, d)
									return err
								})
							}
							return nil
						})
					})
				}
				return nil
			})
			if err == nil && n == name {
				elem, out.Dims, found = e, dims, true
			}
			return err
		})
	})
	switch {
	case err != nil:
		return out, fmt.Errorf("%s: %w", path, err)
	case !found:
		return out, fmt.Errorf("%s: the graph has no output %q", path, name)
	case elem == onnxFloat:
		out.Elem = "float32"
	case elem == onnxFloat16:
		out.Elem = "float16"
	default:
		out.Elem = fmt.Sprintf("type %d", elem)
	}
	return out, nil
}
