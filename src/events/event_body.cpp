#include "events/event_body.h"

#include <stdexcept>

namespace connector::events {

std::string event_body(std::string_view record_json, std::uint64_t seq) {
  if (record_json.find_first_of("\r\n") != std::string_view::npos) {
    throw std::invalid_argument("an event's JSON must be one line");
  }
  std::string body(record_json);
  body += "\rid: ";
  body += std::to_string(seq);
  return body;
}

}  // namespace connector::events
