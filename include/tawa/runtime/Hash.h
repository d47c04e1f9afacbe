//===- Hash.h - SHA-256 for cache keys --------------------------*- C++ -*-===//
//
// Cache keys must be stable across runs, machines and compilers, so they use
// a standard cryptographic digest instead of std::hash.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tawa::runtime {

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Feeds the length first so that ("ab","c") and ("a","bc") differ.
  void updateField(std::string_view s);
  std::array<uint8_t, 32> digest();
  std::string hexDigest();

private:
  void compress(const uint8_t *block);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t bufferSize_ = 0;
  uint64_t totalBytes_ = 0;
};

std::string sha256Hex(std::string_view data);

} // namespace tawa::runtime
