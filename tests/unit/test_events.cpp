// The event publisher's pure parts: the feed's order and holes (db/feed_order.h), the
// message body (http/server_sent_event.h), the channel names (domain/event_channels.h), what
// nchan's status for a publish means (events/publish_verdict.h), the cursor file
// (events/cursor_file.h), the lease (pool/lease.h), the initial-state requests
// (pool/events_board.h) and the publisher's budget for them (events/initial_state_budget.h).
#define BOOST_TEST_MODULE events
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/feed_order.h"
#include "domain/event_channels.h"
#include "events/cursor_file.h"
#include "events/initial_state_budget.h"
#include "events/nchan_info.h"
#include "events/publish_verdict.h"
#include "http/server_sent_event.h"
#include "pool/events_board.h"
#include "pool/lease.h"

using namespace connector;
using std::chrono::milliseconds;
using Seqs = std::vector<std::uint64_t>;

namespace {
const db::FeedOrder::Clock::time_point kT0{std::chrono::seconds(1000)};
}  // namespace

BOOST_AUTO_TEST_CASE(changes_without_a_hole_all_go_out) {
  db::FeedOrder order(milliseconds(2000));
  const Seqs seqs = {11, 12, 13};
  const auto verdict = order.publishable(10, seqs, kT0);
  BOOST_TEST(verdict.publish == 3u);
  BOOST_TEST(verdict.passed_over == 0u);
}

BOOST_AUTO_TEST_CASE(a_hole_holds_what_follows_until_it_fills) {
  db::FeedOrder order(milliseconds(2000));
  const Seqs seqs = {11, 13, 14};  // 12 not committed yet
  BOOST_TEST(order.publishable(10, seqs, kT0).publish == 1u);
  BOOST_TEST(order.publishable(11, Seqs{13, 14}, kT0 + milliseconds(1999)).publish == 0u);
  // 12 arrives: everything goes, nothing passed over.
  const auto verdict = order.publishable(11, Seqs{12, 13, 14}, kT0 + milliseconds(1999));
  BOOST_TEST(verdict.publish == 3u);
  BOOST_TEST(verdict.passed_over == 0u);
}

BOOST_AUTO_TEST_CASE(a_hole_open_for_the_wait_is_passed_over) {
  db::FeedOrder order(milliseconds(2000));
  BOOST_TEST(order.publishable(10, Seqs{14, 15}, kT0).publish == 0u);
  const auto verdict = order.publishable(10, Seqs{14, 15}, kT0 + milliseconds(2000));
  BOOST_TEST(verdict.publish == 2u);
  BOOST_TEST(verdict.passed_over == 3u);  // 11, 12, 13
  // A new hole waits its own time.
  BOOST_TEST(order.publishable(15, Seqs{17}, kT0 + milliseconds(2000)).publish == 0u);
  BOOST_TEST(order.publishable(15, Seqs{17}, kT0 + milliseconds(3999)).publish == 0u);
  BOOST_TEST(order.publishable(15, Seqs{17}, kT0 + milliseconds(4000)).publish == 1u);
}

