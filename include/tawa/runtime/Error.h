//===- Error.h - Runtime error type -----------------------------*- C++ -*-===//
//
// Every failure in the runtime surfaces as one exception type whose message
// names the operation that failed and its context, so that the C API can hand
// the same text to Python unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>

namespace tawa::runtime {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace tawa::runtime
