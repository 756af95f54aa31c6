#pragma once
// Included once by every fuzz target (one translation unit each).
// FUZZ_CHECK(condition): an invariant of the code under test. A violation prints the condition
// and where it is, then aborts, so libFuzzer reports the input as a crash and saves it.
#include <cstdio>
#include <cstdlib>

// UBSan's defaults for the targets (UBSAN_OPTIONS in the environment wins key by key): stop at
// the first report, except those ubsan.supp lists (CONNECTOR_FUZZ_UBSAN_SUPP, its full path).
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1:suppressions=" CONNECTOR_FUZZ_UBSAN_SUPP;
}

#define FUZZ_CHECK(condition)                                                                  \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                            \
    }                                                                                          \
  } while (false)