BOOST_AUTO_TEST_CASE(an_event_is_its_id_line_then_its_data_line) {
  BOOST_TEST(http::server_sent_event(R"({"a":"b"})", 42) == "id: 42\ndata: {\"a\":\"b\"}\n");
  BOOST_CHECK_THROW(http::server_sent_event("{\n}", 1), std::invalid_argument);
  BOOST_CHECK_THROW(http::server_sent_event("{\r}", 1), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(channels_are_lower_case_and_each_address_once) {
  BOOST_TEST(domain::record_channel(std::string(64, 'A')) == "h:" + std::string(64, 'a'));
  domain::HistoryRecord record;
  record.source_deposit_address = "0xAbC0000000000000000000000000000000000001";
  record.source_sender = "0xabc0000000000000000000000000000000000002";
  record.destination_address = "0xABC0000000000000000000000000000000000002";  // the sender
  const std::vector<std::string> expected = {"a:0xabc0000000000000000000000000000000000001",
                                             "a:0xabc0000000000000000000000000000000000002"};
  BOOST_TEST(domain::address_channels(record) == expected, boost::test_tools::per_element());
  record.destination_address.clear();  // not recorded yet: no channel "a:"
  record.source_sender.clear();
  BOOST_TEST(domain::address_channels(record).size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_cursor_file_is_one_number_replaced_whole) {
  const std::string path = "/tmp/connector-test-cursor-" + std::to_string(::getpid());
  std::remove(path.c_str());
  BOOST_TEST(!events::read_cursor_file(path).has_value());
  events::write_cursor_file(path, 123456789012345ull);
  BOOST_TEST(*events::read_cursor_file(path) == 123456789012345ull);
  for (const char* bad : {"", "12x\n", "-1\n", "1 2\n", "99999999999999999999999\n"}) {
    std::ofstream(path, std::ios::trunc) << bad;
    BOOST_CHECK_THROW(events::read_cursor_file(path), std::runtime_error);
  }
  std::remove(path.c_str());
  BOOST_CHECK_THROW(events::write_cursor_file("/nonexistent-dir/cursor", 1), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(a_cursor_is_one_to_twenty_digits_that_fit_64_bits) {
  BOOST_TEST(*events::parse_cursor_text("0") == 0u);
  BOOST_TEST(*events::parse_cursor_text("007\n") == 7u);
  BOOST_TEST(*events::parse_cursor_text("18446744073709551615\n") == UINT64_MAX);
  for (const char* bad : {"", "\n", "18446744073709551616", "000000000000000000001", "+1", "-0",
                          "1\n\n", " 1", "1 ", "0x10", "1\r\n"}) {
    BOOST_TEST(!events::parse_cursor_text(bad).has_value(), bad);
  }
  // A long file is refused however it goes on (only its first 22 bytes are read).
  const std::string path = "/tmp/connector-test-cursor-long-" + std::to_string(::getpid());
  std::ofstream(path, std::ios::trunc) << "1" << std::string(1 << 20, '0') << "\n";
  BOOST_CHECK_THROW(events::read_cursor_file(path), std::runtime_error);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(nchan_channel_info_is_read_for_its_messages_within_a_bound) {
  const std::string info =
      R"({"messages": 1, "requested": 3, "subscribers": 0, "last_message_id": "1700000000:0" })";
  BOOST_TEST(*events::messages_in_channel_info(info) == 1u);
  BOOST_TEST(*events::messages_in_channel_info(R"({"messages":0})") == 0u);
  for (const char* bad : {"", "{}", "[1]", R"({"messages": -1})", R"({"messages": 1.5})",
                          R"({"messages": "1"})", R"({"messages": 1)", R"(null)"}) {
    BOOST_TEST(!events::messages_in_channel_info(bad).has_value(), bad);
  }
  // Exactly the bound is read; one byte more is not.
  const auto padded = [](std::size_t size) {
    const std::string head = R"({"messages": 2, "pad": ")", tail = R"("})";
    return head + std::string(size - head.size() - tail.size(), 'x') + tail;
  };
  BOOST_TEST(*events::messages_in_channel_info(padded(events::kMaxChannelInfoBytes)) == 2u);
  BOOST_TEST(!events::messages_in_channel_info(padded(events::kMaxChannelInfoBytes + 1)));
  // A nesting as deep as the bound allows is parsed without recursion, and is no answer.
  const std::string deep = std::string(2000, '[') + std::string(2000, ']');
  BOOST_TEST(!events::messages_in_channel_info(deep).has_value());
}

BOOST_AUTO_TEST_CASE(one_process_holds_the_lease_until_it_stops_beating) {
  pool::Lease lease;
  lease.next_generation();  // generation 1
  BOOST_TEST(lease.hold(100, 1, 0, 5000));
  BOOST_TEST(!lease.hold(200, 1, 4999, 5000));  // the holder beat at 0: still its
  lease.beat(4000);
  BOOST_TEST(!lease.hold(200, 1, 8999, 5000));
  BOOST_TEST(lease.hold(200, 1, 9000, 5000));  // 5 s without a beat: taken over
  BOOST_TEST(lease.held_by(200));
  BOOST_TEST(!lease.hold(100, 1, 9000, 5000));
  lease.release(100);  // not its: nothing
  BOOST_TEST(lease.held_by(200));
  lease.release(200);
  BOOST_TEST(lease.hold(100, 1, 9001, 5000));
  // A reload: the old configuration's holder gives it up; only the new one may take it.
  lease.next_generation();
  BOOST_TEST(!lease.hold(100, 1, 9002, 5000));
  BOOST_TEST(lease.pid.load() == 0);
  BOOST_TEST(lease.hold(300, 2, 9002, 5000));
}

BOOST_AUTO_TEST_CASE(initial_state_requests_are_taken_once_and_bounded) {
  pool::EventsBoard board;
  BOOST_TEST(board.request_initial_state(0));
  BOOST_TEST(board.request_initial_state(7));
  BOOST_TEST(board.request_initial_state(7));  // asked already: one request
  auto taken = board.take_initial_state_requests();
  std::sort(taken.begin(), taken.end());
  BOOST_TEST(taken == (std::vector<std::uint64_t>{0, 7}), boost::test_tools::per_element());
  BOOST_TEST(board.take_initial_state_requests().empty());
  for (std::uint64_t id = 1; id <= pool::kInitialStateSlots; ++id) {
    BOOST_TEST(board.request_initial_state(id));
  }
  BOOST_TEST(!board.request_initial_state(1000));
  BOOST_TEST(board.initial_state_requests_dropped.load() == 1u);
  BOOST_TEST(board.take_initial_state_requests().size() == pool::kInitialStateSlots);
}

BOOST_AUTO_TEST_CASE(initial_states_are_budgeted_per_second_whatever_is_asked) {
  events::InitialStateBudget budget(3);
  const auto start = events::InitialStateBudget::Clock::time_point{} + std::chrono::hours(1);
  int taken = 0;
  for (int i = 0; i < 10; ++i) taken += budget.take(start + milliseconds(i)) ? 1 : 0;
  BOOST_TEST(taken == 3);  // the rest of that second: none
  BOOST_TEST(!budget.take(start + milliseconds(999)));
  // The next second has its own three.
  BOOST_TEST(budget.take(start + milliseconds(1000)));
  BOOST_TEST(budget.take(start + milliseconds(1001)));
  BOOST_TEST(budget.take(start + milliseconds(1500)));
  BOOST_TEST(!budget.take(start + milliseconds(1999)));
  BOOST_TEST(events::InitialStateBudget::kPerSecond == 200u);
}

BOOST_AUTO_TEST_CASE(a_message_nchan_refuses_for_good_is_passed_over_the_rest_retried) {
  using events::PublishVerdict;
  for (const long taken : {201L, 202L}) {
    BOOST_TEST((events::publish_verdict(taken) == PublishVerdict::kTaken), taken);
  }
  // Its shared memory full (507; 500 for a publish to several channels), or this message or its
  // channel names refused.
  for (const long refused : {507L, 500L, 400L, 403L, 413L, 414L}) {
    BOOST_TEST((events::publish_verdict(refused) == PublishVerdict::kRefused), refused);
  }
  // Not about the message: no publisher location (nginx without the drop-in, reloading), nchan
  // or nginx failing, or nothing nchan answers a publish with.
  for (const long retried : {0L, 200L, 204L, 404L, 405L, 408L, 429L, 502L, 503L, 504L}) {
    BOOST_TEST((events::publish_verdict(retried) == PublishVerdict::kRetry), retried);
  }
}

BOOST_AUTO_TEST_CASE(a_record_names_its_channels_only_with_lower_case_letters_and_digits) {
  domain::HistoryRecord record;
  record.hash = std::string(64, 'A');
  record.source_deposit_address = "0x" + std::string(40, 'B');  // EIP-55 spellings: lowered
  BOOST_TEST(domain::has_channel_names(record));  // no sender, no destination yet: none needed
  for (const char bad : {',', ':', ' ', '%', '-', '\0', '\xc3'}) {
    auto with_bad = record;
    with_bad.source_sender = "0x" + std::string(39, 'c') + bad;
    BOOST_TEST(!domain::has_channel_names(with_bad), static_cast<int>(bad));
    with_bad = record;
    with_bad.destination_address = std::string(1, bad) + "0x";
    BOOST_TEST(!domain::has_channel_names(with_bad), static_cast<int>(bad));
    with_bad = record;
    with_bad.hash[10] = bad;
    BOOST_TEST(!domain::has_channel_names(with_bad), static_cast<int>(bad));
  }
  record.hash.clear();
  BOOST_TEST(!domain::has_channel_names(record));
}
