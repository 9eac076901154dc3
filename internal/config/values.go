package config

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultMaxValues bounds how many values a deployer.yaml may hold, counted
// before it is parsed (docs/configuration.md, "Limits on input"): parsing
// costs about 150 bytes of memory and half a microsecond per value, so
// two million one-character values (a 4 MiB file) would take a gigabyte
// and seconds. Real files hold a few hundred.
const DefaultMaxValues = 250_000

// MaxValuesVar raises (or lowers) DefaultMaxValues for one run.
const MaxValuesVar = "DEPLOYER_MAX_CONFIG_VALUES"

// WithMaxValues sets the bound on values (0: DefaultMaxValues).
func WithMaxValues(n int) Option { return func(l *loader) { l.maxValues = n } }

// ParseMaxValues reads the value of DEPLOYER_MAX_CONFIG_VALUES: "" is 0 (the
// default); anything but a positive whole number is an error saying so.
func ParseMaxValues(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive whole number of values (default %d)", MaxValuesVar, s, DefaultMaxValues)
	}
	return n, nil
}

// valueSeparators counts the bytes of data that can start a YAML value:
// commas, line breaks, '[' and '{'. A mapping entry is two values (key and
// value), so the file holds at most about twice this many values: an
// upper bound found in one pass, without parsing.
func valueSeparators(data []byte) int {
	n := 0
	for _, b := range data {
		switch b {
		case ',', '\n', '[', '{':
			n++
		}
	}
	return n
}

// checkValues refuses, before parsing, a file that may hold more values
// than the bound.
func (l *loader) checkValues(data []byte) bool {
	limit := l.maxValues
	if limit <= 0 {
		limit = DefaultMaxValues
	}
	if n := valueSeparators(data); n > limit {
		l.add(0, "", "the file may hold %d values or more (its commas, line breaks, '[' and '{'), over the limit of %d: "+
			"keep large data outside deployer.yaml (a file the component reads), or raise the limit with %s=N", n, limit, MaxValuesVar)
		return false
	}
	return true
}
