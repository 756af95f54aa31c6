#pragma once
// The shape networks, connects and pairs share: {"<key>": [one entry per snapshot item]},
// served from the in-memory reference snapshot. Each thread renders a list once per snapshot
// and then copies those bytes into every answer: the snapshot changes at most once per
// reference_refresh_ms, while rendering (pairs format a dozen amounts) costs more than the copy.
#include <rapidjson/stringbuffer.h>

#include <memory>
#include <string_view>
#include <vector>

#include "api/endpoints.h"

namespace connector::api {

// One thread's rendering of one list, and the snapshot it was rendered from. Each endpoint
// keeps its own (thread_local), so threads never share or lock it.
struct RenderedList {
  std::shared_ptr<const domain::ReferenceData> source;
  rapidjson::StringBuffer body;
};

template <typename Item, typename WriteItem>
std::string_view write_reference_list(Services& services, json::JsonWriter& out,
                                      RenderedList& rendered, std::string_view key,
                                      std::vector<Item> domain::ReferenceData::*items,
                                      WriteItem write_item) {
  auto data = services.reference.get(services.db);
  if (rendered.source != data) {
    rendered.body.Clear();
    json::JsonWriter w(rendered.body);
    w.StartObject();
    json::key(w, key);
    w.StartArray();
    for (const auto& item : (*data).*items) write_item(w, item, *data);
    w.EndArray();
    w.EndObject();
    rendered.source = std::move(data);
  }
  out.RawValue(rendered.body.GetString(), rendered.body.GetSize(), rapidjson::kObjectType);
  return kReferenceCacheControl;
}

}  // namespace connector::api
