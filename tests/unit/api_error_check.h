#pragma once
// Captures what an http::ApiError carried, for table-driven checks of validators.
#include <optional>
#include <string>

#include "http/api_error.h"

struct Thrown {
  int status = 0;
  std::string code;
  std::string param;
  std::string message;
};

// The ApiError f throws, or nullopt when it throws none.
template <typename F>
std::optional<Thrown> api_error_of(F&& f) {
  try {
    f();
  } catch (const connector::http::ApiError& e) {
    return Thrown{e.status(), e.code(), e.param(), e.what()};
  }
  return std::nullopt;
}
