// Prints the endpoint descriptions (api::kEndpoints) as JSON, for the tests that hold them to
// docs/openapi.yaml and nginx's cache rules and that drive every parameter with hostile values:
// {"endpoints": [{"path", "cache_control", "final_cache_control" ("" when none),
//                 "front_cached" (CachePolicy::front_cached: false for a JSON endpoint nginx
//                 must never store; an event path's answers are not stored either way),
//                 "body" ("json", "event_stream" or "long_poll": EndpointSpec::Body),
//                 "params": [{"name", "kind", "schema", "required", "echo",
//                             "absent_means" ("" when none)}]}],
//  "page_size": {"default", "max"}, "statuses": [...],
//  "history_statements": the size of db::all_history_statements(), the fixed set of history
//  statement texts, and "other_statements" the size of db::other_statements(), every other
//  statement a connection can prepare (db/statement_set.h: the tests' and docs' counts of
//  prepared statements derive from both),
//  "history_filters": [{"param", "column", "index", "status_index"}] (db::kHistoryFilters; ""
//  for a filter without an index of that kind)}.
// A parameter's kind is named here for the tests' sample values of each kind
// (tests/integration/fixture.py): a kind added to api::ParamKind does not compile here until it
// has a name, and a test fails while no sample value has it.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "api/params.h"
#include "api/router.h"
#include "db/history_statements.h"
#include "db/statement_set.h"

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
namespace api = connector::api;

void string(Writer& w, std::string_view text) {
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

std::string_view kind_name(api::ParamKind kind) {
  switch (kind) {
    case api::ParamKind::kUint64:
      return "uint64";
    case api::ParamKind::kPageSize:
      return "page_size";
    case api::ParamKind::kAddress:
      return "address";
    case api::ParamKind::kTxHash:
      return "tx_hash";
    case api::ParamKind::kRecordHash:
      return "record_hash";
    case api::ParamKind::kSlug:
      return "slug";
    case api::ParamKind::kHistoryStatus:
      return "history_status";
    case api::ParamKind::kSortOrder:
      return "sort_order";
  }
  std::abort();
}

std::string_view body_name(api::EndpointSpec::Body body) {
  switch (body) {
    case api::EndpointSpec::Body::kJson:
      return "json";
    case api::EndpointSpec::Body::kEventStream:
      return "event_stream";
    case api::EndpointSpec::Body::kLongPoll:
      return "long_poll";
  }
  return "";
}

void write_param(Writer& w, const api::ParamSpec& p) {
  w.StartObject();
  w.Key("name");
  string(w, p.name);
  w.Key("kind");
  string(w, kind_name(p.kind));
  w.Key("schema");
  string(w, api::openapi_schema(p.kind));
  w.Key("required");
  w.Bool(p.required);
  w.Key("echo");
  string(w, p.echo);
  w.Key("absent_means");
  string(w, p.absent_means);
  w.EndObject();
}

}  // namespace

int main() {
  rapidjson::StringBuffer out;
  Writer w(out);
  w.StartObject();
  w.Key("endpoints");
  w.StartArray();
  for (const auto* e : api::kEndpoints) {
    w.StartObject();
    w.Key("path");
    string(w, e->path);
    w.Key("cache_control");
    string(w, e->cache.cache_control);
    w.Key("final_cache_control");
    string(w, e->cache.final_cache_control);
    w.Key("front_cached");
    w.Bool(e->cache.front_cached);
    w.Key("body");
    string(w, body_name(e->body));
    w.Key("params");
    w.StartArray();
    for (const auto& p : e->params) write_param(w, p);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("page_size");
  w.StartObject();
  w.Key("default");
  w.Uint(api::kDefaultPageSize);
  w.Key("max");
  w.Uint(api::kMaxPageSize);
  w.EndObject();
  w.Key("statuses");
  w.StartArray();
  for (const auto status : connector::domain::kHistoryStatuses) string(w, status);
  w.EndArray();
  w.Key("history_statements");
  w.Uint64(connector::db::all_history_statements().size());
  w.Key("other_statements");
  w.Uint64(connector::db::other_statements().size());
  w.Key("history_filters");
  w.StartArray();
  for (const auto& f : connector::db::kHistoryFilters) {
    w.StartObject();
    w.Key("param");
    string(w, f.param);
    w.Key("column");
    string(w, f.column);
    w.Key("index");
    string(w, f.index);
    w.Key("status_index");
    string(w, f.status_index);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::puts(out.GetString());
}
