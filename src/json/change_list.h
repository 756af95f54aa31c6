#pragma once
// The body of a long-poll answer (/v1/history/hash/changes, /v1/history/changes):
// {"changes":[{"seq":"<seq>","record":<the record as /v1/history/hash answers it>}, ...],
//  "after":"<seq>"}, written by the worker from the change feed.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "json/json_writer.h"

namespace connector::json {

struct RenderedChange {
  std::uint64_t seq = 0;
  std::string_view record_json;  // write_record_answer's bytes (history_writer.h)
};

// `after`: where the client polls from next (the last change's seq, or, with none, how far
// this node has published).
void write_change_list(JsonWriter& out, std::span<const RenderedChange> changes,
                       std::optional<std::uint64_t> after);

// What nginx answers a poll with when its channel has a change (the publisher's message on the
// long-poll channels) or none came within its time: no change here, ask again from where you
// are, and the worker answers from the feed.
inline constexpr std::string_view kNoChanges = R"({"changes":[]})";

}  // namespace connector::json
