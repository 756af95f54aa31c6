#include "events/publisher.h"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "db/change_feed.h"
#include "db/refresher.h"
#include "domain/event_channels.h"
#include "events/cursor_file.h"
#include "http/server_sent_event.h"
#include "json/change_list.h"
#include "json/history_writer.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/log_throttle.h"

namespace connector::events {
namespace {

using std::chrono::milliseconds;

// The most one kind of passed-over message is logged: a flood of them is one line a minute,
// the counters say how many.
constexpr std::chrono::seconds kPassedOverLogEvery{60};
util::LogThrottle refusal_lines(kPassedOverLogEvery);
util::LogThrottle unnameable_lines(kPassedOverLogEvery);

// Runs one publish: false when nchan refused the message for good (counted, and passed over:
// retrying would hold every change behind it while nchan's memory stays full).
template <typename Send>
bool taken(pool::EventsBoard& board, metrics::EventsCounters& counts, Send&& send) {
  try {
    send();
    return true;
  } catch (const PublishRefused& e) {
    counts.publishes_refused.fetch_add(1);
    board.store_full_until_ms.store(util::monotonic_ms() + pool::EventsBoard::kStoreFullForMs);
    if (refusal_lines.due()) {
      util::log_warning(std::string("the event publisher passed over a message: ") + e.what() +
                        " (507, or 500 for several channels: nchan_shared_memory_size is full; "
                        "connector_events_publishes_refused_total counts them)");
    }
    return false;
  }
}

void log_unnameable(const db::FeedChange& change) {
  if (!unnameable_lines.due()) return;
  // The row's values are not repeated: its id says where to look.
  util::log_warning("the event publisher passed over change " + std::to_string(change.seq) +
                    " of history record " + std::to_string(change.record->id) +
                    ": its hash or an address holds a character outside [0-9a-z], so it names no "
                    "event channel (connector_events_changes_unpublishable_total counts them)");
}

}  // namespace

EventPublisher::EventPublisher(const config::Config& config, db::CircuitBreakers& breakers,
                               db::RefreshedReference& reference, pool::EventsBoard& board,
                               metrics::EventsCounters& counts)
    : config_(config),
      breakers_(breakers),
      reference_(reference),
      board_(board),
      counts_(counts),
      pid_(static_cast<std::int32_t>(::getpid())),
      generation_(board.publisher.generation.load()),
      order_(milliseconds(config.worker.events_gap_wait_ms)) {}

EventPublisher::~EventPublisher() { stop(); }

void EventPublisher::start() {
  if (config_.worker.events_publisher.empty()) return;
  loop_.start<db::DriverThreadScope>("publisher", [this] { return round(); });
}

void EventPublisher::stop() {
  loop_.stop();
  if (!board_.publisher.held_by(pid_)) return;
  save_cursor();
  board_.publisher.release(pid_);
}

milliseconds EventPublisher::round() {
  const milliseconds every(config_.worker.events_poll_ms);
  if (!board_.publisher.hold(pid_, generation_, util::monotonic_ms(), kLease.count())) {
    return every;
  }
  bool more = false;
  try {
    more = work();
    if (failures_ > 0) util::log_info("the event publisher runs again");
    failures_ = 0;
  } catch (const std::exception& e) {
    counts_.publish_failures.fetch_add(1);
    // The first failure, then one line a minute or so while they go on.
    if (failures_++ % 300 == 0) {
      util::log_warning(std::string("the event publisher waits: ") + e.what());
    }
  }
  wake_polls();  // the changes whose cursor moved, even when the round failed after them
  if (!board_.publisher.held_by(pid_)) return every;  // lost mid-round: the new holder's now
  ping_streams();
  settle_cursor();
  board_.publisher.beat(util::monotonic_ms());
  save_cursor();
  return more ? milliseconds(0) : every;
}

bool EventPublisher::work() {
  if (!db_) {
    db_ = std::make_unique<db::Connection>(
        breakers_.attach(db::read_targets(config_.db)),
        db::connection_options(config_.db, config_.worker.request_timeout_ms));
  }
  if (!nchan_) {
    // A second per request: a publish (its render included) stays well inside the lease.
    nchan_ = std::make_unique<NchanClient>(config_.worker.events_publisher, kPublishTimeout,
                                           board_.events_nginx_answers);
  }
  db_->set_deadline(util::deadline_from_now(config_.worker.request_budget()));
  if (!board_.cursor_known.load()) resume();
  publish_initial_states();
  const bool more = publish_changes();
  counts_.last_round_unix_ms.store(util::unix_ms_now());
  return more;
}

// Where the pool stopped (another process held the lease), else where the service stopped
// (the cursor file), else the feed's end: a first start publishes what changes from now on.
void EventPublisher::resume() {
  std::optional<std::uint64_t> cursor;
  if (!config_.worker.events_cursor_file.empty()) {
    try {
      cursor = read_cursor_file(config_.worker.events_cursor_file);
    } catch (const std::exception& e) {
      // Damaged (a disk that lost its last write): the feed's end rather than no events at all.
      util::log_error(std::string("the event publisher's cursor file is unreadable, starting at "
                                  "the feed's end (changes since it was written are not "
                                  "published): ") +
                      e.what());
    }
  }
  if (!cursor) cursor = db::feed_end(*db_);
  board_.cursor.store(*cursor);
  board_.cursor_known.store(true);
  saved_cursor_ = *cursor;
  util::log_info("the event publisher starts after change " + std::to_string(*cursor));
}

void EventPublisher::publish_initial_states() {
  // What was asked for when the round began; what is asked for meanwhile, at the next round.
  // Past the budget a request is dropped before anything is read for it. When nchan cannot be
  // asked or cannot take a state (unreachable, its memory full), this round's other requests
  // are dropped too: requests for states never hold the feed's changes (publish_changes).
  const auto ids = board_.take_initial_state_requests();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!board_.publisher.held_by(pid_)) return;
    if (!initial_state_budget_.take(InitialStateBudget::Clock::now())) {
      board_.initial_state_requests_dropped.fetch_add(1);
      continue;
    }
    board_.publisher.beat(util::monotonic_ms());
    try {
      publish_initial_state(ids[i]);
    } catch (const PublishError&) {
      counts_.publish_failures.fetch_add(1);
      board_.initial_state_requests_dropped.fetch_add(ids.size() - i);
      return;
    }
  }
}

