#pragma once
// The shape networks, connects and pairs share: {"<key>": [one entry per snapshot item]},
// served from the in-memory reference snapshot, rendered once per snapshot by each thread.
#include <string_view>
#include <vector>

#include "api/endpoints.h"
#include "json/rendered_body.h"

namespace connector::api {

using RenderedList = json::RenderedBody<domain::ReferenceData>;

template <typename Item, typename WriteItem>
Answer write_reference_list(Services& services, json::JsonWriter& out, RenderedList& rendered,
                            std::string_view key, std::vector<Item> domain::ReferenceData::*items,
                            WriteItem write_item) {
  json::write_rendered(out, rendered, services.reference.get(),
                       [&](json::JsonWriter& w, const domain::ReferenceData& data) {
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
