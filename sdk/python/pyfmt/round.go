package pyfmt

import (
	"math"
	"math/big"
	"strconv"
)

// RoundFloat is round(x, ndigits) for a float: x rounded to ndigits decimal
// places (negative: to a multiple of 10^-ndigits), computed from the exact
// binary value with ties to even, as CPython's correctly rounded double_round.
// The only error is CPython's OverflowError "rounded value too large to
// represent".
func RoundFloat(x float64, ndigits int) (float64, error) {
	if math.IsInf(x, 0) || math.IsNaN(x) || x == 0 {
		return x, nil
	}
	const ndigitsMax, ndigitsMin = 323, -308
	if ndigits > ndigitsMax {
		return x, nil
	}
	if ndigits < ndigitsMin {
		return 0.0 * x, nil
	}
	var y float64
	if ndigits >= 0 {
		y, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'f', ndigits, 64), 64)
	} else {
		r := new(big.Rat)
		r.SetFloat64(x)
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-ndigits)), nil)
		r.Quo(r, new(big.Rat).SetInt(p))
		q := roundRatHalfEven(r)
		q.Mul(q, p)
		y, _ = new(big.Float).SetInt(q).Float64()
		if math.IsInf(y, 0) {
			return 0, &OverflowError{Msg: "rounded value too large to represent"}
		}
	}
	if y == 0 {
		return math.Copysign(0, x), nil
	}
	return y, nil
}

func roundRatHalfEven(r *big.Rat) *big.Int {
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// q truncated toward zero; m has num's sign.
	m2 := new(big.Int).Abs(m)
	m2.Lsh(m2, 1)
	c := m2.Cmp(den)
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// RoundHalfEven is round(x) for a float before the conversion to int: the
// nearest integer, ties to even. Infinities and NaN come back unchanged; the
// caller raises CPython's OverflowError "cannot convert float infinity to
// integer" or ValueError "cannot convert float NaN to integer".
func RoundHalfEven(x float64) float64 { return math.RoundToEven(x) }
