#include "http/etag.h"

#include <xxhash.h>

#include "chain/bytes.h"

namespace connector::http {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

// XXH3-128 (Debian's libxxhash) in its canonical byte order, as `xxhsum -H2` prints it. A tag
// is only ever compared with a tag of an earlier answer to the same URL, whose next body no
// client chooses (the nodes write the records; a client picks at most an address it queries), and
// a collision could only turn a changed answer into a stale 304, never show other data: a
// non-cryptographic 128-bit hash is enough. It costs about 1 us for a 27 KB history page, where
// SHA-256 cost 16-20 us, a tenth of the worker's CPU per page (docs/BENCHMARKS.md).
std::string strong_etag(std::string_view body) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(body.data(), body.size()));
  return "\"" + chain::to_hex(canonical.digest) + "\"";
}

bool if_none_match_matches(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    const auto comma = header.find(',');
    std::string_view tag = trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    if (tag == "*") return true;
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag == etag) return true;
  }
  return false;
}

}  // namespace connector::http
