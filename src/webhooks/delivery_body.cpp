#include "webhooks/delivery_body.h"

#include <cctype>

#include "json/history_writer.h"
#include "json/json_writer.h"

namespace connector::webhooks {

std::string event_type(domain::HistoryStatus status) {
  std::string type = "transfer.";
  for (const char c : domain::status_name(status)) {
    type += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return type;
}

std::string event_id(std::uint64_t subscription, std::uint64_t seq) {
  return std::to_string(subscription) + "-" + std::to_string(seq);
}

std::string delivery_body(const domain::HistoryRecord& record, std::uint64_t seq,
                          std::uint64_t subscription, std::uint32_t attempt,
                          const domain::ReferenceData& reference) {
  rapidjson::StringBuffer buffer;
  json::JsonWriter w(buffer);
  w.StartObject();
  w.Key("event");
  json::string(w, event_type(record.status));
  w.Key("seq");
  w.Uint64(seq);
  w.Key("subscription");
  w.Uint64(subscription);
  w.Key("attempt");
  w.Uint(attempt);
  w.Key("record");
  json::write_record_answer(w, record, reference);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace connector::webhooks
