//===- Json.cpp - A small strict JSON reader
//-------------------------------===//

#include "tawa/runtime/Json.h"
#include "tawa/runtime/Error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace tawa::runtime {

JsonValue JsonValue::makeBool(bool b) {
  JsonValue v;
  v.kind_ = Kind::Bool;
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::makeNumber(double d, bool isInteger, int64_t integer) {
  JsonValue v;
  v.kind_ = Kind::Number;
  v.number_ = d;
  v.isInteger_ = isInteger;
  v.integer_ = integer;
  return v;
}

JsonValue JsonValue::makeString(std::string s) {
  JsonValue v;
  v.kind_ = Kind::String;
  v.string_ = std::move(s);
  return v;
}

JsonValue JsonValue::makeArray(std::vector<JsonValue> elements) {
  JsonValue v;
  v.kind_ = Kind::Array;
  v.array_ = std::move(elements);
  return v;
}

JsonValue
JsonValue::makeObject(std::vector<std::pair<std::string, JsonValue>> m) {
  JsonValue v;
  v.kind_ = Kind::Object;
  v.object_ = std::move(m);
  return v;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const auto &[k, value] : object_)
    if (k == key)
      return &value;
  return nullptr;
}

const char *JsonValue::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "?";
}

namespace {

class Parser {
public:
  Parser(std::string_view text, const std::string &sourceName)
      : text_(text), source_(sourceName) {}

  JsonValue parseDocument() {
    skipSpace();
    JsonValue v = parseValue(0);
    skipSpace();
    if (pos_ != text_.size())
      fail("unexpected trailing characters after the JSON value");
    return v;
  }

private:
  // Metadata nests three levels deep; the limit only guards the recursion
  // against hostile or corrupted input.
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void fail(const std::string &what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw Error(source_ + ":" + std::to_string(line) + ":" +
                std::to_string(column) + ": " + what);
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      ++pos_;
    // Hand-edited metadata often picks up the // comments of the docs; say
    // so instead of reporting an unexpected '/'.
    if (peek() == '/' && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == '/' || text_[pos_ + 1] == '*'))
      fail("comments are not allowed in JSON");
  }

  void expect(char c) {
    if (peek() != c)
      fail(std::string("expected '") + c + "'" + foundText());
    ++pos_;
  }

  std::string foundText() const {
    if (atEnd())
      return " but reached the end of the input";
    char c = peek();
    if (static_cast<unsigned char>(c) < 0x20)
      return " but found control character " +
             std::to_string(static_cast<int>(c));
    return std::string(" but found '") + c + "'";
  }

  JsonValue parseValue(int depth) {
    if (depth > kMaxDepth)
      fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    char c = peek();
    switch (c) {
    case '{':
      return parseObject(depth);
    case '[':
      return parseArray(depth);
    case '"':
      return JsonValue::makeString(parseString());
    case 't':
      parseLiteral("true");
      return JsonValue::makeBool(true);
    case 'f':
      parseLiteral("false");
      return JsonValue::makeBool(false);
    case 'n':
      parseLiteral("null");
      return JsonValue();
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber();
      if (c == '/')
        fail("comments are not allowed in JSON");
      fail("expected a JSON value" + foundText());
    }
  }

  void parseLiteral(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text_.substr(pos_, n) != word)
      fail(std::string("invalid literal, expected '") + word + "'");
    pos_ += n;
  }

  JsonValue parseObject(int depth) {
    expect('{');
    std::vector<std::pair<std::string, JsonValue>> members;
    skipSpace();
    if (peek() == '}') {
      ++pos_;
      return JsonValue::makeObject(std::move(members));
    }
    while (true) {
      skipSpace();
      if (peek() != '"')
        fail("expected a string key" + foundText());
      size_t keyPos = pos_;
      std::string key = parseString();
      for (const auto &member : members) {
        if (member.first == key) {
          pos_ = keyPos;
          fail("duplicate key \"" + key + "\"");
        }
      }
      skipSpace();
      expect(':');
      skipSpace();
      JsonValue value = parseValue(depth + 1);
      members.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        skipSpace();
        if (peek() == '}')
          fail("trailing comma in object");
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return JsonValue::makeObject(std::move(members));
      }
      fail("expected ',' or '}' in object" + foundText());
    }
  }

  JsonValue parseArray(int depth) {
    expect('[');
    std::vector<JsonValue> elements;
    skipSpace();
    if (peek() == ']') {
      ++pos_;
      return JsonValue::makeArray(std::move(elements));
    }
    while (true) {
      skipSpace();
      elements.push_back(parseValue(depth + 1));
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        skipSpace();
        if (peek() == ']')
          fail("trailing comma in array");
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return JsonValue::makeArray(std::move(elements));
      }
      fail("expected ',' or ']' in array" + foundText());
    }
  }

  unsigned parseHex4() {
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      unsigned digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else
        fail("invalid \\u escape: expected 4 hex digits");
      value = value * 16 + digit;
      ++pos_;
    }
    return value;
  }

  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string parseString() {
    expect('"');
    std::string out;
    while (true) {
      if (atEnd())
        fail("unterminated string");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        fail("unescaped control character in string");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      char e = peek();
      ++pos_;
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned cp = parseHex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (peek() != '\\' || text_.substr(pos_, 2) != "\\u")
            fail("unpaired UTF-16 high surrogate in \\u escape");
          pos_ += 2;
          unsigned low = parseHex4();
          if (low < 0xDC00 || low > 0xDFFF)
            fail("invalid UTF-16 low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail("unpaired UTF-16 low surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos_;
        fail("invalid escape sequence in string");
      }
    }
  }

  JsonValue parseNumber() {
    size_t start = pos_;
    bool integral = true;
    if (peek() == '-')
      ++pos_;
    if (peek() == '0') {
      ++pos_;
      if (peek() >= '0' && peek() <= '9')
        fail("leading zeros are not allowed in numbers");
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9')
        ++pos_;
    } else {
      fail("invalid number");
    }
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9'))
        fail("expected a digit after the decimal point");
      while (peek() >= '0' && peek() <= '9')
        ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-')
        ++pos_;
      if (!(peek() >= '0' && peek() <= '9'))
        fail("expected a digit in the exponent");
      while (peek() >= '0' && peek() <= '9')
        ++pos_;
    }
    std::string literal(text_.substr(start, pos_ - start));
    double d = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(d)) {
      pos_ = start;
      fail("number out of range: " + literal);
    }
    int64_t integer = 0;
    if (integral) {
      errno = 0;
      long long parsed = std::strtoll(literal.c_str(), nullptr, 10);
      if (errno == ERANGE)
        integral = false; // kept as a double; integer accessors reject it
      else
        integer = parsed;
    }
    return JsonValue::makeNumber(d, integral, integer);
  }

  std::string_view text_;
  const std::string &source_;
  size_t pos_ = 0;
};

} // namespace

JsonValue parseJson(std::string_view text, const std::string &sourceName) {
  return Parser(text, sourceName).parseDocument();
}

} // namespace tawa::runtime
