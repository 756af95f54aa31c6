#define BOOST_TEST_MODULE test_address
#include <boost/test/unit_test.hpp>

#include <cctype>
#include <string>

#include "chain/address.h"

using namespace connector::chain;

namespace {

// The test vectors of EIP-55 (all caps, all lower, normal).
const char* const kEip55Vectors[] = {
    "0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
};

std::string to_lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string to_upper_digits(std::string text) {
  for (std::size_t i = 2; i < text.size(); ++i) {
    text[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  }
  return text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(eip55_vectors_from_any_case) {
  for (const std::string vector : kEip55Vectors) {
    BOOST_TEST_CONTEXT(vector) {
      for (const std::string& input : {vector, to_lower(vector), to_upper_digits(vector)}) {
        const auto address = Address::parse(input);
        BOOST_REQUIRE(address.has_value());
        BOOST_TEST(address->checksummed() == vector);
        BOOST_TEST(address->lower() == to_lower(vector));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(parse_keeps_bytes) {
  const auto address = Address::parse("0x52908400098527886E0F7030069857D2E4169EE7");
  BOOST_REQUIRE(address.has_value());
  BOOST_TEST(address->bytes()[0] == 0x52);
  BOOST_TEST(address->bytes()[19] == 0xe7);
  BOOST_TEST((*address == *Address::parse("0x52908400098527886e0f7030069857d2e4169ee7")));
}

BOOST_AUTO_TEST_CASE(parse_rejections) {
  const std::string digits = "5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
  BOOST_TEST(Address::parse("0x" + digits).has_value());
  BOOST_TEST(!Address::parse(digits).has_value());                   // no 0x
  BOOST_TEST(!Address::parse("0X" + digits).has_value());            // upper-case prefix
  BOOST_TEST(!Address::parse("0x" + digits.substr(1)).has_value());  // 39 digits
  BOOST_TEST(!Address::parse("0x" + digits + "0").has_value());      // 41 digits
  BOOST_TEST(!Address::parse("0x" + digits.substr(1) + "g").has_value());
  BOOST_TEST(!Address::parse("0x" + digits.substr(1) + " ").has_value());
  BOOST_TEST(!Address::parse("").has_value());
  BOOST_TEST(!Address::parse("0x").has_value());
  BOOST_TEST(!Address::parse(" 0x" + digits.substr(1)).has_value());
}

BOOST_AUTO_TEST_CASE(is_checksummed_cases) {
  for (const char* vector : kEip55Vectors) BOOST_TEST(is_checksummed(vector));
  // The mixed-case vectors are not checksummed in lower case or upper case.
  BOOST_TEST(!is_checksummed("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"));
  BOOST_TEST(!is_checksummed("0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED"));
  // One letter's case flipped.
  BOOST_TEST(!is_checksummed("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"));
  BOOST_TEST(is_checksummed("0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE"));
  BOOST_TEST(!is_checksummed("0x52d9e4ccc9c769f131b6ef0c3729e5d0cd52defe"));
  // Not an address at all.
  BOOST_TEST(!is_checksummed(""));
  BOOST_TEST(!is_checksummed("5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"));
  BOOST_TEST(!is_checksummed("0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"));
}

BOOST_AUTO_TEST_CASE(lower_form) {
  const auto address = Address::parse("0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb");
  BOOST_REQUIRE(address.has_value());
  BOOST_TEST(address->lower() == "0xd1220a0cf47c7b9be7a2e6ba89f429762e7b9adb");
  const Address zero(Address::Bytes20{});
  BOOST_TEST(zero.lower() == "0x0000000000000000000000000000000000000000");
  BOOST_TEST(zero.checksummed() == "0x0000000000000000000000000000000000000000");
}
