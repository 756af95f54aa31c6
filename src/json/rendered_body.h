#pragma once
// A JSON body rendered from a refreshed copy (db/refreshed.h) once by each thread, then copied
// into every answer while that copy is current: copies change at most once per refresh interval,
// while rendering (amounts formatted from base units) costs more than the copy. The one place
// that keeps such renderings: endpoints name their body here rather than keep a cache of
// their own.
#include <rapidjson/stringbuffer.h>

#include <memory>

#include "json/json_writer.h"

namespace connector::json {

// One endpoint's body, per thread: `Endpoint` is a tag type naming the endpoint (two endpoints
// of one source type keep two bodies). Each thread has its own rendering (thread_local), so
// threads never share or lock it; it lives as long as the thread.
template <typename Source, typename Endpoint>
class ThreadRenderedBody {
 public:
  ThreadRenderedBody() = delete;

  // Writes render(writer, *source) into out, rendering only when the source changed since
  // this thread last rendered it.
  template <typename Render>
  static void write(JsonWriter& out, std::shared_ptr<const Source> source, Render render) {
    Rendered& rendered = mine();
    if (rendered.source != source) {
      rendered.body.Clear();
      JsonWriter w(rendered.body);
      render(w, *source);
      rendered.source = std::move(source);
    }
    out.RawValue(rendered.body.GetString(), rendered.body.GetSize(), rapidjson::kObjectType);
  }

 private:
  struct Rendered {
    std::shared_ptr<const Source> source;  // what body was rendered from
    rapidjson::StringBuffer body;
  };

  static Rendered& mine() {
    thread_local Rendered rendered;
    return rendered;
  }
};

}  // namespace connector::json
