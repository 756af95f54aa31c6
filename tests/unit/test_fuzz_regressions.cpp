#define BOOST_TEST_MODULE test_fuzz_regressions
// Inputs that crashed a fuzz target (tests/fuzz/), each with its exact expected result. The
// input is also kept in the target's corpus (tests/fuzz/corpus/<target>/regression_*).
#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <string>

#include "admin/import_document.h"

using namespace connector;

namespace {

// The ImportError message, or "<no error>".
std::string import_error_of(const std::string& text) {
  try {
    admin::read_import_document(text, {});
  } catch (const admin::ImportError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string nested_arrays(std::size_t depth, bool closed) {
  return std::string(depth, '[') + (closed ? std::string(depth, ']') : std::string());
}

}  // namespace

// fuzz_import_document: RapidJSON's recursive parser overflowed the stack on deeply nested
// arrays (corpus: regression_deep_nesting). The reader now parses iteratively.
BOOST_AUTO_TEST_CASE(deeply_nested_arrays_are_an_import_error_not_a_stack_overflow) {
  constexpr std::size_t kDepth = 1'000'000;
  BOOST_TEST(import_error_of("{\"networks\":" + nested_arrays(kDepth, true) + "}") ==
             "networks[0]: must be an object");
  BOOST_TEST(import_error_of(nested_arrays(kDepth, true)) == "the document must be a JSON object");
  BOOST_TEST(import_error_of("{\"networks\":" + nested_arrays(kDepth, false)) ==
             "not valid JSON at byte 1000012: Invalid value.");
}
