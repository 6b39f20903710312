package python

import (
	binenc "encoding/binary"
	"iter"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"unicode/utf8"
)

func uintptrOf(k any) uintptr {
	rv := reflect.ValueOf(k)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice:
		return rv.Pointer()
	}
	return 0
}

// Dict is an insertion-ordered dict. Default is the defaultdict factory
// (nil for a plain dict); Counter and Ordered mark collections' types.
type Dict struct {
	keys    []Value
	vals    []Value
	hks     []any
	dead    []bool
	idx     map[any]int
	live    int
	Default Value
	Counter bool
	Ordered bool
}

func NewDict() *Dict { return &Dict{idx: map[any]int{}} }

func (d *Dict) Len() int { return d.live }

func (d *Dict) Get(k Value) (Value, bool) {
	i, _, ok := d.slot(k)
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// slot is the entry index and hash key of k; false when k is unhashable or
// not in d.
func (d *Dict) slot(k Value) (int, any, bool) {
	hk, ok := hashKey(k)
	if !ok {
		return 0, nil, false
	}
	i, ok := d.idx[hk]
	return i, hk, ok
}

// GetKey is Get for a key already known hashable.
func (d *Dict) getHK(hk any) (Value, bool) {
	i, ok := d.idx[hk]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// Set stores k: v; it reports false when k is unhashable.
func (d *Dict) Set(k, v Value) bool {
	hk, ok := hashKey(k)
	if !ok {
		return false
	}
	if i, ok := d.idx[hk]; ok {
		d.vals[i] = v
		return true
	}
	d.idx[hk] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	d.hks = append(d.hks, hk)
	d.dead = append(d.dead, false)
	d.live++
	return true
}

// Delete removes k, reporting whether it was there.
func (d *Dict) Delete(k Value) (Value, bool) {
	i, hk, ok := d.slot(k)
	if !ok {
		return nil, false
	}
	v := d.vals[i]
	delete(d.idx, hk)
	d.dead[i] = true
	d.keys[i], d.vals[i] = nil, nil
	d.live--
	if len(d.keys) > 32 && d.live < len(d.keys)/2 {
		d.compact()
	}
	return v, true
}

func (d *Dict) compact() {
	n := 0
	for i := range d.keys {
		if d.dead[i] {
			continue
		}
		d.keys[n], d.vals[n], d.hks[n], d.dead[n] = d.keys[i], d.vals[i], d.hks[i], false
		d.idx[d.hks[n]] = n
		n++
	}
	d.keys, d.vals, d.hks, d.dead = d.keys[:n], d.vals[:n], d.hks[:n], d.dead[:n]
}

func (d *Dict) Clear() {
	*d = Dict{idx: map[any]int{}, Default: d.Default, Counter: d.Counter, Ordered: d.Ordered}
}

// Keys returns the keys in insertion order.
func (d *Dict) Keys() []Value { return liveEntries(d, d.keys) }

func (d *Dict) Values() []Value { return liveEntries(d, d.vals) }

// liveEntries is xs (d.keys or d.vals) without the deleted entries.
func liveEntries[T any](d *Dict, xs []T) []T {
	out := make([]T, 0, d.live)
	for i, x := range xs {
		if !d.dead[i] {
			out = append(out, x)
		}
	}
	return out
}

func (d *Dict) Items() [][2]Value {
	out := make([][2]Value, 0, d.live)
	for i := range d.keys {
		if !d.dead[i] {
			out = append(out, [2]Value{d.keys[i], d.vals[i]})
		}
	}
	return out
}

func (d *Dict) Copy() *Dict {
	c := NewDict()
	for _, kv := range d.Items() {
		c.Set(kv[0], kv[1])
	}
	c.Default, c.Counter, c.Ordered = d.Default, d.Counter, d.Ordered
	return c
}

// MoveToEnd moves k to the end (or the front) of the order.
func (d *Dict) MoveToEnd(k Value, last bool) bool {
	v, ok := d.Delete(k)
	if !ok {
		return false
	}
	if last {
		d.Set(k, v)
		return true
	}
	items := d.Items()
	d.Clear()
	d.Set(k, v)
	for _, kv := range items {
		d.Set(kv[0], kv[1])
	}
	return true
}

// Set is a set or frozenset with CPython's open-addressing table (the same
// probing, growth and hashes as CPython 3.11 with PYTHONHASHSEED=0), so
// that iteration order matches CPython's for ints, floats, tuples and
// strings.
type Set struct {
	table  []setEntry
	mask   int
	fill   int
	used   int
	Frozen bool
}

type setEntry struct {
	key   Value
	hk    any
	hash  int64
	state uint8 // 0 empty, 1 active, 2 dummy
}

const (
	setMinSize   = 8
	linearProbes = 9
	perturbShift = 5
)

func NewSet() *Set {
	return &Set{table: make([]setEntry, setMinSize), mask: setMinSize - 1}
}

func (s *Set) Len() int { return s.used }

// Add inserts k; false when k is unhashable.
func (s *Set) Add(k Value) bool {
	hk, ok := hashKey(k)
	if !ok {
		return false
	}
	s.add(k, hk, pyHash(k))
	return true
}

func (s *Set) add(k Value, hk any, hash int64) {
	freeslot := -1
	for j := range s.slots(hash) {
		e := &s.table[j]
		if e.state == 0 {
			if freeslot >= 0 {
				s.used++
				s.table[freeslot] = setEntry{k, hk, hash, 1}
				return
			}
			s.fill++
			s.used++
			*e = setEntry{k, hk, hash, 1}
			if s.fill*5 < s.mask*3 {
				return
			}
			if s.used > 50000 {
				s.resize(s.used * 2)
			} else {
				s.resize(s.used * 4)
			}
			return
		}
		if e.state == 1 && e.hash == hash && e.hk == hk {
			return
		}
		if e.state == 2 && freeslot < 0 {
			freeslot = j
		}
	}
}

// slots yields the table slots that CPython's set lookup probes for hash,
// in order: from each perturbed start, the start and its linearProbes
// neighbours (the start alone where they would pass the table's end). It
// does not end by itself: the caller stops at a free or matching slot.
func (s *Set) slots(hash int64) iter.Seq[int] {
	return func(yield func(int) bool) {
		mask := s.mask
		i := int(uint64(hash) & uint64(mask))
		perturb := uint64(hash)
		for {
			last := i
			if i+linearProbes <= mask {
				last = i + linearProbes
			}
			for j := i; j <= last; j++ {
				if !yield(j) {
					return
				}
			}
			perturb >>= perturbShift
			i = int((uint64(i)*5 + 1 + perturb) & uint64(mask))
		}
	}
}

func (s *Set) resize(minused int) {
	n := setMinSize
	for n <= minused {
		n <<= 1
	}
	old := s.table
	s.table = make([]setEntry, n)
	s.mask = n - 1
	s.fill = s.used
	for _, e := range old {
		if e.state == 1 {
			s.insertClean(e)
		}
	}
}

// insertClean puts e in the first free slot of a table without deleted
// entries or e's key.
func (s *Set) insertClean(e setEntry) {
	for j := range s.slots(e.hash) {
		if s.table[j].state == 0 {
			s.table[j] = e
			return
		}
	}
}

func (s *Set) find(hk any, hash int64) int {
	for j := range s.slots(hash) {
		e := &s.table[j]
		if e.state == 0 {
			break
		}
		if e.state == 1 && e.hash == hash && e.hk == hk {
			return j
		}
	}
	return -1
}

// Has reports membership (false for unhashable k).
func (s *Set) Has(k Value) bool {
	hk, ok := hashKey(k)
	if !ok {
		return false
	}
	return s.find(hk, pyHash(k)) >= 0
}

// Discard removes k, reporting whether it was there.
func (s *Set) Discard(k Value) bool {
	hk, ok := hashKey(k)
	if !ok {
		return false
	}
	j := s.find(hk, pyHash(k))
	if j < 0 {
		return false
	}
	s.table[j] = setEntry{state: 2, hash: -1}
	s.used--
	return true
}

// Keys returns the members in table order (CPython's iteration order).
func (s *Set) Keys() []Value {
	out := make([]Value, 0, s.used)
	for _, e := range s.table {
		if e.state == 1 {
			out = append(out, e.key)
		}
	}
	return out
}

// Pop removes and returns the first member in CPython's pop order.
func (s *Set) Pop(finger *int) (Value, bool) {
	if s.used == 0 {
		return nil, false
	}
	i := *finger & s.mask
	for s.table[i].state != 1 {
		i++
		if i > s.mask {
			i = 0
		}
	}
	k := s.table[i].key
	s.table[i] = setEntry{state: 2, hash: -1}
	s.used--
	*finger = i + 1
	return k, true
}

func (s *Set) Copy() *Set {
	c := NewSet()
	c.Frozen = s.Frozen
	c.merge(s)
	return c
}

// merge adds every member of o, presizing like CPython's set_merge.
func (s *Set) merge(o *Set) {
	if o.used == 0 {
		return
	}
	if (s.fill+o.used)*5 >= s.mask*3 {
		s.resize((s.used + o.used) * 2)
	}
	for _, e := range o.table {
		if e.state == 1 {
			s.add(e.key, e.hk, e.hash)
		}
	}
}

func (s *Set) isSubset(o *Set) bool {
	if s.used > o.used {
		return false
	}
	for _, e := range s.table {
		if e.state == 1 && o.find(e.hk, e.hash) < 0 {
			return false
		}
	}
	return true
}

// CPython's hashes (Python/pyhash.c, Objects/longobject.c, tupleobject.c).

const (
	hashBits    = 61
	hashModulus = (1 << hashBits) - 1
)

func pyHash(v Value) int64 {
	switch v := v.(type) {
	case int64:
		return hashInt64(v)
	case bool:
		return b2i(v)
	case *big.Int:
		m := new(big.Int).Mod(new(big.Int).Abs(v), big.NewInt(hashModulus)).Int64()
		if v.Sign() < 0 {
			m = -m
		}
		if m == -1 {
			m = -2
		}
		return m
	case float64:
		return hashFloat(v)
	case string:
		return hashStr(v)
	case Tuple:
		return hashTuple(v)
	case NoneType:
		return 0xFCA86420 // a constant: CPython 3.11 hashes None by address
	case *Set:
		var h uint64
		for _, e := range v.table {
			if e.state == 1 {
				x := uint64(e.hash)
				h ^= ((x ^ 89869747) ^ (x << 16)) * 3644798167
			}
		}
		h ^= (uint64(v.used) + 1) * 1927868237
		h ^= (h >> 11) ^ (h >> 25)
		h = h*69069 + 907133923
		if int64(h) == -1 {
			h = 590923713
		}
		return int64(h)
	case Hasher:
		return v.PyHash()
	case Object:
		k, _ := v.Key().(string)
		return hashStr(k)
	}
	return int64(uintptrOf(v) >> 4)
}

func hashInt64(v int64) int64 {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	u %= hashModulus
	h := int64(u)
	if neg {
		h = -h
	}
	if h == -1 {
		h = -2
	}
	return h
}

func hashFloat(v float64) int64 {
	if math.IsInf(v, 0) {
		if v > 0 {
			return 314159
		}
		return -314159
	}
	if math.IsNaN(v) {
		return 0
	}
	m, e := math.Frexp(v)
	sign := int64(1)
	if m < 0 {
		sign = -1
		m = -m
	}
	var x uint64
	for m != 0 {
		x = ((x << 28) & hashModulus) | x>>(hashBits-28)
		m *= 268435456.0
		e -= 28
		y := uint64(m)
		m -= float64(y)
		x += y
		if x >= hashModulus {
			x -= hashModulus
		}
	}
	if e >= 0 {
		e = e % hashBits
	} else {
		e = hashBits - 1 - ((-1 - e) % hashBits)
	}
	x = ((x << uint(e)) & hashModulus) | x>>(hashBits-uint(e))
	h := int64(x) * sign
	if h == -1 {
		h = -2
	}
	return h
}

func hashTuple(t Tuple) int64 {
	const (
		p1 = 11400714785074694791
		p2 = 14029467366897019727
		p5 = 2870177450012600261
	)
	acc := uint64(p5)
	for _, x := range t {
		lane := uint64(pyHash(x))
		acc += lane * p2
		acc = bits.RotateLeft64(acc, 31)
		acc *= p1
	}
	acc += uint64(len(t)) ^ (p5 ^ 3527539)
	if int64(acc) == -1 {
		return 1546275796
	}
	return int64(acc)
}

// hashStr is CPython 3.11's str hash with PYTHONHASHSEED=0: SipHash-1-3
// with a zero key over the string's PEP 393 storage (1, 2 or 4 bytes per
// code point, little-endian).
func hashStr(s string) int64 {
	if s == "" {
		return 0
	}
	maxr := rune(0)
	n := 0
	for _, r := range s {
		if r > maxr {
			maxr = r
		}
		n++
	}
	width := 1
	switch {
	case maxr > 0xffff:
		width = 4
	case maxr > 0xff:
		width = 2
	}
	var buf []byte
	if width == 1 && maxr < utf8.RuneSelf {
		buf = []byte(s)
	} else {
		buf = make([]byte, 0, n*width)
		for _, r := range s {
			switch width {
			case 1:
				buf = append(buf, byte(r))
			case 2:
				buf = binenc.LittleEndian.AppendUint16(buf, uint16(r))
			default:
				buf = binenc.LittleEndian.AppendUint32(buf, uint32(r))
			}
		}
	}
	h := int64(siphash13(0, 0, buf))
	if h == -1 {
		h = -2
	}
	return h
}

func siphash13(k0, k1 uint64, src []byte) uint64 {
	b := uint64(len(src)) << 56
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	for len(src) >= 8 {
		mi := binenc.LittleEndian.Uint64(src)
		src = src[8:]
		v3 ^= mi
		round()
		v0 ^= mi
	}
	var t uint64
	for i := len(src) - 1; i >= 0; i-- {
		t = t<<8 | uint64(src[i])
	}
	b |= t
	v3 ^= b
	round()
	v0 ^= b
	v2 ^= 0xff
	round()
	round()
	round()
	return (v0 ^ v1) ^ (v2 ^ v3)
}
