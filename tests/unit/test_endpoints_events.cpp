// The event endpoints' answers (on events_fixture.h): a stream handed to nchan, a reconnection
// answered the changes it missed, and the long-polls (/v1/history/hash/changes,
// /v1/history/changes).
#define BOOST_TEST_MODULE test_endpoints_events
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "events_fixture.h"

using namespace connector;
using namespace connector::fakes;

BOOST_FIXTURE_TEST_SUITE(event_endpoints_on_fakes, EventsFixture)

BOOST_AUTO_TEST_CASE(a_first_subscription_is_handed_to_nchan_and_reads_no_feed) {
  const auto record = get_events("/v1/history/hash/events", hash_query, "");
  BOOST_TEST(record.status == 200);
  BOOST_TEST(
      has_header(record, "X-Accel-Redirect: /connector-events/record/" + std::string(64, 'a')));
  BOOST_TEST(record.body.empty());
  const auto address = get_events("/v1/history/events", address_query, "");
  BOOST_TEST(
      has_header(address, "X-Accel-Redirect: /connector-events/address/0x" + std::string(40, 'd')));
  BOOST_TEST(history.asked == "");
}

BOOST_AUTO_TEST_CASE(a_reconnection_is_answered_the_published_changes_it_missed) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  const auto response = get_events("/v1/history/hash/events", hash_query, "10");
  BOOST_TEST(response.status == 200);
  BOOST_TEST(history.asked == "record 42");
  // 11 only: 10 it has, 13 is not published yet (the stream it is handed to next gets it).
  BOOST_TEST(std::string(response.body) == "retry: 3000\n" + event(11));
  BOOST_TEST(has_header(response, "Content-Type: text/event-stream; charset=utf-8"));
  BOOST_TEST(has_header(response, "Cache-Control: no-store"));
  BOOST_TEST(response.head.find("X-Accel-Redirect") == std::string::npos);
  BOOST_TEST(response.head.find("ETag") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_reconnection_that_missed_nothing_gets_the_changes_from_now_on) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  // 12 went out more than the recent channels keep (EventsBoard::settled_cursor); before that,
  // a stream that had it would get it again there: it is told to come back shortly.
  board.settled_cursor.store(11);
  const auto recent = get_events("/v1/history/events", address_query, "12");
  BOOST_TEST(std::string(recent.body) == "retry: 3000\n: again shortly\n\n");
  BOOST_TEST(recent.head.find("X-Accel-Redirect") == std::string::npos);
  board.settled_cursor.store(12);
  const auto record = get_events("/v1/history/hash/events", hash_query, "11");
  BOOST_TEST(has_header(
      record, "X-Accel-Redirect: /connector-events/record-changes/" + std::string(64, 'a')));
  BOOST_TEST(record.body.empty());
  const auto address = get_events("/v1/history/events", address_query, "12");
  BOOST_TEST(has_header(
      address, "X-Accel-Redirect: /connector-events/address-changes/0x" + std::string(40, 'd')));
}

BOOST_AUTO_TEST_CASE(a_reconnection_this_node_cannot_answer_yet_is_told_to_come_back) {
  // Before the publisher's first round; then with this read server behind the publisher's;
  // then with the database lost: an empty stream (a comment), never a 503, which would stop a
  // browser's EventSource for good.
  const std::string again = "retry: 3000\n: again shortly\n\n";
  const auto starting = get_events("/v1/history/events", address_query, "9");
  BOOST_TEST(std::string(starting.body) == again);
  BOOST_TEST(has_header(starting, "Content-Type: text/event-stream; charset=utf-8"));
  board.cursor.store(13);
  board.cursor_known.store(true);
  history.held = 12;
  const auto behind = get_events("/v1/history/hash/events", hash_query, "9");
  BOOST_TEST(behind.status == 200);
  BOOST_TEST(std::string(behind.body) == again);
  history.held.reset();
  history.database_down = true;
  for (const auto* last_event_id : {"", "9"}) {
    const auto lost = get_events("/v1/history/hash/events", hash_query, last_event_id);
    BOOST_TEST(lost.status == 200);
    BOOST_TEST(std::string(lost.body) == again);
  }
}

BOOST_AUTO_TEST_CASE(an_empty_feed_is_no_lag) {
  // Nothing changed for a day: the trim emptied the feed. Not a server behind the publisher.
  board.cursor.store(12);
  board.cursor_known.store(true);
  board.settled_cursor.store(12);
  history.held = 0;
  const auto response = get_events("/v1/history/hash/events", hash_query, "12");
  BOOST_TEST(has_header(
      response, "X-Accel-Redirect: /connector-events/record-changes/" + std::string(64, 'a')));
  const auto poll = get_events("/v1/history/changes", address_query, "");
  BOOST_TEST(std::string(poll.body) == R"({"changes":[],"after":"12"})");
}

