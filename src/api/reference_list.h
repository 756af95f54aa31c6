#pragma once
// The shape networks, connects and pairs share: {"<key>": [one entry per snapshot item]},
// served from the in-memory reference snapshot.
#include <string_view>
#include <vector>

#include "api/endpoints.h"

namespace connector::api {

template <typename Item, typename WriteItem>
std::string_view write_reference_list(Services& services, json::JsonWriter& out,
                                      std::string_view key,
                                      std::vector<Item> domain::ReferenceData::*items,
                                      WriteItem write_item) {
  const auto data = services.reference.get(services.db);
  out.StartObject();
  json::key(out, key);
  out.StartArray();
  for (const auto& item : (*data).*items) write_item(out, item, *data);
  out.EndArray();
  out.EndObject();
  return kReferenceCacheControl;
}

}  // namespace connector::api
