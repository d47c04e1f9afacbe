//===- TextParser.cpp - parse a tGraph from its text form -----------------===//
//
// A line-oriented recursive-descent parser. It checks syntax, resolves tensor
// names and requires ids in order (task 0, 1, 2, ... in the order written);
// every other invariant (dangling event ids, counts, cycles, the form's rules)
// is the verifier's, so a graph built in memory is checked the same way.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/TextFormat.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>

namespace tawa::mega {
namespace {

enum class Tok { Ident, Number, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  size_t column = 0;
};

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-';
}

class LineParser {
public:
  LineParser(const std::string &line, int lineNo, const std::string &source)
      : lineNo(lineNo), source(source) {
    tokenize(line);
  }

  std::string error;

  bool ok() const { return error.empty(); }
  bool atEnd() const { return toks[pos].kind == Tok::End; }
  const Token &peek() const { return toks[pos]; }

  bool fail(const std::string &message) {
    if (error.empty())
      error = source + ": line " + std::to_string(lineNo) + ": " + message;
    return false;
  }

  bool ident(std::string &out, const char *what) {
    if (peek().kind != Tok::Ident)
      return fail(std::string("expected ") + what + describeNext());
    out = toks[pos++].text;
    return true;
  }
  bool punct(char c) {
    if (peek().kind != Tok::Punct || peek().text[0] != c)
      return fail(std::string("expected '") + c + "'" + describeNext());
    ++pos;
    return true;
  }
  bool tryPunct(char c) {
    if (peek().kind == Tok::Punct && peek().text[0] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool integer(int64_t &out, const char *what) {
    if (peek().kind != Tok::Number)
      return fail(std::string("expected ") + what + describeNext());
    const std::string &text = peek().text;
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno || *end != '\0')
      return fail(std::string("expected an integer for ") + what + ", got '" +
                  text + "'");
    out = v;
    ++pos;
    return true;
  }
  bool integer32(int &out, const char *what) {
    int64_t v = 0;
    if (!integer(v, what))
      return false;
    if (v < -(int64_t(1) << 30) || v > (int64_t(1) << 30))
      return fail(std::string(what) + " out of range: " + std::to_string(v));
    out = static_cast<int>(v);
    return true;
  }
  bool number(std::string &out, const char *what) {
    if (peek().kind != Tok::Number)
      return fail(std::string("expected a number for ") + what +
                  describeNext());
    const std::string &text = peek().text;
    char *end = nullptr;
    std::strtod(text.c_str(), &end);
    if (*end != '\0')
      return fail("malformed number '" + text + "'");
    out = text;
    ++pos;
    return true;
  }
  /// '[' INT (',' INT)* ']' or '[]'.
  bool intList(std::vector<int> &out, const char *what) {
    if (!punct('['))
      return false;
    if (tryPunct(']'))
      return true;
    do {
      int v = 0;
      if (!integer32(v, what))
        return false;
      out.push_back(v);
    } while (tryPunct(','));
    return punct(']');
  }
  /// key=value: reads the key and '=' and rejects a repeated key.
  bool key(std::string &out, std::set<std::string> &seen) {
    if (!ident(out, "a key"))
      return false;
    if (!seen.insert(out).second)
      return fail("'" + out + "' given twice");
    return punct('=');
  }

private:
  std::vector<Token> toks;
  size_t pos = 0;
  int lineNo;
  const std::string &source;

  std::string describeNext() const {
    const Token &t = peek();
    if (t.kind == Tok::End)
      return ", got the end of the line";
    return ", got '" + t.text + "'";
  }

  void tokenize(const std::string &line) {
    size_t i = 0;
    while (i < line.size()) {
      char c = line[i];
      if (c == '#')
        break;
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
        continue;
      }
      Token t;
      t.column = i + 1;
      if (isIdentStart(c)) {
        size_t j = i;
        while (j < line.size() && isIdentChar(line[j]))
          ++j;
        t.kind = Tok::Ident;
        t.text = line.substr(i, j - i);
        i = j;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '-' && i + 1 < line.size() &&
                  std::isdigit(static_cast<unsigned char>(line[i + 1])))) {
        size_t j = i + 1;
        while (j < line.size() &&
               (std::isalnum(static_cast<unsigned char>(line[j])) ||
                line[j] == '.' ||
                ((line[j] == '-' || line[j] == '+') &&
                 (line[j - 1] == 'e' || line[j - 1] == 'E'))))
          ++j;
        t.kind = Tok::Number;
        t.text = line.substr(i, j - i);
        i = j;
      } else {
        t.kind = Tok::Punct;
        t.text = std::string(1, c);
        ++i;
      }
      toks.push_back(std::move(t));
    }
    toks.push_back(Token{});
  }
};

bool parseRole(const std::string &name, TensorRole &role) {
  if (name == "input")
    role = TensorRole::Input;
  else if (name == "activation")
    role = TensorRole::Activation;
  else if (name == "state")
    role = TensorRole::State;
  else
    return false;
  return true;
}

class GraphParser {
public:
  GraphParser(const std::string &source, TGraph &g) : source(source), g(g) {}