void EventPublisher::publish_initial_state(std::uint64_t history_id) {
  const auto state = db::find_record_state(*db_, history_id);
  // A change not published yet carries this state: it goes out with the feed, in order.
  if (!state || state->seq > board_.cursor.load()) return;
  const auto channel = domain::record_channel(state->record.hash);
  if (nchan_->record_messages(channel) != 0) return;  // its newest message is its state
  if (publish(state->record, state->seq, /*whole_change=*/false)) {
    counts_.initial_states_published.fetch_add(1);
  }
}

bool EventPublisher::publish_changes() {
  const std::uint64_t cursor = board_.cursor.load();
  const auto changes = db::read_feed(*db_, cursor, kBatch);
  if (changes.empty() && !behind_logged_ && db::feed_end(*db_) < cursor) {
    behind_logged_ = true;  // a replica behind, or a new database under an old cursor file
    util::log_warning("the change feed ends before the event publisher's cursor (" +
                      std::to_string(cursor) + "): waiting for it");
  }
  std::vector<std::uint64_t> seqs;
  seqs.reserve(changes.size());
  for (const auto& change : changes) seqs.push_back(change.seq);
  const auto verdict = order_.publishable(cursor, seqs, db::FeedOrder::Clock::now());
  if (verdict.passed_over > 0) {
    counts_.changes_passed_over.fetch_add(verdict.passed_over);
    util::log_warning("the event publisher passed over " + std::to_string(verdict.passed_over) +
                      " feed positions after " + std::to_string(cursor) +
                      " (a hole that did not fill within events_gap_wait_ms, or changes trimmed "
                      "before they were published)");
  }
  std::uint64_t at = cursor;
  for (std::size_t i = 0; i < verdict.publish; ++i) {
    const auto& change = changes[i];
    // Stalled past the lease, another process publishes now: not both.
    if (!board_.publisher.held_by(pid_)) return false;
    // A row no channel can be named for would fail every round: passed over, counted once.
    const bool nameable = !change.record || domain::has_channel_names(*change.record);
    const bool sent = change.record && nameable;
    if (sent) publish(*change.record, change.seq, /*whole_change=*/true);
    // Moved only from where this process found it: a holder that lost the lease mid-publish
    // never moves the new holder's cursor back.
    if (!board_.cursor.compare_exchange_strong(at, change.seq)) return false;
    at = change.seq;
    if (nameable) {
      counts_.changes_published.fetch_add(1);
    } else {
      counts_.changes_unpublishable.fetch_add(1);
      log_unnameable(change);
    }
    board_.publisher.beat(util::monotonic_ms());
    if (sent) {
      for (auto& channel : domain::poll_channels(*change.record)) {
        polls_to_wake_.push_back(std::move(channel));
      }
    }
  }
  return changes.size() == kBatch && verdict.publish == changes.size();
}

