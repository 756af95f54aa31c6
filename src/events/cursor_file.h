#pragma once
// The publisher's position in the change feed, kept in a file (events_cursor_file) so that a
// restart of the whole service resumes where it stopped: one decimal number and a newline,
// replaced whole (written beside under the process's own name, synced, then renamed over).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace connector::events {

// The file's text read as a position: one decimal number of at most 20 digits that fits 64 bits,
// then at most one newline; none for anything else (tests/fuzz/fuzz_events_replies.cpp).
std::optional<std::uint64_t> parse_cursor_text(std::string_view text);

// The position kept in the file; none when the file does not exist. Throws std::runtime_error
// when it cannot be read or holds anything else.
std::optional<std::uint64_t> read_cursor_file(const std::string& path);
// Throws std::runtime_error when the file cannot be written.
void write_cursor_file(const std::string& path, std::uint64_t seq);

}  // namespace connector::events