  bool parseLine(LineParser &p, int lineNo) {
    std::string keyword;
    if (!p.ident(keyword, "a keyword (tgraph, tensor, op, task, event)"))
      return false;
    if (keyword == "tgraph")
      return parseHeader(p, lineNo);
    if (!sawHeader)
      return p.fail("expected the 'tgraph' line before '" + keyword + "'");
    if (keyword == "tensor")
      return parseTensor(p, lineNo);
    if (keyword == "op")
      return parseOp(p, lineNo);
    if (keyword == "task")
      return parseTask(p, lineNo);
    if (keyword == "event")
      return parseEvent(p, lineNo);
    return p.fail("unknown keyword '" + keyword +
                  "' (expected tgraph, tensor, op, task or event)");
  }

  bool finish(std::string &error) {
    if (!sawHeader) {
      error = source + ": no 'tgraph' line: not a tawa-mega graph";
      return false;
    }
    return true;
  }

private:
  const std::string &source;
  TGraph &g;
  bool sawHeader = false;

  bool checkId(LineParser &p, const char *what, size_t expected) {
    int64_t id = 0;
    if (!p.integer(id, (std::string(what) + " id").c_str()))
      return false;
    if (id != static_cast<int64_t>(expected))
      return p.fail(std::string(what) + " " + std::to_string(id) +
                    " out of order: ids count up from 0 in the order "
                    "written, expected " +
                    what + " " + std::to_string(expected));
    return true;
  }

  bool parseHeader(LineParser &p, int lineNo) {
    if (sawHeader)
      return p.fail("a second 'tgraph' line");
    sawHeader = true;
    g.line = lineNo;
    std::set<std::string> seen;
    while (!p.atEnd()) {
      std::string key;
      if (!p.key(key, seen))
        return false;
      if (key == "name") {
        if (!p.ident(g.name, "a graph name"))
          return false;
      } else if (key == "form") {
        std::string form;
        if (!p.ident(form, "a form"))
          return false;
        if (!parseForm(form, g.form))
          return p.fail("unknown form '" + form +
                        "' (tiles, events, normalized, linear)");
      } else if (key == "sms") {
        if (!p.integer32(g.sms, "sms"))
          return false;
      } else if (key == "start") {
        if (!p.integer32(g.start, "start event"))
          return false;
      } else if (key == "end") {
        if (!p.integer32(g.end, "end event"))
          return false;
      } else {
        return p.fail("unknown tgraph key '" + key +
                      "' (name, form, sms, start, end)");
      }
    }
    if (!seen.count("form"))
      return p.fail("the tgraph line needs form=");
    return true;
  }

  bool parseTensor(LineParser &p, int lineNo) {
    Tensor t;
    t.line = lineNo;
    if (!p.ident(t.name, "a tensor name"))
      return false;
    if (g.findTensor(t.name) >= 0)
      return p.fail("tensor '" + t.name + "' declared twice");
    std::set<std::string> seen;
    while (!p.atEnd()) {
      std::string key;
      if (!p.key(key, seen))
        return false;
      if (key == "shape") {
        if (!p.punct('['))
          return false;
        do {
          int64_t d = 0;
          if (!p.integer(d, "a dimension"))
            return false;
          t.shape.push_back(d);
        } while (p.tryPunct(','));
        if (!p.punct(']'))
          return false;
      } else if (key == "role") {
        std::string role;
        if (!p.ident(role, "a role"))
          return false;
        if (!parseRole(role, t.role))
          return p.fail("unknown role '" + role +
                        "' (input, activation, state)");
      } else {
        return p.fail("unknown tensor key '" + key + "' (shape, role)");
      }
    }
    if (!seen.count("shape"))
      return p.fail("tensor '" + t.name + "' needs shape=");
    g.tensors.push_back(std::move(t));
    return true;
  }

  bool parseOp(LineParser &p, int lineNo) {
    if (!checkId(p, "op", g.ops.size()))
      return false;
    Operator op;
    op.line = lineNo;
    std::set<std::string> seen;
    while (!p.atEnd()) {
      std::string key;
      if (!p.key(key, seen))
        return false;
      if (key == "name") {
        if (!p.ident(op.name, "an op name"))
          return false;
      } else if (key == "kind") {
        std::string kind;
        if (!p.ident(kind, "an op kind"))
          return false;
        if (!parseOpKind(kind, op.kind))
          return p.fail("unknown op kind '" + kind + "'");
      } else if (key == "layer") {
        if (!p.integer32(op.layer, "layer"))
          return false;
      } else if (key == "launch") {
        std::string mode;
        if (!p.ident(mode, "aot or jit"))
          return false;
        if (mode != "aot" && mode != "jit")
          return p.fail("launch must be aot or jit, got '" + mode + "'");
        op.launch = mode == "jit" ? LaunchMode::Jit : LaunchMode::Aot;
      } else if (key == "attrs") {
        if (!p.punct('{'))
          return false;
        if (!p.tryPunct('}')) {
          std::set<std::string> attrSeen;
          do {
            std::string name, value;
            if (!p.key(name, attrSeen) || !p.number(value, name.c_str()))
              return false;
            op.attrs.push_back({name, value});
          } while (p.tryPunct(','));
          if (!p.punct('}'))
            return false;
        }
      } else {
        return p.fail("unknown op key '" + key +
                      "' (name, kind, layer, launch, attrs)");
      }
    }
    if (!seen.count("name") || !seen.count("kind"))
      return p.fail("an op needs name= and kind=");
    g.ops.push_back(std::move(op));
    return true;
  }

