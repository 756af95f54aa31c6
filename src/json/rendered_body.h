#pragma once
// A JSON body rendered from a shared snapshot once by each thread, then copied into every
// answer while that snapshot is current: snapshots change at most once per refresh interval,
// while rendering (amounts formatted from base units) costs more than the copy.
#include <rapidjson/stringbuffer.h>

#include <memory>

#include "json/json_writer.h"

namespace connector::json {

// One thread's rendering and the snapshot it came from. Each endpoint keeps its own
// (thread_local), so threads never share or lock it.
template <typename Snapshot>
struct RenderedBody {
  std::shared_ptr<const Snapshot> source;
  rapidjson::StringBuffer body;
};

// Writes render(writer, *snapshot) into out, rendering only when the snapshot changed.
template <typename Snapshot, typename Render>
void write_rendered(JsonWriter& out, RenderedBody<Snapshot>& rendered,
                    std::shared_ptr<const Snapshot> snapshot, Render render) {
  if (rendered.source != snapshot) {
    rendered.body.Clear();
    JsonWriter w(rendered.body);
    render(w, *snapshot);
    rendered.source = std::move(snapshot);
  }
  out.RawValue(rendered.body.GetString(), rendered.body.GetSize(), rapidjson::kObjectType);
}

}  // namespace connector::json
