#pragma once
// JSON shapes of the reference resources: Blockchain, Asset, Connect, Pair.
#include "domain/reference_data.h"
#include "json/json_writer.h"

namespace connector::json {

// The four Blockchain members (network, chain_id, base_chain, slug), inside an open object.
void write_chain_members(JsonWriter& w, const domain::Chain& chain);
void write_chain(JsonWriter& w, const domain::Chain& chain);
void write_connect(JsonWriter& w, const domain::Connect& connect,
                   const domain::ReferenceData& data);
void write_pair(JsonWriter& w, const domain::Pair& pair, const domain::ReferenceData& data);

}  // namespace connector::json