  bool parseRegions(LineParser &p, std::vector<Region> &out) {
    if (!p.punct('{'))
      return false;
    if (p.tryPunct('}'))
      return true;
    do {
      std::string name;
      if (!p.ident(name, "a tensor name"))
        return false;
      Region r;
      // `combine:` marks a box a group of tasks writes together (TGraph.h);
      // a tensor may still be called `combine` (then '[' follows).
      if (name == "combine" && p.tryPunct(':')) {
        r.combine = true;
        if (!p.ident(name, "a tensor name after 'combine:'"))
          return false;
      }
      r.tensor = g.findTensor(name);
      if (r.tensor < 0)
        return p.fail("unknown tensor '" + name +
                      "' (tensors are declared before the tasks)");
      if (!p.punct('['))
        return false;
      do {
        Interval iv;
        if (!p.integer(iv.begin, "a range start") || !p.punct(':') ||
            !p.integer(iv.end, "a range end"))
          return false;
        r.box.push_back(iv);
      } while (p.tryPunct(','));
      if (!p.punct(']'))
        return false;
      out.push_back(std::move(r));
    } while (p.tryPunct(','));
    return p.punct('}');
  }

  bool parseTask(LineParser &p, int lineNo) {
    if (!checkId(p, "task", g.tasks.size()))
      return false;
    Task t;
    t.line = lineNo;
    std::set<std::string> seen;
    while (!p.atEnd()) {
      std::string key;
      if (!p.key(key, seen))
        return false;
      if (key == "op") {
        if (p.peek().kind == Tok::Ident && p.peek().text == "empty") {
          std::string ignored;
          p.ident(ignored, "empty");
          t.op = kEmptyOp;
        } else if (!p.integer32(t.op, "an op id or 'empty'")) {
          return false;
        } else if (t.op < 0) {
          return p.fail("op id " + std::to_string(t.op) +
                        " is negative (write op=empty for an empty task)");
        }
      } else if (key == "tile") {
        if (!p.integer(t.tile, "a tile index"))
          return false;
      } else if (key == "reads") {
        if (!parseRegions(p, t.reads))
          return false;
      } else if (key == "writes") {
        if (!parseRegions(p, t.writes))
          return false;
      } else if (key == "wait") {
        if (!p.intList(t.waits, "an event id"))
          return false;
      } else if (key == "trigger") {
        if (!p.intList(t.triggers, "an event id"))
          return false;
      } else {
        return p.fail("unknown task key '" + key +
                      "' (op, tile, reads, writes, wait, trigger)");
      }
    }
    if (!seen.count("op"))
      return p.fail("a task needs op= (an op id, or empty)");
    if (t.isEmpty() && seen.count("tile"))
      return p.fail("an empty task has no tile");
    g.tasks.push_back(std::move(t));
    return true;
  }

  bool parseEvent(LineParser &p, int lineNo) {
    if (!checkId(p, "event", g.events.size()))
      return false;
    Event e;
    e.line = lineNo;
    std::set<std::string> seen;
    while (!p.atEnd()) {
      std::string key;
      if (!p.key(key, seen))
        return false;
      if (key == "count") {
        if (!p.integer(e.count, "a trigger count"))
          return false;
      } else if (key == "launch") {
        std::vector<int> range;
        if (!p.intList(range, "a task id"))
          return false;
        if (range.size() == 2) {
          e.first = range[0];
          e.last = range[1];
        } else if (!range.empty()) {
          return p.fail("launch takes [FIRST,LAST] or [], got " +
                        std::to_string(range.size()) + " ids");
        }
      } else {
        return p.fail("unknown event key '" + key + "' (count, launch)");
      }
    }
    if (!seen.count("count"))
      return p.fail("an event needs count=");
    g.events.push_back(e);
    return true;
  }
};

} // namespace

bool parseGraph(const std::string &text, const std::string &source, TGraph &g,
                std::string &error) {
  g = TGraph();
  GraphParser parser(source, g);
  size_t begin = 0;
  int lineNo = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    ++lineNo;
    LineParser p(text.substr(begin, end - begin), lineNo, source);
    if (!p.atEnd() && !parser.parseLine(p, lineNo)) {
      error = p.error;
      return false;
    }
    if (!p.ok()) {
      error = p.error;
      return false;
    }
    if (!p.atEnd()) {
      p.fail("unexpected '" + p.peek().text + "'");
      error = p.error;
      return false;
    }
    begin = end + 1;
  }
  if (!parser.finish(error))
    return false;
  return true;
}

} // namespace tawa::mega
