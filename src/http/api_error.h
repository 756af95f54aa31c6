#pragma once
// An error answer as a value: HTTP status, snake_case code, a sentence for a person and the
// parameter at fault. Validators throw it; the router turns it into the one error body shape.
#include <stdexcept>
#include <string>

namespace connector::http {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string code, const std::string& message, std::string param = {})
      : std::runtime_error(message),
        status_(status),
        code_(std::move(code)),
        param_(std::move(param)) {}

  int status() const { return status_; }
  const std::string& code() const { return code_; }
  const std::string& param() const { return param_; }  // empty: no single parameter at fault

 private:
  int status_;
  std::string code_;
  std::string param_;
};

inline ApiError invalid_parameter(const std::string& param, const std::string& message) {
  return ApiError(400, "invalid_parameter", message, param);
}
inline ApiError missing_parameter(const std::string& param) {
  return ApiError(400, "missing_parameter", param + " is required", param);
}
inline ApiError duplicate_parameter(const std::string& param) {
  return ApiError(400, "duplicate_parameter", param + " is given more than once", param);
}

}  // namespace connector::http
