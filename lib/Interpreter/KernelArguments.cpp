//===- KernelArguments.cpp - inputs for a kernel run on the CPU -----------===//

#include "tawa/Interpreter/KernelArguments.h"

#include "tawa/Interpreter/Numerics.h"
#include "tawa/Interpreter/Scheduler.h"
#include "tawa/Transforms/SourceLocation.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

using namespace mlir;

namespace tawa::interp {

namespace {

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

std::string joinShape(ArrayRef<int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

/// What each argument of the kernel is.
struct ArgumentInfo {
  enum class Role { Scalar, Descriptor, DescShape, DescStride, Pointer, Other };
  Role role = Role::Other;
  std::string name;
  Type type;
  unsigned owner = 0; ///< the descriptor of a DescShape / DescStride
  unsigned dim = 0;
};

/// Integer expressions over the kernel's integer scalars: + - * of integers
/// and names, products first, and unary minus.
class ExpressionParser {
public:
  ExpressionParser(
      StringRef text,
      std::function<bool(StringRef, int64_t &, std::string &)> name)
      : text(text), resolveName(std::move(name)) {}

  bool parse(int64_t &value, std::string &error) {
    if (!sum(value, error))
      return false;
    skipSpace();
    if (pos != text.size()) {
      error =
          "unexpected '" + text.substr(pos).str() + "' in '" + text.str() + "'";
      return false;
    }
    return true;
  }

private:
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool sum(int64_t &value, std::string &error) {
    if (!product(value, error))
      return false;
    while (true) {
      skipSpace();
      if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-'))
        return true;
      char op = text[pos++];
      int64_t rhs;
      if (!product(rhs, error))
        return false;
      value = op == '+' ? value + rhs : value - rhs;
    }
  }
  bool product(int64_t &value, std::string &error) {
    if (!factor(value, error))
      return false;
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '*')
        return true;
      ++pos;
      int64_t rhs;
      if (!factor(rhs, error))
        return false;
      value *= rhs;
    }
  }
  bool factor(int64_t &value, std::string &error) {
    skipSpace();
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      if (!factor(value, error))
        return false;
      value = -value;
      return true;
    }
    size_t start = pos;
    if (pos < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[pos]))) {
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      if (!llvm::to_integer(text.slice(start, pos), value, 10)) {
        error = "integer out of range in '" + text.str() + "'";
        return false;
      }
      return true;
    }
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_'))
      ++pos;
    if (pos == start) {
      error = "expected an integer or an argument name in '" + text.str() + "'";
      return false;
    }
    return resolveName(text.slice(start, pos), value, error);
  }

  StringRef text;
  size_t pos = 0;
  std::function<bool(StringRef, int64_t &, std::string &)> resolveName;
};

int64_t defaultInteger(StringRef name) {
  return llvm::StringSwitch<int64_t>(name)
      .Case("M", 144)
      .Case("N", 208)
      .Case("K", 304)
      .Case("L", 176)
      .Case("seq_len", 176)
      .Case("G", 2)
      .Default(64);
}

/// Random contents: floats uniform in [-1, 1) rounded to the element type,
/// integers in [0, 16).
void fillRandom(GlobalMemory &memory, unsigned index, SplitMix64 &rng) {
  Buffer &b = memory.buffer(index);
  unsigned bytes = elementBytes(b.elementType);
  bool isFloat = isa<FloatType>(b.elementType);
  for (int64_t i = 0; i < b.numElements(); ++i) {
    uint64_t bits;
    if (isFloat)
      bits = encodeFloat(b.elementType,
                         convertFloat(b.elementType, 2 * rng.unit() - 1));
    else
      bits = rng.next() % 16;
    memory.storeBits(index, static_cast<uint64_t>(i) * bytes, bytes, bits);
  }
}

} // namespace

std::string argumentName(tt::FuncOp func, unsigned index) {
  std::string name = getValueName(func.getArgument(index).getLoc());
  return name.empty() ? "arg" + std::to_string(index) : name;
}

