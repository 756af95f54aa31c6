#include "api/change_list.h"

namespace connector::api {

void write_change_list(json::JsonWriter& out, std::span<const RenderedChange> changes,
                       std::optional<std::uint64_t> after) {
  out.StartObject();
  json::key(out, "changes");
  out.StartArray();
  for (const auto& change : changes) {
    out.StartObject();
    json::member_as_string(out, "seq", change.seq);
    json::key(out, "record");
    out.raw(change.record_json, rapidjson::kObjectType);
    out.EndObject();
  }
  out.EndArray();
  if (after) json::member_as_string(out, "after", *after);
  out.EndObject();
}

}  // namespace connector::api
