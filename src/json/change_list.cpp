#include "json/change_list.h"

namespace connector::json {

void write_change_list(JsonWriter& out, std::span<const RenderedChange> changes,
                       std::optional<std::uint64_t> after) {
  out.StartObject();
  key(out, "changes");
  out.StartArray();
  for (const auto& change : changes) {
    out.StartObject();
    member_as_string(out, "seq", change.seq);
    key(out, "record");
    out.raw(change.record_json, rapidjson::kObjectType);
    out.EndObject();
  }
  out.EndArray();
  if (after) member_as_string(out, "after", *after);
  out.EndObject();
}

}  // namespace connector::json
