package toolio

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a byte count such as 1000000, 100MiB, 100Mb, 2GB or
// 512k. Binary and decimal prefixes both mean powers of 1024, as PCP's
// tools read them; a bare number is bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a size (try 100MiB)", s)
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (try 100MiB)", s)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "ib"), "b")
	mult := map[string]float64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (use k, M, G or T, with or without iB)", s, t[i:])
	}
	n := int64(v * mult)
	if n <= 0 {
		return 0, fmt.Errorf("%q: a size must be positive", s)
	}
	return n, nil
}