FailureOr<KernelArguments> makeKernelArguments(tt::FuncOp func,
                                               ArrayRef<std::string> specs,
                                               uint64_t dataSeed,
                                               std::string &error) {
  using Role = ArgumentInfo::Role;
  unsigned numArgs = func.getNumArguments();
  std::vector<ArgumentInfo> info(numArgs);
  llvm::StringMap<unsigned> byName;
  for (unsigned i = 0; i < numArgs; ++i) {
    ArgumentInfo &a = info[i];
    a.type = func.getArgument(i).getType();
    a.name = argumentName(func, i);
    if (a.role != Role::Other)
      continue; // already claimed as a descriptor's shape or stride
    if (auto desc = dyn_cast<tt::TensorDescType>(a.type)) {
      a.role = Role::Descriptor;
      // Triton's host descriptor: shape (i32 each), then strides (i64 each).
      unsigned rank = desc.getBlockType().getRank();
      bool expanded = i + 2 * rank < numArgs;
      for (unsigned d = 0; expanded && d < 2 * rank; ++d)
        expanded =
            func.getArgument(i + 1 + d).getType().isInteger(d < rank ? 32 : 64);
      if (expanded)
        for (unsigned d = 0; d < 2 * rank; ++d) {
          ArgumentInfo &e = info[i + 1 + d];
          e.role = d < rank ? Role::DescShape : Role::DescStride;
          e.owner = i;
          e.dim = d % rank;
        }
    } else if (isa<tt::PointerType>(a.type)) {
      a.role = Role::Pointer;
    } else if (isa<IntegerType, FloatType>(a.type)) {
      a.role = Role::Scalar;
    }
    if (!byName.count(a.name))
      byName[a.name] = i;
  }
  // Expansion arguments carry their descriptor's name; give them their own.
  for (unsigned i = 0; i < numArgs; ++i) {
    ArgumentInfo &a = info[i];
    if (a.role == Role::DescShape || a.role == Role::DescStride)
      a.name = info[a.owner].name +
               (a.role == Role::DescShape ? ".shape[" : ".strides[") +
               std::to_string(a.dim) + "]";
  }

  llvm::StringMap<std::string> given;
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "'" + spec + "' is not NAME=VALUE";
      return failure();
    }
    std::string name = spec.substr(0, eq);
    auto it = byName.find(name);
    if (it == byName.end() || info[it->second].role == Role::Other) {
      std::string names;
      for (const ArgumentInfo &a : info)
        if (a.role == Role::Scalar || a.role == Role::Descriptor ||
            a.role == Role::Pointer)
          names += (names.empty() ? "" : ", ") + a.name;
      error = "no argument '" + name +
              "' to give a value (arguments: " + names + ")";
      return failure();
    }
    given[name] = spec.substr(eq + 1);
  }

  KernelArguments result;
  result.values.resize(numArgs);
  SplitMix64 rng(dataSeed);

  // Integer scalars first: every other value may be written in terms of them.
  llvm::StringMap<int64_t> integers;
  std::set<std::string> resolving;
  std::function<bool(StringRef, int64_t &, std::string &)> resolve =
      [&](StringRef name, int64_t &value, std::string &why) -> bool {
    auto known = integers.find(name);
    if (known != integers.end()) {
      value = known->second;
      return true;
    }
    auto it = byName.find(name);
    if (it == byName.end() || info[it->second].role != Role::Scalar ||
        !isa<IntegerType>(info[it->second].type)) {
      why = "'" + name.str() + "' is not an integer argument";
      return false;
    }
    auto spec = given.find(name);
    if (spec == given.end()) {
      value = defaultInteger(name);
    } else {
      if (!resolving.insert(name.str()).second) {
        why = "'" + name.str() + "' is defined in terms of itself";
        return false;
      }
      ExpressionParser parser(spec->second, resolve);
      if (!parser.parse(value, why))
        return false;
      resolving.erase(name.str());
    }
    integers[name] = value;
    return true;
  };
  auto evaluate = [&](StringRef text, int64_t &value) {
    std::string why;
    ExpressionParser parser(text, resolve);
    if (!parser.parse(value, why)) {
      error = why;
      return false;
    }
    return true;
  };

  for (unsigned i = 0; i < numArgs; ++i) {
    ArgumentInfo &a = info[i];
    if (a.role != Role::Scalar)
      continue;
    if (auto intType = dyn_cast<IntegerType>(a.type)) {
      int64_t value;
      std::string why;
      if (!resolve(a.name, value, why)) {
        error = why;
        return failure();
      }
      result.values[i] = makeInt(a.type, static_cast<uint64_t>(value));
      result.summary.push_back(a.name + "=" + std::to_string(value));
      if (auto div = func.getArgAttrOfType<IntegerAttr>(i, "tt.divisibility"))
        if (div.getInt() > 0 && value % div.getInt() != 0)
          result.warnings.push_back(
              a.name + "=" + std::to_string(value) +
              " is not a multiple of its tt.divisibility " +
              std::to_string(div.getInt()));
      continue;
    }
    double value = 0.125;
    auto spec = given.find(a.name);
    if (spec != given.end()) {
      StringRef text = spec->second;
      if (text.getAsDouble(value)) {
        error = "'" + text.str() + "' is not a number (for " + a.name + ")";
        return failure();
      }
    }
    result.values[i] = makeFloat(a.type, value);
    char printed[32];
    std::snprintf(printed, sizeof printed, "%.9g", value);
    result.summary.push_back(a.name + "=" + printed);
  }

  for (unsigned i = 0; i < numArgs; ++i) {
    ArgumentInfo &a = info[i];
    if (a.role == Role::Descriptor) {
      auto descType = cast<tt::TensorDescType>(a.type);
      RankedTensorType block = descType.getBlockType();
      Type elem = block.getElementType();
      if (!isSupportedElementType(elem)) {
        error = "descriptor '" + a.name + "' has elements of type " +
                typeName(elem) + ", which the interpreter does not support";
        return failure();
      }
      SmallVector<int64_t, 4> shape;
      auto spec = given.find(a.name);
      if (spec != given.end()) {
        SmallVector<StringRef, 4> dims;
        StringRef(spec->second).split(dims, ',');
        if (dims.size() != static_cast<size_t>(block.getRank())) {
          error = "descriptor '" + a.name + "' has " +
                  std::to_string(block.getRank()) + " dimensions, '" +
                  spec->second + "' gives " + std::to_string(dims.size());
          return failure();
        }
        for (StringRef d : dims) {
          int64_t v;
          if (!evaluate(d, v))
            return failure();
          if (v < 1 || v > (int64_t(1) << 31) - 1) {
            error = "descriptor '" + a.name + "': dimension " + d.str() +
                    " = " + std::to_string(v) + " is not in [1, 2^31)";
            return failure();
          }
          shape.push_back(v);
        }
      } else {
        for (int64_t b : block.getShape())
          shape.push_back((b + b / 2 + 15) / 16 * 16);
      }
      int64_t elements = 1;
      for (int64_t d : shape)
        elements *= d;
      if (elements > (int64_t(1) << 28)) {
        error = "descriptor '" + a.name + "' of " + joinShape(shape) +
                " elements is too large for the interpreter";
        return failure();
      }
      unsigned index = result.memory.allocate(a.name, elem, elements, shape);
      fillRandom(result.memory, index, rng);
      auto desc = std::make_shared<TensorDescriptor>();
      desc->base = result.memory.buffer(index).base;
      desc->elementType = elem;
      desc->shape = shape;
      desc->block = block;
      desc->strides.assign(shape.size(), 1);
      for (size_t d = shape.size() - 1; d-- > 0;)
        desc->strides[d] = desc->strides[d + 1] * shape[d + 1];
      for (unsigned j = i + 1; j < numArgs && info[j].owner == i &&
                               (info[j].role == Role::DescShape ||
                                info[j].role == Role::DescStride);
           ++j) {
        const ArgumentInfo &e = info[j];
        int64_t v = e.role == Role::DescShape ? desc->shape[e.dim]
                                              : desc->strides[e.dim];
        result.values[j] = makeInt(e.type, static_cast<uint64_t>(v));
      }
      RuntimeValue value;
      value.kind = RuntimeValue::Kind::Descriptor;
      value.descriptor = std::move(desc);
      result.values[i] = std::move(value);
      result.summary.push_back(a.name + " " + joinShape(shape) + " " +
                               typeName(elem));
      continue;
    }
    if (a.role != Role::Pointer)
      continue;
    Type pointee = cast<tt::PointerType>(a.type).getPointeeType();
    if (!isSupportedElementType(pointee)) {
      error = "pointer '" + a.name + "' to " + typeName(pointee) +
              " is not supported by the interpreter";
      return failure();
    }
    unsigned bytes = elementBytes(pointee);
    auto spec = given.find(a.name);
    StringRef text = spec == given.end() ? StringRef("1024") : spec->second;
    text = text.trim();
    unsigned index;
    if (text.consume_front("ptrs:")) {
      // A pointer table: i64 elements holding the bases of new buffers.
      size_t open = text.find('[');
      if (open == StringRef::npos || !text.ends_with("]")) {
        error = "'" + spec->second + "' is not ptrs:TYPE[N0,N1,...]";
        return failure();
      }
      Type elem;
      {
        // A bad type name is reported below, not by the parser.
        ScopedDiagnosticHandler quiet(func.getContext(),
                                      [](Diagnostic &) { return success(); });
        elem = parseType(text.take_front(open).trim(), func.getContext());
      }
      if (!elem || !isSupportedElementType(elem)) {
        error = "'" + text.take_front(open).str() +
                "' is not an element type the interpreter supports";
        return failure();
      }
      SmallVector<StringRef, 8> counts;
      text.drop_front(open + 1).drop_back().split(counts, ',');
      std::vector<uint64_t> bases;
      std::string described;
      for (auto [n, countText] : llvm::enumerate(counts)) {
        int64_t count;
        if (!evaluate(countText, count))
          return failure();
        if (count < 1 || count > (int64_t(1) << 28)) {
          error = "buffer size " + std::to_string(count) + " of '" + a.name +
                  "' is out of range";
          return failure();
        }
        std::string sub = a.name + "[" + std::to_string(n) + "]";
        unsigned b = result.memory.allocate(sub, elem, count);
        fillRandom(result.memory, b, rng);
        bases.push_back(result.memory.buffer(b).base);
        described += (n ? ", " : "") + std::to_string(count);
      }
      index = result.memory.allocate(a.name, pointee, bases.size());
      for (size_t n = 0; n < bases.size(); ++n)
        result.memory.storeBits(index, n * bytes, bytes, bases[n]);
      result.summary.push_back(a.name + " -> " + std::to_string(bases.size()) +
                               " buffers of " + typeName(elem) + " (" +
                               described + ")");
    } else if (text.consume_front("[")) {
      if (!text.consume_back("]")) {
        error = "'" + spec->second + "' lacks its closing ']'";
        return failure();
      }
      SmallVector<StringRef, 16> items;
      text.split(items, ',');
      index = result.memory.allocate(a.name, pointee, items.size());
      for (auto [n, item] : llvm::enumerate(items)) {
        uint64_t bits;
        if (isa<FloatType>(pointee)) {
          double v;
          if (item.trim().getAsDouble(v)) {
            error = "'" + item.str() + "' is not a number (in " + a.name + ")";
            return failure();
          }
          bits = encodeFloat(pointee, convertFloat(pointee, v));
        } else {
          int64_t v;
          if (!evaluate(item, v))
            return failure();
          bits =
              truncateToWidth(static_cast<uint64_t>(v), integerWidth(pointee));
        }
        result.memory.storeBits(index, n * bytes, bytes, bits);
      }
      result.summary.push_back(a.name + " = [" + spec->second.substr(1));
    } else {
      int64_t count;
      if (!evaluate(text, count))
        return failure();
      if (count < 1 || count > (int64_t(1) << 28)) {
        error = "buffer size " + std::to_string(count) + " of '" + a.name +
                "' is out of range";
        return failure();
      }
      index = result.memory.allocate(a.name, pointee, count);
      fillRandom(result.memory, index, rng);
      result.summary.push_back(a.name + " " + std::to_string(count) + " " +
                               typeName(pointee));
    }
    result.values[i] = makeInt(a.type, result.memory.buffer(index).base);
  }

  for (unsigned i = 0; i < numArgs; ++i)
    if (info[i].role == Role::Other) {
      error = "argument '" + info[i].name + "' of type " +
              typeName(info[i].type) +
              " is not one the interpreter can make a value for";
      return failure();
    }
  result.memory.clearWritten();
  return result;
}

