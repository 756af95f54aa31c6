#include "http/server_sent_event.h"

#include <stdexcept>

namespace connector::http {

std::string server_sent_event(std::string_view record_json, std::uint64_t seq) {
  if (record_json.find_first_of("\r\n") != std::string_view::npos) {
    throw std::invalid_argument("an event's JSON must be one line");
  }
  std::string body = "id: ";
  body += std::to_string(seq);
  body += "\ndata: ";
  body += record_json;
  body += '\n';
  return body;
}

}  // namespace connector::http
