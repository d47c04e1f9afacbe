//===- ModelConfig.cpp - decoder LLM shapes from a config.json ------------===//
//
// A small JSON reader, enough for Hugging Face configs: objects, arrays,
// strings, numbers, booleans and null. Only top-level scalar fields are kept.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/ModelConfig.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace tawa::mega {
namespace {

struct JsonScalar {
  enum Kind { Number, String, Bool, Null, Compound } kind = Null;
  double number = 0;
  std::string text;
  bool boolean = false;
};

class JsonReader {
public:
  explicit JsonReader(const std::string &text) : text(text) {}

  /// Parses the document; fills `fields` with the top-level object's scalar
  /// members.
  bool read(std::map<std::string, JsonScalar> &fields) {
    skipSpace();
    if (!expect('{'))
      return false;
    skipSpace();
    if (peek() == '}') {
      ++pos;
      return finish();
    }
    while (true) {
      skipSpace();
      std::string key;
      if (!readString(key))
        return false;
      skipSpace();
      if (!expect(':'))
        return false;
      JsonScalar value;
      if (!readValue(value, /*depth=*/1))
        return false;
      fields[key] = value;
      skipSpace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (!expect('}'))
        return false;
      return finish();
    }
  }

  std::string error;

private:
  const std::string &text;
  size_t pos = 0;

  int line() const {
    int l = 1;
    for (size_t i = 0; i < pos && i < text.size(); ++i)
      l += text[i] == '\n';
    return l;
  }
  bool fail(const std::string &message) {
    if (error.empty())
      error = "line " + std::to_string(line()) + ": " + message;
    return false;
  }
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool expect(char c) {
    skipSpace();
    if (peek() != c)
      return fail(std::string("expected '") + c + "'");
    ++pos;
    return true;
  }
  bool finish() {
    skipSpace();
    if (pos != text.size())
      return fail("trailing text after the top-level object");
    return true;
  }
  bool readString(std::string &out) {
    if (peek() != '"')
      return fail("expected a string");
    ++pos;
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c == '\\') {
        if (pos >= text.size())
          break;
        char esc = text[pos++];
        switch (esc) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          // Config keys and values are ASCII; keep the escape as written.
          out += "\\u";
          break;
        default:
          out += esc;
        }
        continue;
      }
      out += c;
    }
    if (pos >= text.size())
      return fail("unterminated string");
    ++pos;
    return true;
  }
  bool readValue(JsonScalar &value, int depth) {
    if (depth > 64)
      return fail("nesting too deep");
    skipSpace();
    char c = peek();
    if (c == '"') {
      value.kind = JsonScalar::String;
      return readString(value.text);
    }
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++pos;
      value.kind = JsonScalar::Compound;
      skipSpace();
      if (peek() == close) {
        ++pos;
        return true;
      }
      while (true) {
        if (c == '{') {
          skipSpace();
          std::string key;
          if (!readString(key) || !expect(':'))
            return false;
        }
        JsonScalar inner;
        if (!readValue(inner, depth + 1))
          return false;
        skipSpace();
        if (peek() == ',') {
          ++pos;
          continue;
        }
        return expect(close);
      }
    }
    for (const char *word : {"true", "false", "null"}) {
      size_t n = std::char_traits<char>::length(word);
      if (text.compare(pos, n, word) == 0) {
        pos += n;
        value.kind = word[0] == 'n' ? JsonScalar::Null : JsonScalar::Bool;
        value.boolean = word[0] == 't';
        return true;
      }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const char *begin = text.c_str() + pos;
      char *end = nullptr;
      value.number = std::strtod(begin, &end);
      if (end == begin)
        return fail("bad number");
      pos += static_cast<size_t>(end - begin);
      value.kind = JsonScalar::Number;
      return true;
    }
    return fail("expected a value");
  }
};

} // namespace

bool parseModelConfig(const std::string &jsonText, const std::string &source,
                      ModelConfig &config, std::string &error) {
  std::map<std::string, JsonScalar> fields;
  JsonReader reader(jsonText);
  if (!reader.read(fields)) {
    error = source + ": " + reader.error;
    return false;
  }
  auto getInt = [&](const char *key, int64_t &out, bool required) {
    auto it = fields.find(key);
    if (it == fields.end() || it->second.kind == JsonScalar::Null) {
      if (required)
        error = source + ": missing '" + key + "'";
      return !required;
    }
    double v = it->second.number;
    if (it->second.kind != JsonScalar::Number || v != std::floor(v) || v < 1 ||
        v > 1e12) {
      error = source + ": '" + key + "' must be a positive integer";
      return false;
    }
    out = static_cast<int64_t>(v);
    return true;
  };
  auto getDouble = [&](const char *key, double &out) {
    auto it = fields.find(key);
    if (it == fields.end() || it->second.kind == JsonScalar::Null)
      return true;
    if (it->second.kind != JsonScalar::Number || !(it->second.number > 0)) {
      error = source + ": '" + key + "' must be a positive number";
      return false;
    }
    out = it->second.number;
    return true;
  };

  auto type = fields.find("model_type");
  if (type == fields.end() || type->second.kind != JsonScalar::String) {
    error = source + ": missing 'model_type' (supported: qwen3, llama)";
    return false;
  }
  config.modelType = type->second.text;
  if (config.modelType != "qwen3" && config.modelType != "llama") {
    error = source + ": unsupported model_type '" + config.modelType +
            "' (supported: qwen3, llama)";
    return false;
  }
  config.qkNorm = config.modelType == "qwen3";
  if (!getInt("hidden_size", config.hiddenSize, true) ||
      !getInt("num_hidden_layers", config.numLayers, true) ||
      !getInt("num_attention_heads", config.numHeads, true) ||
      !getInt("intermediate_size", config.intermediateSize, true) ||
      !getInt("vocab_size", config.vocabSize, true))
    return false;
  config.numKvHeads = config.numHeads;
  config.headDim = 0;
  if (!getInt("num_key_value_heads", config.numKvHeads, false) ||
      !getInt("head_dim", config.headDim, false) ||
      !getDouble("rope_theta", config.ropeTheta) ||
      !getDouble("rms_norm_eps", config.rmsNormEps))
    return false;
  if (config.headDim == 0) {
    if (config.hiddenSize % config.numHeads != 0) {
      error = source + ": no 'head_dim', and hidden_size " +
              std::to_string(config.hiddenSize) +
              " is not a multiple of num_attention_heads " +
              std::to_string(config.numHeads);
      return false;
    }
    config.headDim = config.hiddenSize / config.numHeads;
  }
  if (config.numHeads % config.numKvHeads != 0) {
    error = source + ": num_attention_heads " +
            std::to_string(config.numHeads) +
            " is not a multiple of num_key_value_heads " +
            std::to_string(config.numKvHeads);
    return false;
  }
  auto tie = fields.find("tie_word_embeddings");
  config.tieWordEmbeddings = false;
  if (tie != fields.end() && tie->second.kind != JsonScalar::Null) {
    if (tie->second.kind != JsonScalar::Bool) {
      error = source + ": 'tie_word_embeddings' must be true or false";
      return false;
    }
    config.tieWordEmbeddings = tie->second.boolean;
  }
  return true;
}

bool loadModelConfig(const std::string &path, ModelConfig &config,
                     std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open the model config";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parseModelConfig(buffer.str(), path, config, error);
}

} // namespace tawa::mega