FailureOr<Grid> inferGrid(tt::FuncOp func, const KernelArguments &args,
                          const ExecutionLimits &limits, int64_t maxPerAxis,
                          std::string &how, std::string &error) {
  bool usesAxis[3] = {false, false, false};
  func.walk([&](tt::GetProgramIdOp op) {
    usesAxis[static_cast<int>(op.getAxis())] = true;
  });
  Grid grid;
  int64_t *extent[3] = {&grid.x, &grid.y, &grid.z};
  const char *axisName[3] = {"x", "y", "z"};
  ExecutionOptions options;
  options.limits = limits;
  std::string notes;
  for (int axis = 0; axis < 3; ++axis) {
    if (!usesAxis[axis])
      continue;
    int64_t n = 0;
    for (; n < maxPerAxis; ++n) {
      ProgramId pid;
      (axis == 0 ? pid.x : axis == 1 ? pid.y : pid.z) = n;
      GlobalMemory scratch = args.memory;
      Grid probeGrid = grid;
      *(axis == 0   ? &probeGrid.x
        : axis == 1 ? &probeGrid.y
                    : &probeGrid.z) = n + 1;
      ExecutionResult r =
          runProgram(func, args.values, pid, probeGrid, scratch, options);
      if (!r.completed()) {
        error = "program (" + std::to_string(pid.x) + ", " +
                std::to_string(pid.y) + ", " + std::to_string(pid.z) +
                ") of the original kernel failed while probing the grid: " +
                r.message;
        return failure();
      }
      if (scratch.countWritten() == 0)
        break;
    }
    if (n == maxPerAxis) {
      error = "program " + std::to_string(maxPerAxis - 1) + " along " +
              axisName[axis] +
              " still stores something: give the grid with --grid";
      return failure();
    }
    *extent[axis] = std::max<int64_t>(n, 1);
    notes += std::string(notes.empty() ? "" : ", ") + axisName[axis] + " " +
             std::to_string(n);
  }
  how = notes.empty() ? "no program id is read"
                      : "programs that store something: " + notes;
  return grid;
}

} // namespace tawa::interp
