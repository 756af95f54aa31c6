#pragma once
// The shape networks, connects and pairs share: {"<key>": [one entry per item]},
// served from the refreshed reference data, rendered once per copy by each thread.
#include <string_view>
#include <vector>

#include "api/endpoints.h"
#include "json/rendered_body.h"

namespace connector::api {

// `Endpoint`: the tag of the endpoint's body (json::ThreadRenderedBody).
template <typename Endpoint, typename Item, typename WriteItem>
Answer write_reference_list(const Services& services, json::JsonWriter& out, std::string_view key,
                            std::vector<Item> domain::ReferenceData::*items, WriteItem write_item) {
  json::ThreadRenderedBody<domain::ReferenceData, Endpoint>::write(
      out, services.reference.get(), [&](json::JsonWriter& w, const domain::ReferenceData& data) {
        w.StartObject();
        json::key(w, key);
        w.StartArray();
        for (const auto& item : data.*items) write_item(w, item, data);
        w.EndArray();
        w.EndObject();
      });
  return Answer::kUsual;
}

}  // namespace connector::api
