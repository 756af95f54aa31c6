// Wire formatting and query-string rules shared by the endpoints: the contract's
// (docs/openapi.yaml, docs/contract-notes.md), as the project's worker and the Node peer's
// lib/format.mjs apply them.
package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Base units -> whole units with `decimals` fraction digits: plain decimal, no exponent, no
// trailing zeros, no trailing dot, "0" for zero. Text only, so amounts up to 2^256-1 stay
// exact. A NULL amount (not recorded yet) is "".
func formatUnits(baseUnits string, valid bool, decimals int) string {
	if !valid || baseUnits == "" {
		return ""
	}
	if decimals == 0 {
		return baseUnits
	}
	padded := baseUnits
	if len(padded) <= decimals {
		padded = strings.Repeat("0", decimals+1-len(padded)) + padded
	}
	point := len(padded) - decimals
	fraction := strings.TrimRight(padded[point:], "0")
	if fraction == "" {
		return padded[:point]
	}
	return padded[:point] + "." + fraction
}

// encoding/json as JSON.stringify writes it: no HTML escapes, no trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// --- errors --------------------------------------------------------------------------------

// An error answer as a value; the server writes the one error body shape.
type apiError struct {
	status  int
	code    string
	message string
	param   string
}

func (e *apiError) Error() string { return e.message }

func invalidParameter(param, message string) *apiError {
	return &apiError{400, "invalid_parameter", message, param}
}

// --- the query string ----------------------------------------------------------------------

const maxQueryBytes = 4096

// application/x-www-form-urlencoded decoding: "+" is a space, %XX a byte; false for a bad
// escape, a NUL byte or invalid UTF-8 (a leading byte order mark is dropped, as the Node
// peer's TextDecoder does).
func decodeComponent(text string) (string, bool) {
	if !strings.Contains(text, "%") {
		text = strings.ReplaceAll(text, "+", " ")
		return text, !strings.Contains(text, "\x00")
	}
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(text) || !isHex(text[i+1]) || !isHex(text[i+2]) {
				return "", false
			}
			n, _ := strconv.ParseUint(text[i+1:i+3], 16, 8)
			out = append(out, byte(n))
			i += 2
		default:
			out = append(out, c)
		}
	}
	if bytes.IndexByte(out, 0) >= 0 || !utf8.Valid(out) {
		return "", false
	}
	return string(bytes.TrimPrefix(out, []byte("\xef\xbb\xbf"))), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// The raw items of a query string in order, [name, raw value]; undecodable names are dropped
// like unknown ones.
func parseQueryString(raw string) [][2]string {
	items := [][2]string{}
	for _, item := range strings.Split(raw, "&") {
		if item == "" {
			continue
		}
		name, value, _ := strings.Cut(item, "=")
		if name, ok := decodeComponent(name); ok {
			items = append(items, [2]string{name, value})
		}
	}
	return items
}

// The parameters an endpoint knows: over-long query (414), a bad value (400), a known name
// given twice (400, checked in the endpoint's order); empty values dropped (an empty value
// means the parameter is unused).
func knownParams(raw string, known []string) (map[string]string, error) {
	if len(raw) > maxQueryBytes {
		return nil, &apiError{414, "query_too_long",
			"The query string is longer than " + strconv.Itoa(maxQueryBytes) + " bytes", ""}
	}
	seen := map[string][]string{}
	for _, item := range parseQueryString(raw) {
		if !listed(known, item[0]) {
			continue
		}
		value, ok := decodeComponent(item[1])
		if !ok {
			return nil, invalidParameter(item[0],
				item[0]+" has an invalid percent-escape, a NUL byte or invalid UTF-8")
		}
		seen[item[0]] = append(seen[item[0]], value)
	}
	params := map[string]string{}
	for _, name := range known {
		values := seen[name]
		if len(values) > 1 {
			return nil, &apiError{400, "duplicate_parameter", name + " is given more than once", name}
		}
		if len(values) == 1 && values[0] != "" {
			params[name] = values[0]
		}
	}
	return params, nil
}
