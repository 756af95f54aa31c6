#pragma once
// A coherent sample deployment (UNITCore + UNITIoT) as an import document: the demo's data and
// the tests' fixtures. Deterministic for a given seed.
#include <cstdint>
#include <string>

namespace connector::admin {

struct SampleOptions {
  std::uint64_t history = 3000;  // number of history records
  std::uint64_t seed = 1;
};

// Every record's deposit address is the one /v1/account derives, its hash follows the hash
// rule, and its fee and destination amount follow its pair's settings.
std::string make_sample_document(const SampleOptions& options);

}  // namespace connector::admin
