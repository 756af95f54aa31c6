#pragma once
// The body of a long-poll answer (/v1/history/hash/changes, /v1/history/changes):
// {"changes":[{"seq":"<seq>","record":<the record as /v1/history/hash answers it>}, ...]}.
// The worker writes it for the changes it answers from the feed, and the event publisher for
// the one change it sends the long-poll channels (events/publisher.h): one writer, so both are
// the same bytes.
#include <cstdint>
#include <span>
#include <string_view>

#include "json/json_writer.h"

namespace connector::api {

struct RenderedChange {
  std::uint64_t seq = 0;
  std::string_view record_json;  // write_record_answer's bytes
};

void write_change_list(json::JsonWriter& out, std::span<const RenderedChange> changes);

}  // namespace connector::api
