#include "metrics/events_exposition.h"

#include "metrics/prometheus_text.h"

namespace connector::metrics {

using prometheus_text::single;

void write_events_metrics(const pool::EventsBoard& e, const EventsCounters& c,
                          rapidjson::StringBuffer& out) {
  single(out, "connector_events_changes_published_total", "counter",
         "Changes of history published to the event channels.", c.changes_published.load());
  // "snapshot" in these series' names, their HELP text and /status's snapshots_published: the
  // initial states' name when they were made, kept as the monitoring's contract.
  single(out, "connector_events_snapshots_published_total", "counter",
         "Records' current states published for a new subscriber.",
         c.initial_states_published.load());
  single(out, "connector_events_publish_failures_total", "counter",
         "Publisher rounds that failed (database or nchan); the next retries.",
         c.publish_failures.load());
  single(out, "connector_events_changes_passed_over_total", "counter",
         "Feed positions passed over unpublished: holes that did not fill in time, or trimmed.",
         c.changes_passed_over.load());
  single(out, "connector_events_changes_unpublishable_total", "counter",
         "Changes passed over because their record's hash or an address names no channel.",
         c.changes_unpublishable.load());
  single(out, "connector_events_publishes_refused_total", "counter",
         "Messages nchan refused for good (507: its shared memory full), passed over.",
         c.publishes_refused.load());
  single(out, "connector_events_snapshot_requests_dropped_total", "counter",
         "Snapshot requests dropped: every slot taken, or past the publisher's budget per second.",
         e.initial_state_requests_dropped.load());
  single(out, "connector_events_cursor", "gauge", "The last change (feed seq) published.",
         e.cursor.load());
  single(out, "connector_events_nginx_answers", "gauge",
         "1 when the events nginx answered the publisher's last request; 0: no subscriber is "
         "handed over.",
         std::uint64_t{e.events_nginx_answers.load() ? 1u : 0u});
}

void write_events_status(const pool::EventsBoard& e, const EventsCounters& c,
                         rapidjson::Writer<rapidjson::StringBuffer>& w) {
  w.StartObject();
  w.Key("publisher_pid");
  w.Int(e.publisher.pid.load());
  w.Key("cursor");
  if (e.cursor_known.load()) {
    w.Uint64(e.cursor.load());
  } else {
    w.Null();
  }
  w.Key("last_round_unix_ms");
  w.Int64(c.last_round_unix_ms.load());
  w.Key("changes_published");
  w.Uint64(c.changes_published.load());
  w.Key("snapshots_published");
  w.Uint64(c.initial_states_published.load());
  w.Key("publish_failures");
  w.Uint64(c.publish_failures.load());
  w.Key("changes_passed_over");
  w.Uint64(c.changes_passed_over.load());
  w.Key("changes_unpublishable");
  w.Uint64(c.changes_unpublishable.load());
  w.Key("publishes_refused");
  w.Uint64(c.publishes_refused.load());
  w.Key("settled_cursor");
  w.Uint64(e.settled_cursor.load());
  w.Key("events_nginx_answers");
  w.Bool(e.events_nginx_answers.load());
  w.EndObject();
}

}  // namespace connector::metrics
