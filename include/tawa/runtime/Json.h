//===- Json.h - A small strict JSON reader ----------------------*- C++ -*-===//
//
// Metadata files are tiny and written by tools, so a strict RFC 8259 reader
// (no comments, no trailing commas, no duplicate keys) is enough and keeps the
// runtime free of third-party dependencies. Errors carry line and column.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tawa::runtime {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  JsonValue() = default;
  static JsonValue makeBool(bool b);
  static JsonValue makeNumber(double d, bool isInteger, int64_t integer);
  static JsonValue makeString(std::string s);
  static JsonValue makeArray(std::vector<JsonValue> elements);
  /// Members keep their file order; lookups are linear, which is fine for the
  /// handful of keys a metadata object has.
  static JsonValue makeObject(std::vector<std::pair<std::string, JsonValue>> m);

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isNumber() const { return kind_ == Kind::Number; }
  /// True for numbers written without fraction or exponent that fit int64.
  bool isInteger() const { return kind_ == Kind::Number && isInteger_; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }

  bool asBool() const { return bool_; }
  double asDouble() const { return number_; }
  int64_t asInt() const { return integer_; }
  const std::string &asString() const { return string_; }
  const std::vector<JsonValue> &asArray() const { return array_; }
  const std::vector<std::pair<std::string, JsonValue>> &asObject() const {
    return object_;
  }
  /// Member lookup; nullptr when absent or when this is not an object.
  const JsonValue *find(std::string_view key) const;

  static const char *kindName(Kind kind);

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  bool isInteger_ = false;
  double number_ = 0;
  int64_t integer_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> object_;
};

/// Parses one JSON document. Throws tawa::runtime::Error with
/// "<sourceName>:<line>:<column>: <what>" on malformed input.
JsonValue parseJson(std::string_view text,
                    const std::string &sourceName = "<json>");

} // namespace tawa::runtime
