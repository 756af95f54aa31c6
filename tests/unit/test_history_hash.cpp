// The hash rule (domain/history_hash.h): the expected values are sha256sum's, and one is a
// record of the integration tests' fixture (tests/fixtures/sample-60.json, history[0]).
#define BOOST_TEST_MODULE history_hash
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>

#include "domain/history_hash.h"

using connector::domain::history_hash;

namespace {

std::string repeat(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_fixture_record_keeps_its_hash) {
  // printf '%s' "UNITIoT:1012:0x90b8...1202:19" | sha256sum
  BOOST_TEST(history_hash("UNITIoT", 1012,
                          "0x90b8627a244d4117c7572b06545e1329428d36c7ddd336b17b67a7b692151202",
                          19) ==
             "6d23a69b3ae84d202bbffb3d46aa8faf5f32ca198fdb73c1f8cba6332169a69f");
}

BOOST_AUTO_TEST_CASE(history_hash_matches_sha256sum) {
  // printf '%s' "UNITCore:36888:0x$(printf 'ab%.0s' $(seq N)):7" | sha256sum
  const struct {
    std::string network;
    std::uint64_t chain_id;
    std::string tx_hash;
    std::uint64_t tx_index;
    std::string hash;
  } cases[] = {
      // A real 64-digit hash: "ab" 32 times.
      {"UNITCore", 36888, "0x" + repeat("ab", 32), 7,
       "fe57d951a768aa405f9850618cc75e65211bb9e1ab32f160f4d8e94338631db9"},
      // The text read literally: "0x" followed by "ab" 64 times.
      {"UNITCore", 36888, "0x" + repeat("ab", 64), 7,
       "fe41d83f153312a33aeb698fd9d83d098d78a8fd0c4a04f0b683be7f41995e68"},
      {"UNITIoT", 1012, "0x" + repeat("ab", 32), 0,
       "f7714b3dca8697b1c1d0a57a1da2c222b651aa117fb40026270dbb1a5b68e159"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.network << ":" << c.chain_id << ":" << c.tx_hash << ":" << c.tx_index) {
      BOOST_TEST(history_hash(c.network, c.chain_id, c.tx_hash, c.tx_index) == c.hash);
    }
  }
}