bool EventPublisher::publish(const domain::HistoryRecord& record, std::uint64_t seq,
                             bool whole_change) {
  rapidjson::StringBuffer buffer;
  json::JsonWriter writer(buffer);
  const auto deadline = util::deadline_from_now(config_.worker.request_budget());
  json::write_record_answer(writer, record, *reference_.covering(record, deadline));
  const std::string_view json(buffer.GetString(), buffer.GetSize());
  const auto event = http::server_sent_event(json, seq);
  const auto to_record = [&] {
    nchan_->publish_to_record(domain::record_channel(record.hash), event);
  };
  // A state on request goes to the same channel, kept a minute (events/initial_state_budget.h).
  if (!whole_change) {
    return taken(board_, counts_, [&] {
      nchan_->publish_initial_state(domain::record_channel(record.hash), event);
    });
  }
  // A change whose record channel took it (or refused it for good) but not the rest is retried
  // from there: no subscriber gets it twice.
  bool all = true;
  if (record_published_ != seq) {
    all = taken(board_, counts_, to_record);
    record_published_ = seq;
    board_.publisher.beat(util::monotonic_ms());
  }
  return taken(board_, counts_,
               [&] { nchan_->publish_to_recent(domain::recent_channels(record), event); }) &&
         all;
}

// After the round's last move of the cursor: a woken client asks the worker, which answers up to
// the cursor, so it gets the whole round's changes in one answer, and its next poll is held
// before the next round publishes (woken after each change instead, a client that came back in
// the middle of a round missed the wake-ups published while it was handed over, and waited a
// round more). A wake-up lost (counted) costs its polls their 30 s, not the change.
void EventPublisher::wake_polls() {
  auto& channels = polls_to_wake_;
  std::sort(channels.begin(), channels.end());
  channels.erase(std::unique(channels.begin(), channels.end()), channels.end());
  std::vector<std::string> some;
  std::size_t bytes = 0;
  bool reachable = true;
  const auto wake = [&] {
    try {
      taken(board_, counts_, [&] { nchan_->publish_to_polls(some, json::kNoChanges); });
    } catch (const PublishError&) {
      // The rest would wait out the same timeout each: those polls get their 30 s instead.
      counts_.publish_failures.fetch_add(1);
      reachable = false;
    }
    board_.publisher.beat(util::monotonic_ms());
    some.clear();
    bytes = 0;
  };
  for (auto& channel : channels) {
    if (!nchan_ || !reachable) break;
    if (!some.empty() && bytes + 1 + channel.size() > kChannelListBytes) wake();
    bytes += (some.empty() ? 0 : 1) + channel.size();
    some.push_back(std::move(channel));
  }
  if (!some.empty() && reachable) wake();
  channels.clear();
}

// Every kPingEvery, a comment to every open stream (the "ping" channel); every
// kPingWhileUnanswered while the events nginx does not answer, so that hand-overs resume
// within a round of its return.
void EventPublisher::ping_streams() {
  const auto now = std::chrono::steady_clock::now();
  const auto every = board_.events_nginx_answers.load() ? kPingEvery : kPingWhileUnanswered;
  if (!nchan_ || now - last_ping_ < every) return;
  last_ping_ = now;
  try {
    nchan_->publish_ping(http::kPingBody);
  } catch (const std::exception&) {
    // Not counted: a ping lost costs nothing (streams wait for the next, 25 s on), and what
    // keeps nchan from taking one (unreachable, its memory full) fails the changes too.
  }
}

void EventPublisher::settle_cursor() {
  if (!board_.cursor_known.load()) return;
  const std::int64_t now = util::monotonic_ms();
  recent_cursors_.emplace_back(now, board_.cursor.load());
  const std::int64_t settled_at = now - pool::EventsBoard::kRecentKeptMs;
  // The newest entry at least kRecentKeptMs old, and nothing older than it, is kept.
  while (recent_cursors_.size() > 1 && recent_cursors_[1].first <= settled_at) {
    recent_cursors_.pop_front();
  }
  if (recent_cursors_.front().first <= settled_at) {
    board_.settled_cursor.store(recent_cursors_.front().second);
  }
}

void EventPublisher::save_cursor() {
  const auto& path = config_.worker.events_cursor_file;
  if (path.empty() || !board_.cursor_known.load() || !board_.publisher.held_by(pid_)) return;
  const std::uint64_t cursor = board_.cursor.load();
  if (cursor == saved_cursor_) return;
  try {
    write_cursor_file(path, cursor);
    saved_cursor_ = cursor;
  } catch (const std::exception& e) {
    util::log_warning(std::string("the event publisher cannot keep its cursor: ") + e.what());
  }
}

}  // namespace connector::events
