#define BOOST_TEST_MODULE test_deposit_address
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

#include "chain/address.h"
#include "chain/bytes.h"
#include "chain/deposit_address.h"
#include "chain/keccak.h"

using namespace connector::chain;

namespace {

Address address(const std::string& text) {
  const auto parsed = Address::parse(text);
  BOOST_REQUIRE(parsed.has_value());
  return *parsed;
}

// A 32-byte word from up to 64 hex digits, right-aligned (the EIP writes salt 0 as "0").
Hash32 word(const std::string& hex) {
  const auto bytes = from_hex(std::string(64 - hex.size(), '0') + hex);
  BOOST_REQUIRE(bytes.has_value());
  Hash32 out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

Hash32 code_hash(const std::string& init_code_hex) {
  const auto code = from_hex(init_code_hex);
  BOOST_REQUIRE(code.has_value());
  return keccak256(*code);
}

}  // namespace

BOOST_AUTO_TEST_CASE(eip1014_examples) {
  struct Case {
    const char* factory;
    const char* salt;
    const char* init_code;  // hex, no 0x
    const char* expected;
  };
  const Case cases[] = {
      {"0x0000000000000000000000000000000000000000", "0", "00",
       "0x4D1A2e2bB4F88F0250f26Ffff098B0b30B26BF38"},
      {"0xdeadbeef00000000000000000000000000000000", "0", "00",
       "0xB928f69Bb1D91Cd65274e3c79d8986362984fDA3"},
      {"0xdeadbeef00000000000000000000000000000000",
       "000000000000000000000000feed000000000000000000000000000000000000", "00",
       "0xD04116cDd17beBE565EB2422F2497E06cC1C9833"},
      {"0x0000000000000000000000000000000000000000", "0", "deadbeef",
       "0x70f2b2914A2a4b783FaEFb75f459A580616Fcb5e"},
      {"0x00000000000000000000000000000000deadbeef", "cafebabe", "deadbeef",
       "0x60f3f640a8508fC6a86d45DF051962668E1e8AC7"},
      {"0x00000000000000000000000000000000deadbeef", "cafebabe",
       "deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef",
       "0x1d8bfDC5D46DC4f61D6b6115972536eBE6A8854C"},
      {"0x0000000000000000000000000000000000000000", "0", "",
       "0xE33C0C7F7df4809055C3ebA6c09CFe4BaF1BD9e0"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.expected) {
      const Address result =
          create2_address(address(c.factory), word(c.salt), code_hash(c.init_code));
      BOOST_TEST(result.checksummed() == c.expected);
    }
  }
}

BOOST_AUTO_TEST_CASE(deposit_salt_layout) {
  const Address recipient = address("0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE");

  // uint256(1012) ++ uint256(address), both big-endian 32-byte words, built by hand.
  Bytes words(64, 0);
  words[30] = 0x03;  // 1012 = 0x03f4
  words[31] = 0xf4;
  std::copy(recipient.bytes().begin(), recipient.bytes().end(), words.begin() + 44);

  const Hash32 salt = deposit_salt(1012, recipient);
  BOOST_TEST(salt == keccak256(words));
  // Same value from an independent Python Keccak over the same 64 bytes.
  BOOST_TEST(to_hex(salt) == "f6b4372ff269c1e22b7a412cd9307a5eb692b38d887a85f946ffac668aa06d54");
}

BOOST_AUTO_TEST_CASE(deposit_salt_uses_all_chain_id_bytes) {
  const Address recipient = address("0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE");
  const std::uint64_t chain_id = 0x0102030405060708ULL;
  Bytes words(64, 0);
  for (int i = 0; i < 8; ++i) words[24 + i] = static_cast<std::uint8_t>(i + 1);
  std::copy(recipient.bytes().begin(), recipient.bytes().end(), words.begin() + 44);
  BOOST_TEST(deposit_salt(chain_id, recipient) == keccak256(words));
}

BOOST_AUTO_TEST_CASE(deposit_address_is_create2_of_salt) {
  const Address factory = address("0xdeadbeef00000000000000000000000000000000");
  const Hash32 init_hash = code_hash("deadbeef");
  const Address recipient = address("0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE");

  const Address first = deposit_address(factory, init_hash, 1012, recipient);
  BOOST_TEST((first == deposit_address(factory, init_hash, 1012, recipient)));
  BOOST_TEST((first == create2_address(factory, deposit_salt(1012, recipient), init_hash)));
  BOOST_TEST((first != deposit_address(factory, init_hash, 1013, recipient)));
  BOOST_TEST((first != deposit_address(factory, init_hash, 1012,
                                       address("0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfF"))));
  BOOST_TEST((first != deposit_address(address("0xdeadbeef00000000000000000000000000000001"),
                                       init_hash, 1012, recipient)));
  BOOST_TEST((first != deposit_address(factory, code_hash("00"), 1012, recipient)));
}
