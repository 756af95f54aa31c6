#pragma once
// Publishes every change of history to nchan, from one process of the pool at a time (a lease
// in the pool's shared state, pool/lease.h: another process takes over within kLease when its
// holder stops; the master frees it at once when the holder exits).
//
// Every events_poll_ms the holder reads the change feed (db/change_feed.h) after its cursor from
// the node's read server, in seq order (db/feed_order.h for holes), renders each changed
// record as /v1/history/hash does and publishes it on the record's channel, then on the
// channels kept a moment for returning streams and its addresses' (domain/event_channels.h,
// http/server_sent_event.h) and moves the cursor past it; at the end of the round it wakes the
// long-polls of the round's changes (json/change_list.h), and every kPingEvery it sends the
// streams a comment. The
// cursor lives in the pool's shared state, moved after each change and only by the holder (a
// compare-and-swap from where it found it), so a process that takes over resumes exactly there; and
// in events_cursor_file, written at the end of each round that moved it, for a restart of the
// service. A hung or lost database or nchan pauses it: it retries the same change next round (from
// the first of its channels that did not take it), and subscribers, held by nginx, are not touched.
// What can never go out is passed over and counted instead, so it holds nothing behind it: a
// message nchan refuses for good (events/publish_verdict.h: 507 when its shared memory is full),
// and a change whose record names no channel (domain::has_channel_names).
// Delivery is exactly once while the holder lives; a holder that dies or stalls past the lease in
// the middle of a publish, or a service killed before its round's cursor file, repeats that change
// or round, with the same id.
//
// It also answers the initial-state requests of the worker threads (api/event_stream.h): a record
// whose channel holds no message (never changed since nginx started, or expired) gets its
// current state published there, so that a new subscriber's first event is the record. Only the
// lease's holder publishes, checking it before each record, so such a state does not land after
// a newer change of the same record.
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "db/connection.h"
#include "db/feed_order.h"
#include "db/refreshed_reference.h"
#include "domain/history.h"
#include "events/initial_state_budget.h"
#include "events/nchan_client.h"
#include "metrics/events_counters.h"
#include "pool/events_board.h"
#include "util/background_loop.h"

namespace connector::events {

class EventPublisher {
 public:
  static constexpr std::chrono::milliseconds kLease{5000};
  static constexpr std::uint32_t kBatch = 500;                       // changes read per statement
  static constexpr std::chrono::milliseconds kPublishTimeout{1000};  // one request to nchan
  // The longest channel list of one publish: nchan takes a channel id of at most 1024 bytes, the
  // list included (about 15 long-poll channels).
  static constexpr std::size_t kChannelListBytes = 1000;
  // Well inside the read timeout of the API nginx's stream locations (60 s,
  // nginx/connector-events.conf) and of balancers (nginx/connector-balancer.conf.example).
  static constexpr std::chrono::seconds kPingEvery{25};
  // Every round (events_poll_ms) while it does not answer.
  static constexpr std::chrono::seconds kPingWhileUnanswered{0};

  EventPublisher(const config::Config& config, db::CircuitBreakers& breakers,
                 db::RefreshedReference& reference, pool::EventsBoard& board,
                 metrics::EventsCounters& counts);
  ~EventPublisher();
  EventPublisher(const EventPublisher&) = delete;
  EventPublisher& operator=(const EventPublisher&) = delete;

  // Nothing when events_publisher is empty.
  void start();
  // Stops the thread; the holder writes its cursor file and frees the lease.
  void stop();

 private:
  std::chrono::milliseconds round();
  // Returns whether a whole batch was read (more may be waiting).
  bool work();
  void resume();
  void publish_initial_states();
  // One record's current state to its channel, unless the channel holds a message already.
  void publish_initial_state(std::uint64_t history_id);
  bool publish_changes();
  // A change to its record's channel, then to the channels of returning streams and its
  // addresses' (whole_change), or a record's state to its record's channel only (an initial state).
  // False when nchan refused a message of it for good (counted and passed over); throws when
  // one is worth retrying.
  bool publish(const domain::HistoryRecord& record, std::uint64_t seq, bool whole_change);
  // The round's long-poll channels (polls_to_wake_), each once, in requests of at most
  // kChannelListBytes of channel names.
  void wake_polls();
  void ping_streams();
  // Moves EventsBoard::settled_cursor to the cursor of kRecentKeptMs ago.
  void settle_cursor();
  // Writes the cursor file when the cursor moved (each round, and at a clean stop).
  void save_cursor();

  const config::Config& config_;
  db::CircuitBreakers& breakers_;
  db::RefreshedReference& reference_;
  pool::EventsBoard& board_;
  metrics::EventsCounters& counts_;
  const std::int32_t pid_;
  const std::uint32_t generation_;
  std::unique_ptr<db::Connection> db_;  // made and used on the loop's thread only
  std::unique_ptr<NchanClient> nchan_;
  db::FeedOrder order_;
  InitialStateBudget initial_state_budget_;
  unsigned failures_ = 0;
  std::uint64_t saved_cursor_ = 0;
  std::uint64_t record_published_ = 0;  // the change last published to its record's channel
  bool behind_logged_ = false;
  std::vector<std::string> polls_to_wake_;  // this round's, woken at its end
  std::chrono::steady_clock::time_point last_ping_{};
  // The cursor at the end of each recent round (util::monotonic_ms, cursor), oldest first: what
  // settle_cursor() takes EventsBoard::settled_cursor from.
  std::deque<std::pair<std::int64_t, std::uint64_t>> recent_cursors_;
  util::BackgroundLoop loop_;
};

}  // namespace connector::events
