// What `connector-admin webhook add` reads (admin/webhook_input.h: the --addresses file,
// --recipient values, --statuses) and the table `webhook list` prints (admin/webhook_list.h).
#define BOOST_TEST_MODULE webhook_admin
#include <boost/test/unit_test.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "admin/webhook_input.h"
#include "admin/webhook_list.h"

using namespace connector::admin;
using Strings = std::vector<std::string>;

namespace {

const std::string kA = "0x52d9e4ccc9c769f131b6ef0c3729e5d0cd52defe";
const std::string kAChecksummed = "0x52d9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE";
const std::string kB = "0x" + std::string(40, 'b');

std::string refusal(auto&& parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  BOOST_FAIL("accepted");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_address_file_is_one_address_a_line_lower_cased_sorted_each_once) {
  const std::string file = "# the exchange's hot wallets\n" + kB + "\n\n  " + kAChecksummed +
                           "  # wallet 2\r\n\t" + kA + "\r\n" + "0x" + std::string(40, 'B') +
                           "\n   \n# " + "not an address\n" + kA;  // no newline at the end
  BOOST_TEST(parse_address_file(file) == (Strings{kA, kB}));
  BOOST_TEST(parse_address_file(kA) == Strings{kA});
}

BOOST_AUTO_TEST_CASE(a_bad_line_is_named_by_its_number) {
  BOOST_TEST(refusal([] { parse_address_file(kA + "\n\n# c\n0x1234\n"); }) ==
             "line 4: '0x1234' is not an address (0x and 40 hex digits)");
  BOOST_TEST(refusal([] { parse_address_file("\r\n" + kA + " " + kB + "\n"); }) ==
             "line 2: '" + kA + " " + kB.substr(0, 7) +
                 "...' is not an address (0x and 40 hex digits)");
  BOOST_TEST(
      refusal([] { parse_address_file(kA + "\n52d9e4ccc9c769f131b6ef0c3729e5d0cd52defe"); }) ==
      "line 2: '52d9e4ccc9c769f131b6ef0c3729e5d0cd52defe' is not an address (0x and 40 hex "
      "digits)");
  // Mixed case is an EIP-55 checksum, or a typo.
  BOOST_TEST(refusal([] { parse_address_file("0x52D9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE\n"); }) ==
             "line 1: '0x52D9E4Ccc9c769F131b6eF0C3729E5D0cd52dEfE' is in mixed case but not its "
             "EIP-55 checksum (" +
                 kAChecksummed + "): a typo?");
  // A control character is quoted as '?'.
  BOOST_TEST(refusal([] { parse_address_file(std::string("0x\x01") + "\n"); }) ==
             "line 1: '0x?' is not an address (0x and 40 hex digits)");
}

BOOST_AUTO_TEST_CASE(a_file_without_an_address_or_with_too_many_is_refused) {
  BOOST_TEST(refusal([] { parse_address_file(""); }) == "no address in it");
  BOOST_TEST(refusal([] { parse_address_file("# only a comment\n\n \r\n"); }) ==
             "no address in it");
  std::string many;
  for (std::size_t i = 0; i <= kMaxWebhookAddresses; ++i) {
    char digits[41];
    std::snprintf(digits, sizeof digits, "%040zx", i);
    many += "0x" + std::string(digits) + "\n";
  }
  BOOST_TEST(refusal([&] { parse_address_file(many); }) ==
             "line 100001: more than 100000 addresses");
  // Duplicates count once: the bound is on distinct addresses (and a file of the most distinct
  // ones, then as many again repeated, is read in one pass).
  many.resize(many.rfind("0x"));
  for (std::size_t i = 0; i < kMaxWebhookAddresses; ++i) many += "0x" + std::string(40, '0') + "\n";
  BOOST_TEST(parse_address_file(many).size() == kMaxWebhookAddresses);
}

BOOST_AUTO_TEST_CASE(recipients_follow_the_same_rules) {
  BOOST_TEST(parse_recipients(Strings{kB, kAChecksummed, kA}) == (Strings{kA, kB}));
  BOOST_TEST(refusal([] {
               parse_recipients(Strings{kA, " " + kB});
             }) == "' " + kB + "' is not an address (0x and 40 hex digits)");
}

BOOST_AUTO_TEST_CASE(statuses_are_a_comma_list_of_history_statuses_in_the_schemas_order) {
  BOOST_TEST(all_statuses() == "Deposit,Pending,Confirmed,Error");
  BOOST_TEST(parse_statuses("Deposit,Pending,Confirmed,Error") == all_statuses());
  BOOST_TEST(parse_statuses("error, CONFIRMED ,deposit") == "Deposit,Confirmed,Error");
  BOOST_TEST(parse_statuses("Pending,pending") == "Pending");
  BOOST_TEST(refusal([] { parse_statuses(""); }) ==
             "an empty status (the statuses: Deposit,Pending,Confirmed,Error)");
  BOOST_TEST(refusal([] { parse_statuses("Deposit,"); }) ==
             "an empty status (the statuses: Deposit,Pending,Confirmed,Error)");
  BOOST_TEST(refusal([] { parse_statuses("Deposit,Refunded"); }) ==
             "unknown status 'Refunded' (the statuses: Deposit,Pending,Confirmed,Error)");
}

BOOST_AUTO_TEST_CASE(the_list_lines_up_its_columns_under_a_header) {
  connector::db::SubscriptionList list;
  list.feed_end = 1500;
  connector::db::SubscriptionState first;
  first.id = 7;
  first.url = "https://exchange.example/hooks";
  first.enabled = true;
  first.statuses = "Deposit,Confirmed";
  first.addresses = 12;
  first.acked_seq = 1200;
  first.delivered = 340;
  first.retried = 5;
  first.failing_since_us = 1'714'564'800'123'456;  // 2024-05-01T12:00:00.123456Z
  first.last_status = "timeout";
  first.last_attempt_us = 1'714'568'400'000'000;
  connector::db::SubscriptionState second;
  second.id = 12;
  second.url = "http://127.0.0.1:8000/h";
  second.statuses = "Error";
  second.addresses = 1;
  second.acked_seq = 1500;
  second.lost_before_seq = 900;
  second.replay_from_seq = 1000;
  list.subscriptions = {first, second};
  BOOST_TEST(format_subscription_list(list) ==
             "id  enabled  statuses           addresses  acked_seq  lag  delivered  retried  "
             "failing_since         lost_before_seq  replay_from  last_status  last_attempt      "
             "    url\n"
             "7   yes      Deposit,Confirmed  12         1200       300  340        5        "
             "2024-05-01T12:00:00Z  0                -            timeout      "
             "2024-05-01T13:00:00Z  https://exchange.example/hooks\n"
             "12  no       Error              1          1500       0    0          0        "
             "-                     900              1000         -            -             "
             "        http://127.0.0.1:8000/h\n");
  BOOST_TEST(format_subscription_list({}) ==
             "id  enabled  statuses  addresses  acked_seq  lag  delivered  retried  "
             "failing_since  lost_before_seq  replay_from  last_status  last_attempt  url\n");
}

BOOST_AUTO_TEST_CASE(times_are_utc_to_the_second) {
  BOOST_TEST(utc_seconds(0) == "-");
  BOOST_TEST(utc_seconds(1) == "1970-01-01T00:00:00Z");
  BOOST_TEST(utc_seconds(1'714'564'800'999'999) == "2024-05-01T12:00:00Z");
}
