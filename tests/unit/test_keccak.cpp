#define BOOST_TEST_MODULE test_keccak
#include <boost/test/unit_test.hpp>

#include <cctype>
#include <string>

#include "chain/bytes.h"
#include "chain/keccak.h"
#include "chain/sha256.h"

using namespace connector::chain;

namespace {

std::string keccak_hex(const std::string& data) { return to_hex(keccak256(data)); }

}  // namespace

BOOST_AUTO_TEST_CASE(keccak_published_vectors) {
  BOOST_TEST(keccak_hex("") == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  BOOST_TEST(keccak_hex("abc") ==
             "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  BOOST_TEST(keccak_hex("The quick brown fox jumps over the lazy dog") ==
             "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15");
}

BOOST_AUTO_TEST_CASE(keccak_is_not_fips_sha3) {
  // FIPS SHA3-256("") differs only by padding; it must not come out here.
  BOOST_TEST(keccak_hex("") != "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
}

// Expected values around the 136-byte rate came from an independent pure-Python Keccak-f[1600]
// sponge, itself checked against Python's hashlib.sha3_256 (same permutation, 0x06 padding) for
// every length 0..299 and against the published vectors above.
BOOST_AUTO_TEST_CASE(keccak_rate_boundary) {
  struct Case {
    char fill;
    std::size_t length;
    const char* expected;
  };
  const Case cases[] = {
      {'a', 135, "34367dc248bbd832f4e3e69dfaac2f92638bd0bbd18f2912ba4ef454919cf446"},
      {'a', 136, "a6c4d403279fe3e0af03729caada8374b5ca54d8065329a3ebcaeb4b60aa386e"},
      {'a', 137, "d869f639c7046b4929fc92a4d988a8b22c55fbadb802c0c66ebcd484f1915f39"},
      {'a', 272, "cf7fcd4f705ee749930d19ca84561a9bf62516bd90a471545fa2f49fdc7e63c8"},
      {'a', 273, "5a7b8187d2778e614097fac3097573de1fee4d972304d3360796a857029bb176"},
      {'\0', 135, "29e3704feeca7fb9ba229f0fa04d9b36449cf3ad6e1d85d9cfff3a10df9abc3e"},
      {'\0', 136, "3a5912a7c5faa06ee4fe906253e339467a9ce87d533c65be3c15cb231cdb25f9"},
      {'\0', 137, "bee7fbb405cb0d91a8775e338c4a5e4b5d6b2d051f687fa942043cffdc73bd28"},
      {'\0', 200, "e1bb54e1bc3af48d01e5dbfc81015c98152a574f6428c6948aa4837c9c0baad9"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("fill " << int(c.fill) << " length " << c.length) {
      BOOST_TEST(keccak_hex(std::string(c.length, c.fill)) == c.expected);
    }
  }
}

BOOST_AUTO_TEST_CASE(keccak_span_and_string_view_agree) {
  const std::string text(150, 'x');
  const Bytes bytes(text.begin(), text.end());
  BOOST_TEST(keccak256(bytes) == keccak256(text));
}

BOOST_AUTO_TEST_CASE(sha256_vectors) {
  BOOST_TEST(to_hex(sha256("")) ==
             "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BOOST_TEST(to_hex(sha256("abc")) ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

BOOST_AUTO_TEST_CASE(sha256_history_hash_rule) {
  // network:chainId:txHash:txIndex; expected from `printf '%s' ... | sha256sum`.
  const std::string text =
      "UNITCore:36888:0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060:0";
  BOOST_TEST(to_hex(sha256(text)) ==
             "9f1faec5a932dc0ac715a1af0f3edde46488434b8ab2427b7fca666ce610454d");
}

BOOST_AUTO_TEST_CASE(hex_helpers) {
  const std::uint8_t raw[] = {0x00, 0x0f, 0xa5, 0xff};
  BOOST_TEST(to_hex(raw) == "000fa5ff");
  BOOST_TEST(to_hex(std::span<const std::uint8_t>()) == "");

  const auto decoded = from_hex("000FA5ff");
  BOOST_REQUIRE(decoded.has_value());
  BOOST_TEST(to_hex(*decoded) == "000fa5ff");
  BOOST_TEST(from_hex("")->empty());
  BOOST_TEST(!from_hex("abc").has_value());
  BOOST_TEST(!from_hex("0g").has_value());
  BOOST_TEST(!from_hex("0x00").has_value());

  BOOST_TEST(is_hex_digits(""));
  BOOST_TEST(is_hex_digits("0123456789abcdefABCDEF"));
  BOOST_TEST(!is_hex_digits("12 3"));
  BOOST_TEST(!is_hex_digits("xyz"));
}

BOOST_AUTO_TEST_CASE(parse_hash32_rules) {
  const std::string digits = "5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060";
  const auto hash = parse_hash32("0x" + digits);
  BOOST_REQUIRE(hash.has_value());
  BOOST_TEST(to_hex(*hash) == digits);

  std::string upper = digits;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  BOOST_TEST((parse_hash32("0x" + upper) == hash));

  BOOST_TEST(!parse_hash32(digits).has_value());                   // no prefix
  BOOST_TEST(!parse_hash32("0X" + digits).has_value());            // upper-case prefix
  BOOST_TEST(!parse_hash32("0x" + digits.substr(1)).has_value());  // 63 digits
  BOOST_TEST(!parse_hash32("0x" + digits + "0").has_value());      // 65 digits
  BOOST_TEST(!parse_hash32("0x" + digits.substr(1) + "g").has_value());
  BOOST_TEST(!parse_hash32("").has_value());
}
