#pragma once
// A JSON object appended straight to a std::string: the hot path of history pages, where
// RapidJSON's Writer spent a tenth of the worker's time on its per-character state machine
// (docs/BENCHMARKS.md, profile). The text is byte for byte what the Writer writes, escapes
// included (tests/unit/test_object_text.cpp compares them); the page's Writer takes the
// finished object whole (JsonWriter::raw).
#include <cstdint>
#include <string>
#include <string_view>

namespace connector::json {

// Appends value as a JSON string, escaped as rapidjson::Writer escapes it: '"', '\\' and the
// control characters (\b \t \n \f \r, others \u00XX), nothing else.
void append_string(std::string& out, std::string_view value);

// Keys are written as they are: they must be identifiers with nothing to escape.
class ObjectText {
 public:
  // Starts an object at the end of out.
  explicit ObjectText(std::string& out) : out_(out) { out_ += '{'; }

  void string(std::string_view key, std::string_view value);
  // A string whose text append(out) appends, which must need no escape (digits, say).
  template <typename Append>
  void string_from(std::string_view key, Append&& append) {
    name(key);
    out_ += '"';
    append(out_);
    out_ += '"';
  }
  void number(std::string_view key, std::uint64_t value);
  void number(std::string_view key, std::int64_t value);
  // Integers the contract carries as strings (ids, chain ids).
  void number_as_string(std::string_view key, std::uint64_t value);

  void close() { out_ += '}'; }

 private:
  void name(std::string_view key);
  // Grows out_ by n bytes and returns where they start, for the caller to fill. It may move
  // out_'s bytes: what is copied in must not point into out_.
  char* extend(std::size_t n);

  std::string& out_;
  bool first_ = true;
};

}  // namespace connector::json
