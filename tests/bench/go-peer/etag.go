package main

// The ETag is the body's XXH3-128 in hex, as the project's (src/http/etag.cpp) and the Node
// peer's. No Debian Go package has XXH3 (golang-github-cespare-xxhash, -oneofone-xxhash and
// -pierrec-xxhash are XXH32/XXH64 only) and this peer builds offline from Debian's packages, so
// it calls Debian's libxxhash (libxxhash-dev, a dependency of the project already) through cgo:
// the same function the project calls.

/*
#cgo LDFLAGS: -lxxhash
#include <xxhash.h>
*/
import "C"

import (
	"encoding/hex"
	"strings"
	"unsafe"
)

// A strong ETag of the body: its XXH3-128 in canonical byte order, in hex, quoted.
func strongEtag(body []byte) string {
	var p unsafe.Pointer
	if len(body) > 0 {
		p = unsafe.Pointer(&body[0])
	}
	var canonical C.XXH128_canonical_t
	C.XXH128_canonicalFromHash(&canonical, C.XXH3_128bits(p, C.size_t(len(body))))
	digest := (*[16]byte)(unsafe.Pointer(&canonical.digest[0]))
	var tag [34]byte
	tag[0], tag[33] = '"', '"'
	hex.Encode(tag[1:33], digest[:])
	return string(tag[:])
}

// If-None-Match: a list of tags (weak ones compare as strong), or "*".
func ifNoneMatchMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.Trim(tag, " \t")
		if tag == "*" {
			return true
		}
		tag = strings.TrimPrefix(tag, "W/")
		if tag == etag {
			return true
		}
	}
	return false
}