BOOST_AUTO_TEST_CASE(one_answer_carries_at_most_a_hundred_missed_changes) {
  board.cursor.store(150);
  board.cursor_known.store(true);
  history.feed.clear();
  for (std::uint64_t seq = 1; seq <= 150; ++seq) history.feed.push_back({seq, record()});
  const auto response = get_events("/v1/history/events", address_query, "0");
  std::string expected = "retry: 3000\n";
  for (std::uint64_t seq = 1; seq <= 100; ++seq) expected += event(seq);
  BOOST_TEST(std::string(response.body) == expected);
}

// A long-poll's change list, each change the record as /v1/history/hash answers it.
std::string change_list(EventsFixture& f, std::initializer_list<std::uint64_t> seqs,
                        std::uint64_t after) {
  const auto by_hash = f.router.handle({"GET", "/v1/history/hash", f.hash_query, {}, "rid-1"});
  std::string list = "{\"changes\":[";
  for (const auto seq : seqs) {
    if (list.back() == '}') list += ',';
    list +=
        "{\"seq\":\"" + std::to_string(seq) + "\",\"record\":" + std::string(by_hash.body) + "}";
  }
  return list + "],\"after\":\"" + std::to_string(after) + "\"}";
}

BOOST_AUTO_TEST_CASE(a_first_poll_is_where_to_poll_from_and_a_records_state) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  history.feed.pop_back();  // the record's newest change is 11, the feed's 12 (another's)
  history.held = 12;
  const auto first = get_events("/v1/history/hash/changes", hash_query, "");
  BOOST_TEST(first.status == 200);
  BOOST_TEST(std::string(first.body) == change_list(*this, {11}, 12));
  BOOST_TEST(has_header(first, "Content-Type: application/json; charset=utf-8"));
  BOOST_TEST(has_header(first, "Cache-Control: no-store"));
  BOOST_TEST(first.head.find("ETag") == std::string::npos);  // for this moment only
  const auto address = get_events("/v1/history/changes", address_query, "");
  BOOST_TEST(std::string(address.body) == R"({"changes":[],"after":"12"})");
  BOOST_TEST(history.asked == "");
  // A state newer than the cursor (its change not published yet): polled from after it.
  history.feed.push_back({13, record()});
  const auto ahead = get_events("/v1/history/hash/changes", hash_query, "");
  BOOST_TEST(std::string(ahead.body) == change_list(*this, {13}, 13));
}

BOOST_AUTO_TEST_CASE(a_poll_after_a_seq_gets_the_published_changes_or_waits_in_nchan) {
  board.cursor.store(12);
  board.cursor_known.store(true);
  const auto missed = get_events("/v1/history/hash/changes", hash_query + "&after=9", "");
  BOOST_TEST(history.asked == "record 42");
  BOOST_TEST(std::string(missed.body) == change_list(*this, {10, 11}, 11));
  const auto waits = get_events("/v1/history/hash/changes", hash_query + "&after=11", "");
  BOOST_TEST(
      has_header(waits, "X-Accel-Redirect: /connector-events/poll-record/" + std::string(64, 'a')));
  BOOST_TEST(waits.body.empty());
  const auto address = get_events("/v1/history/changes", address_query + "&after=10", "");
  BOOST_TEST(history.asked == "address 0x" + std::string(40, 'd'));
  BOOST_TEST(std::string(address.body) == change_list(*this, {11}, 11));
  const auto next = get_events("/v1/history/changes", address_query + "&after=12", "");
  BOOST_TEST(has_header(
      next, "X-Accel-Redirect: /connector-events/poll-address/0x" + std::string(40, 'd')));
}

BOOST_AUTO_TEST_CASE(a_poll_this_node_cannot_answer_yet_is_a_503_to_retry) {
  for (const auto& [path, query] : {std::pair{"/v1/history/hash/changes", hash_query},
                                    std::pair{"/v1/history/hash/changes", hash_query + "&after=3"},
                                    std::pair{"/v1/history/changes", address_query}}) {
    const auto response = get_events(path, query, "");
    BOOST_TEST(response.status == 503, query);
    BOOST_TEST(has_header(response, "Retry-After: 1"), query);
  }
  board.cursor.store(13);
  board.cursor_known.store(true);
  history.held = 12;
  const auto behind = get_events("/v1/history/changes", address_query + "&after=3", "");
  BOOST_TEST(behind.status == 503);
}

BOOST_AUTO_TEST_SUITE_END()
