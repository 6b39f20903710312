package corpus

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// ErrBadRows: a FILE@FROM:TO argument whose row range does not parse.
var ErrBadRows = errors.New("corpus: bad row range")

// rowsSuffix matches the optional "@FROM:TO" row range of an argument
// (either bound may be empty).
var rowsSuffix = regexp.MustCompile(`@(\d*):(\d*)$`)

// ParseRows splits arg, "FILE" or "FILE@FROM:TO", into the file and the
// 0-based row range [from, to) it names; an empty bound is 0 (from the
// first row; to the last). A file literally named arg wins over the
// suffix. Errors wrap ErrBadRows: a bound that is not a number, TO <= FROM,
// or an '@' suffix that is not a range when no such file exists.
func ParseRows(arg string) (path string, from, to int, err error) {
	if _, statErr := os.Stat(arg); statErr == nil {
		return arg, 0, 0, nil
	}
	m := rowsSuffix.FindStringSubmatch(arg)
	if m == nil {
		// An '@' in a directory name ("/home/u@x/c.jsonl") is no suffix:
		// the missing file is then reported by whoever opens it.
		if i := strings.LastIndexByte(arg, '@'); i >= 0 && i > strings.LastIndexByte(arg, '/') {
			return "", 0, 0, fmt.Errorf("%w %q in %q: want @FROM:TO with FROM < TO, both 0-based row numbers (either may be empty)", ErrBadRows, arg[i:], arg)
		}
		return arg, 0, 0, nil
	}
	if m[1] != "" {
		if from, err = strconv.Atoi(m[1]); err != nil {
			return "", 0, 0, fmt.Errorf("%w in %q: %v", ErrBadRows, arg, err)
		}
	}
	if m[2] != "" {
		if to, err = strconv.Atoi(m[2]); err != nil {
			return "", 0, 0, fmt.Errorf("%w in %q: %v", ErrBadRows, arg, err)
		}
		if to <= from {
			return "", 0, 0, fmt.Errorf("%w in %q: want FROM < TO", ErrBadRows, arg)
		}
	}
	return arg[:len(arg)-len(m[0])], from, to, nil
}
