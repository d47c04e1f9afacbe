//===- OpSemantics.cpp - what one operation computes ----------------------===//

#include "OpSemantics.h"

#include "tawa/Dialect/Tawa/TawaDialect.h"
#include "tawa/Interpreter/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;

namespace tawa::interp {

namespace {

using DataPtr = std::shared_ptr<TensorData>;

Type elementTypeOf(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    return shaped.getElementType();
  return t;
}

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

DataPtr makeData(Type elementType, ArrayRef<int64_t> shape) {
  auto d = std::make_shared<TensorData>();
  d->elementType = elementType;
  d->shape.assign(shape.begin(), shape.end());
  if (isa<FloatType>(elementType))
    d->floats.resize(product(shape));
  else
    d->ints.resize(product(shape));
  return d;
}

RuntimeValue wrap(DataPtr d) { return RuntimeValue::of(std::move(d)); }

/// Elementwise operands: all of one shape, except that a scalar (no shape,
/// one element: a constant inside a reduce combiner run on whole slices)
/// stands for every element.
struct Elementwise {
  SmallVector<int64_t, 4> shape;
  int64_t n = 1;
  bool ok = true;
};

Elementwise elementwiseShape(ArrayRef<const TensorData *> operands) {
  Elementwise e;
  const TensorData *widest = nullptr;
  for (const TensorData *d : operands)
    if (!widest || (widest->shape.empty() && !d->shape.empty()))
      widest = d;
  e.shape = widest->shape;
  e.n = widest->numElements();
  for (const TensorData *d : operands)
    if (!(d->shape == widest->shape ||
          (d->shape.empty() && d->numElements() == 1)))
      e.ok = false;
  return e;
}

inline size_t at(const TensorData &d, int64_t i) {
  return d.shape.empty() ? 0 : static_cast<size_t>(i);
}

/// Row-major strides of `shape`.
SmallVector<int64_t, 4> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// Copies element `from` of `src` to element `to` of `dst` (same kind).
inline void copyElement(const TensorData &src, int64_t from, TensorData &dst,
                        int64_t to) {
  if (src.isFloat())
    dst.floats[to] = src.floats[from];
  else
    dst.ints[to] = src.ints[from];
}

/// A float operation computed as the element type's hardware would: in
/// double for f64, otherwise in float and rounded to the type.
template <typename F32, typename F64> double floatOp(Type t, F32 f32, F64 f64) {
  if (t.isF64())
    return f64();
  return roundToFloatType(t, static_cast<double>(f32()));
}

/// IEEE maxNum/minNum (a NaN operand yields the other one) and
/// maximum/minimum (NaN propagates); -0 orders below +0 in all four.
template <typename T> T maxNum(T a, T b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T> T minNum(T a, T b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename T> T maximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  return maxNum(a, b);
}
template <typename T> T minimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  return minNum(a, b);
}

bool compareFloats(arith::CmpFPredicate p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (p) {
  case arith::CmpFPredicate::AlwaysFalse:
    return false;
  case arith::CmpFPredicate::OEQ:
    return !unordered && a == b;
  case arith::CmpFPredicate::OGT:
    return !unordered && a > b;
  case arith::CmpFPredicate::OGE:
    return !unordered && a >= b;
  case arith::CmpFPredicate::OLT:
    return !unordered && a < b;
  case arith::CmpFPredicate::OLE:
    return !unordered && a <= b;
  case arith::CmpFPredicate::ONE:
    return !unordered && a != b;
  case arith::CmpFPredicate::ORD:
    return !unordered;
  case arith::CmpFPredicate::UEQ:
    return unordered || a == b;
  case arith::CmpFPredicate::UGT:
    return unordered || a > b;
  case arith::CmpFPredicate::UGE:
    return unordered || a >= b;
  case arith::CmpFPredicate::ULT:
    return unordered || a < b;
  case arith::CmpFPredicate::ULE:
    return unordered || a <= b;
  case arith::CmpFPredicate::UNE:
    return unordered || a != b;
  case arith::CmpFPredicate::UNO:
    return unordered;
  case arith::CmpFPredicate::AlwaysTrue:
    return true;
  }
  return false;
}

bool compareInts(arith::CmpIPredicate p, uint64_t a, uint64_t b, unsigned w) {
  int64_t sa = signExtend(a, w), sb = signExtend(b, w);
  switch (p) {
  case arith::CmpIPredicate::eq:
    return a == b;
  case arith::CmpIPredicate::ne:
    return a != b;
  case arith::CmpIPredicate::slt:
    return sa < sb;
  case arith::CmpIPredicate::sle:
    return sa <= sb;
  case arith::CmpIPredicate::sgt:
    return sa > sb;
  case arith::CmpIPredicate::sge:
    return sa >= sb;
  case arith::CmpIPredicate::ult:
    return a < b;
  case arith::CmpIPredicate::ule:
    return a <= b;
  case arith::CmpIPredicate::ugt:
    return a > b;
  case arith::CmpIPredicate::uge:
    return a >= b;
  }
  return false;
}

/// Integer binary operations on zero-extended values of width w. They
/// return false (with `why`) where the result is undefined.
using IntBinary = std::function<bool(uint64_t, uint64_t, unsigned, uint64_t &,
                                     const char *&)>;

IntBinary intBinary(StringRef name) {
  auto wrapOp = [](auto f) -> IntBinary {
    return [f](uint64_t a, uint64_t b, unsigned w, uint64_t &r, const char *&) {
      r = truncateToWidth(f(a, b), w);
      return true;
    };
  };
  auto sdiv = [](bool remainder, int rounding) -> IntBinary {
    // rounding: 0 toward zero, 1 toward +inf (ceil), -1 toward -inf.
    return
        [=](uint64_t a, uint64_t b, unsigned w, uint64_t &r, const char *&why) {
          int64_t x = signExtend(a, w), y = signExtend(b, w);
          if (y == 0) {
            why = "division by zero";
            return false;
          }
          int64_t minValue = w >= 64 ? std::numeric_limits<int64_t>::min()
                                     : -(int64_t(1) << (w - 1));
          if (x == minValue && y == -1) {
            why = "signed division overflows";
            return false;
          }
          int64_t q = x / y, m = x % y;
          if (m != 0 && rounding != 0 && ((m < 0) != (y < 0)) == (rounding < 0))
            q += rounding;
          r = truncateToWidth(static_cast<uint64_t>(remainder ? m : q), w);
          return true;
        };
  };
  auto udiv = [](bool remainder, bool ceil) -> IntBinary {
    return
        [=](uint64_t a, uint64_t b, unsigned w, uint64_t &r, const char *&why) {
          if (b == 0) {
            why = "division by zero";
            return false;
          }
          uint64_t q = a / b;
          if (ceil && a % b)
            ++q;
          r = truncateToWidth(remainder ? a % b : q, w);
          return true;
        };
  };
  auto shift = [](int kind) -> IntBinary {
    return
        [=](uint64_t a, uint64_t b, unsigned w, uint64_t &r, const char *&why) {
          if (b >= w) {
            why = "shift amount is not less than the bit width";
            return false;
          }
          if (kind == 0)
            r = truncateToWidth(a << b, w);
          else if (kind == 1)
            r = a >> b;
          else
            r = truncateToWidth(static_cast<uint64_t>(signExtend(a, w) >>
                                                      static_cast<int64_t>(b)),
                                w);
          return true;
        };
  };
  auto sminmax = [](bool max) -> IntBinary {
    return [=](uint64_t a, uint64_t b, unsigned w, uint64_t &r, const char *&) {
      bool less = signExtend(a, w) < signExtend(b, w);
      r = (less != max) ? a : b;
      return true;
    };
  };
  return llvm::StringSwitch<IntBinary>(name)
      .Case("arith.addi", wrapOp([](uint64_t a, uint64_t b) { return a + b; }))
      .Case("arith.subi", wrapOp([](uint64_t a, uint64_t b) { return a - b; }))
      .Case("arith.muli", wrapOp([](uint64_t a, uint64_t b) { return a * b; }))
      .Case("arith.andi", wrapOp([](uint64_t a, uint64_t b) { return a & b; }))
      .Case("arith.ori", wrapOp([](uint64_t a, uint64_t b) { return a | b; }))
      .Case("arith.xori", wrapOp([](uint64_t a, uint64_t b) { return a ^ b; }))
      .Case("arith.minui",
            wrapOp([](uint64_t a, uint64_t b) { return a < b ? a : b; }))
      .Case("arith.maxui",
            wrapOp([](uint64_t a, uint64_t b) { return a > b ? a : b; }))
      .Case("arith.minsi", sminmax(false))
      .Case("arith.maxsi", sminmax(true))
      .Case("arith.divsi", sdiv(false, 0))
      .Case("arith.remsi", sdiv(true, 0))
      .Case("arith.ceildivsi", sdiv(false, 1))
      .Case("arith.floordivsi", sdiv(false, -1))
      .Case("arith.divui", udiv(false, false))
      .Case("arith.remui", udiv(true, false))
      .Case("arith.ceildivui", udiv(false, true))
      .Case("arith.shli", shift(0))
      .Case("arith.shrui", shift(1))
      .Case("arith.shrsi", shift(2))
      .Case("tt.mulhiui",
            [](uint64_t a, uint64_t b, unsigned w, uint64_t &r, const char *&) {
              unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
              r = truncateToWidth(static_cast<uint64_t>(p >> w), w);
              return true;
            })
      .Default(nullptr);
}

using FloatBinary = float (*)(float, float);
using DoubleBinary = double (*)(double, double);

bool floatBinary(StringRef name, FloatBinary &f, DoubleBinary &d) {
  struct Entry {
    const char *name;
    FloatBinary f;
    DoubleBinary d;
  };
  static const Entry table[] = {
      {"arith.addf", [](float a, float b) { return a + b; },
       [](double a, double b) { return a + b; }},
      {"arith.subf", [](float a, float b) { return a - b; },
       [](double a, double b) { return a - b; }},
      {"arith.mulf", [](float a, float b) { return a * b; },
       [](double a, double b) { return a * b; }},
      {"arith.divf", [](float a, float b) { return a / b; },
       [](double a, double b) { return a / b; }},
      {"tt.precise_divf", [](float a, float b) { return a / b; },
       [](double a, double b) { return a / b; }},
      {"arith.remf", [](float a, float b) { return std::fmod(a, b); },
       [](double a, double b) { return std::fmod(a, b); }},
      {"arith.maxnumf", maxNum<float>, maxNum<double>},
      {"arith.minnumf", minNum<float>, minNum<double>},
      {"arith.maximumf", maximum<float>, maximum<double>},
      {"arith.minimumf", minimum<float>, minimum<double>},
      {"math.powf", [](float a, float b) { return std::pow(a, b); },
       [](double a, double b) { return std::pow(a, b); }},
      {"math.atan2", [](float a, float b) { return std::atan2(a, b); },
       [](double a, double b) { return std::atan2(a, b); }},
      {"math.copysign", [](float a, float b) { return std::copysign(a, b); },
       [](double a, double b) { return std::copysign(a, b); }},
  };
  for (const Entry &e : table)
    if (name == e.name) {
      f = e.f;
      d = e.d;
      return true;
    }
  return false;
}

using FloatUnary = float (*)(float);
using DoubleUnary = double (*)(double);

bool floatUnary(StringRef name, FloatUnary &f, DoubleUnary &d) {
  struct Entry {
    const char *name;
    FloatUnary f;
    DoubleUnary d;
  };
  static const Entry table[] = {
      {"arith.negf", [](float a) { return -a; }, [](double a) { return -a; }},
      {"math.absf", [](float a) { return std::fabs(a); },
       [](double a) { return std::fabs(a); }},
      {"math.exp", [](float a) { return std::exp(a); },
       [](double a) { return std::exp(a); }},
      {"math.exp2", [](float a) { return std::exp2(a); },
       [](double a) { return std::exp2(a); }},
      {"math.expm1", [](float a) { return std::expm1(a); },
       [](double a) { return std::expm1(a); }},
      {"math.log", [](float a) { return std::log(a); },
       [](double a) { return std::log(a); }},
      {"math.log2", [](float a) { return std::log2(a); },
       [](double a) { return std::log2(a); }},
      {"math.log10", [](float a) { return std::log10(a); },
       [](double a) { return std::log10(a); }},
      {"math.log1p", [](float a) { return std::log1p(a); },
       [](double a) { return std::log1p(a); }},
      {"math.sqrt", [](float a) { return std::sqrt(a); },
       [](double a) { return std::sqrt(a); }},
      {"tt.precise_sqrt", [](float a) { return std::sqrt(a); },
       [](double a) { return std::sqrt(a); }},
      {"math.rsqrt", [](float a) { return 1.0f / std::sqrt(a); },
       [](double a) { return 1.0 / std::sqrt(a); }},
      {"math.cbrt", [](float a) { return std::cbrt(a); },
       [](double a) { return std::cbrt(a); }},
      {"math.sin", [](float a) { return std::sin(a); },
       [](double a) { return std::sin(a); }},
      {"math.cos", [](float a) { return std::cos(a); },
       [](double a) { return std::cos(a); }},
      {"math.tan", [](float a) { return std::tan(a); },
       [](double a) { return std::tan(a); }},
      {"math.tanh", [](float a) { return std::tanh(a); },
       [](double a) { return std::tanh(a); }},
      {"math.atan", [](float a) { return std::atan(a); },
       [](double a) { return std::atan(a); }},
      {"math.erf", [](float a) { return std::erf(a); },
       [](double a) { return std::erf(a); }},
      {"math.floor", [](float a) { return std::floor(a); },
       [](double a) { return std::floor(a); }},
      {"math.ceil", [](float a) { return std::ceil(a); },
       [](double a) { return std::ceil(a); }},
      {"math.trunc", [](float a) { return std::trunc(a); },
       [](double a) { return std::trunc(a); }},
      {"math.round", [](float a) { return std::round(a); },
       [](double a) { return std::round(a); }},
      {"math.roundeven", [](float a) { return std::nearbyint(a); },
       [](double a) { return std::nearbyint(a); }},
  };
  for (const Entry &e : table)
    if (name == e.name) {
      f = e.f;
      d = e.d;
      return true;
    }
  return false;
}

/// Float to integer, toward zero; NaN and out-of-range values (poison in
/// MLIR) saturate, so that the result is at least the same in every run.
uint64_t floatToInt(double v, unsigned w, bool isSigned) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (isSigned) {
    double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1);
    int64_t r = v < lo    ? static_cast<int64_t>(lo)
                : v >= hi ? static_cast<int64_t>(hi - 1)
                          : static_cast<int64_t>(v);
    if (w >= 64)
      r = v < lo    ? std::numeric_limits<int64_t>::min()
          : v >= hi ? std::numeric_limits<int64_t>::max()
                    : static_cast<int64_t>(v);
    return truncateToWidth(static_cast<uint64_t>(r), w);
  }
  double hi = std::ldexp(1.0, w);
  if (v <= 0)
    return 0;
  if (v >= hi)
    return truncateToWidth(~uint64_t(0), w);
  return static_cast<uint64_t>(v);
}

} // namespace

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

LogicalResult OpEvaluator::fail(Operation *op, const Twine &message) {
  errorOutcome = Outcome::RuntimeError;
  errorMessage = (op->getName().getStringRef() + " at " +
                  formatLocation(op->getLoc()) + ": " + message)
                     .str();
  return failure();
}

LogicalResult OpEvaluator::unsupported(Operation *op) {
  errorOutcome = Outcome::Unsupported;
  errorMessage =
      ("the interpreter does not implement '" + op->getName().getStringRef() +
       "' (at " + formatLocation(op->getLoc()) + ")")
          .str();
  return failure();
}

LogicalResult OpEvaluator::checkSize(Operation *op, ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > limits.maxTensorElements / d))
      return fail(op, "tensor of more than " + Twine(limits.maxTensorElements) +
                          " elements: over the interpreter's limit");
    n *= d;
  }
  return success();
}

std::string OpEvaluator::describeBadAddress(uint64_t address,
                                            unsigned bytes) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "address " << llvm::format_hex(address, 0);
  uint64_t slot = address / GlobalMemory::kBufferSpacing;
  if (slot == 0 || slot > memory.size()) {
    os << " lies outside every buffer";
    return s;
  }
  const Buffer &b = memory.buffer(static_cast<unsigned>(slot - 1));
  uint64_t offset = address % GlobalMemory::kBufferSpacing;
  if (offset % bytes)
    os << " is not aligned to the " << bytes << "-byte element";
  else
    os << " is byte " << offset << " of '" << b.name << "', which has "
       << b.bytes.size() << " bytes";
  return s;
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult OpEvaluator::evaluate(Operation *op,
                                    ArrayRef<RuntimeValue> operands,
                                    SmallVectorImpl<RuntimeValue> &results) {
  for (Type t : op->getResultTypes()) {
    Type elem = elementTypeOf(t);
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      if (failed(checkSize(op, tensor.getShape())))
        return failure();
    if (!isa<tt::TensorDescType>(t) && !isSupportedElementType(elem))
      return unsupported(op);
  }
  for (const RuntimeValue &v : operands)
    if (v.kind == RuntimeValue::Kind::Data && !v.data)
      return fail(op, "operand has no value");

  if (isa<arith::ConstantOp>(op)) {
    RuntimeValue r;
    if (failed(constant(op, r)))
      return failure();
    results.push_back(std::move(r));
    return success();
  }
  if (isa<ClipRowsOp>(op)) {
    // The same tensor with rows at and past the limit out of bounds: a
    // store drops them, as a TMA store drops what lies outside the tensor.
    if (operands.size() != 2 ||
        operands[0].kind != RuntimeValue::Kind::Descriptor ||
        !operands[0].descriptor || !operands[1].data ||
        operands[1].data->ints.empty())
      return fail(op, "operands are not a tensor descriptor and a row");
    auto clipped = std::make_shared<TensorDescriptor>(*operands[0].descriptor);
    if (clipped->shape.empty())
      return fail(op, "descriptor has no rows");
    int64_t limit = signExtend(operands[1].data->ints[0], 32);
    clipped->shape[0] = std::clamp<int64_t>(limit, 0, clipped->shape[0]);
    RuntimeValue r = operands[0];
    r.descriptor = std::move(clipped);
    results.push_back(std::move(r));
    return success();
  }
  bool handled = false;
  if (failed(floatElementwise(op, operands, results, handled)))
    return failure();
  if (handled)
    return success();
  if (failed(arith(op, operands, results, handled)))
    return failure();
  if (handled)
    return success();
  if (failed(math(op, operands, results, handled)))
    return failure();
  if (handled)
    return success();
  if (failed(triton(op, operands, results, handled)))
    return failure();
  if (handled)
    return success();
  return unsupported(op);
}

LogicalResult OpEvaluator::constant(Operation *op, RuntimeValue &result) {
  auto cst = cast<arith::ConstantOp>(op);
  Type type = cst.getType();
  Type elem = elementTypeOf(type);
  SmallVector<int64_t, 4> shape;
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  DataPtr d = makeData(elem, shape);
  Attribute value = cst.getValue();
  auto setInt = [&](int64_t i, const APInt &v) {
    d->ints[i] = truncateToWidth(v.getZExtValue(), integerWidth(elem));
  };
  auto setFloat = [&](int64_t i, const APFloat &v) {
    bool losesInfo = false;
    APFloat copy = v;
    copy.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                 &losesInfo);
    d->floats[i] = copy.convertToDouble();
  };
  if (auto i = dyn_cast<IntegerAttr>(value)) {
    if (d->ints.size() != 1)
      return unsupported(op);
    if (isa<IndexType>(elem))
      d->ints[0] = static_cast<uint64_t>(i.getInt());
    else
      setInt(0, i.getValue());
  } else if (auto f = dyn_cast<FloatAttr>(value)) {
    if (d->floats.size() != 1)
      return unsupported(op);
    setFloat(0, f.getValue());
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    int64_t n = d->numElements();
    if (isa<FloatType>(elem)) {
      if (dense.isSplat()) {
        APFloat v = dense.getSplatValue<APFloat>();
        setFloat(0, v);
        std::fill(d->floats.begin(), d->floats.end(), d->floats[0]);
      } else {
        int64_t i = 0;
        for (APFloat v : dense.getValues<APFloat>())
          if (i < n)
            setFloat(i++, v);
      }
    } else if (isa<IntegerType, IndexType>(elem)) {
      if (dense.isSplat()) {
        APInt v = dense.getSplatValue<APInt>();
        setInt(0, v);
        std::fill(d->ints.begin(), d->ints.end(), d->ints[0]);
      } else {
        int64_t i = 0;
        for (APInt v : dense.getValues<APInt>())
          if (i < n)
            setInt(i++, v);
      }
    } else {
      return unsupported(op);
    }
  } else {
    return unsupported(op);
  }
  result = wrap(std::move(d));
  return success();
}

//===----------------------------------------------------------------------===//
// Float elementwise operations of arith, math and tt
//===----------------------------------------------------------------------===//

LogicalResult
OpEvaluator::floatElementwise(Operation *op, ArrayRef<RuntimeValue> operands,
                              SmallVectorImpl<RuntimeValue> &results,
                              bool &handled) {
  StringRef name = op->getName().getStringRef();
  FloatUnary uf = nullptr;
  DoubleUnary ud = nullptr;
  FloatBinary bf = nullptr;
  DoubleBinary bd = nullptr;
  bool unary = floatUnary(name, uf, ud);
  if (!unary && !floatBinary(name, bf, bd))
    return success();
  handled = true;
  if (op->getNumResults() != 1 || operands.size() != (unary ? 1u : 2u))
    return unsupported(op);
  for (const RuntimeValue &v : operands)
    if (v.kind != RuntimeValue::Kind::Data || !v.data->isFloat())
      return unsupported(op);
  Type resultElem = elementTypeOf(op->getResult(0).getType());
  const TensorData &a = *operands[0].data;
  const TensorData &b = *operands[unary ? 0 : 1].data;
  Elementwise e = elementwiseShape({&a, &b});
  if (!e.ok)
    return fail(op, "operand shapes differ");
  DataPtr r = makeData(resultElem, e.shape);
  for (int64_t i = 0; i < e.n; ++i) {
    double x = a.floats[at(a, i)], y = b.floats[at(b, i)];
    r->floats[i] = unary
                       ? floatOp(
                             resultElem, [&] { return uf(float(x)); },
                             [&] { return ud(x); })
                       : floatOp(
                             resultElem, [&] { return bf(float(x), float(y)); },
                             [&] { return bd(x, y); });
  }
  results.push_back(wrap(std::move(r)));
  return success();
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

LogicalResult OpEvaluator::arith(Operation *op, ArrayRef<RuntimeValue> operands,
                                 SmallVectorImpl<RuntimeValue> &results,
                                 bool &handled) {
  StringRef name = op->getName().getStringRef();
  if (!name.starts_with("arith.") && name != "tt.mulhiui")
    return success();
  handled = true;
  if (op->getNumResults() != 1)
    return unsupported(op);
  Type resultElem = elementTypeOf(op->getResult(0).getType());

  auto operandData = [&](unsigned i) -> const TensorData & {
    return *operands[i].data;
  };
  for (const RuntimeValue &v : operands)
    if (v.kind != RuntimeValue::Kind::Data)
      return unsupported(op);

  // Integer binary operations.
  if (IntBinary f = intBinary(name)) {
    const TensorData &a = operandData(0), &b = operandData(1);
    Elementwise e = elementwiseShape({&a, &b});
    if (!e.ok)
      return fail(op, "operand shapes differ");
    unsigned w = integerWidth(resultElem);
    DataPtr r = makeData(resultElem, e.shape);
    const char *why = nullptr;
    for (int64_t i = 0; i < e.n; ++i)
      if (!f(a.ints[at(a, i)], b.ints[at(b, i)], w, r->ints[i], why))
        return fail(op, why);
    results.push_back(wrap(std::move(r)));
    return success();
  }

  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    const TensorData &a = operandData(0), &b = operandData(1);
    Elementwise e = elementwiseShape({&a, &b});
    if (!e.ok)
      return fail(op, "operand shapes differ");
    unsigned w = integerWidth(a.elementType);
    DataPtr r = makeData(resultElem, e.shape);
    for (int64_t i = 0; i < e.n; ++i)
      r->ints[i] = compareInts(cmp.getPredicate(), a.ints[at(a, i)],
                               b.ints[at(b, i)], w);
    results.push_back(wrap(std::move(r)));
    return success();
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    const TensorData &a = operandData(0), &b = operandData(1);
    Elementwise e = elementwiseShape({&a, &b});
    if (!e.ok)
      return fail(op, "operand shapes differ");
    DataPtr r = makeData(resultElem, e.shape);
    for (int64_t i = 0; i < e.n; ++i)
      r->ints[i] = compareFloats(cmp.getPredicate(), a.floats[at(a, i)],
                                 b.floats[at(b, i)]);
    results.push_back(wrap(std::move(r)));
    return success();
  }
  if (isa<arith::SelectOp>(op)) {
    const TensorData &c = operandData(0), &a = operandData(1),
                     &b = operandData(2);
    Elementwise e = elementwiseShape({&c, &a, &b});
    if (!e.ok)
      return fail(op, "operand shapes differ");
    DataPtr r = makeData(resultElem, e.shape);
    for (int64_t i = 0; i < e.n; ++i) {
      bool pick = c.ints[at(c, i)] & 1;
      const TensorData &src = pick ? a : b;
      copyElement(src, static_cast<int64_t>(at(src, i)), *r, i);
    }
    results.push_back(wrap(std::move(r)));
    return success();
  }

  // Conversions.
  const TensorData &a = operandData(0);
  DataPtr r = makeData(resultElem, a.shape);
  int64_t n = a.numElements();
  Type srcElem = a.elementType;
  if (isa<arith::ExtFOp>(op)) {
    r->floats = a.floats;
  } else if (isa<arith::TruncFOp>(op)) {
    for (int64_t i = 0; i < n; ++i)
      r->floats[i] = srcElem.isF64()
                         ? convertFloat(resultElem, a.floats[i])
                         : roundToFloatType(resultElem, a.floats[i]);
  } else if (isa<arith::ExtSIOp, arith::IndexCastOp>(op)) {
    unsigned from = integerWidth(srcElem), to = integerWidth(resultElem);
    for (int64_t i = 0; i < n; ++i)
      r->ints[i] = truncateToWidth(
          static_cast<uint64_t>(signExtend(a.ints[i], from)), to);
  } else if (isa<arith::ExtUIOp, arith::TruncIOp, arith::IndexCastUIOp>(op)) {
    unsigned to = integerWidth(resultElem);
    for (int64_t i = 0; i < n; ++i)
      r->ints[i] = truncateToWidth(a.ints[i], to);
  } else if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
    bool isSigned = isa<arith::SIToFPOp>(op);
    unsigned from = integerWidth(srcElem);
    for (int64_t i = 0; i < n; ++i) {
      double v = isSigned ? static_cast<double>(signExtend(a.ints[i], from))
                          : static_cast<double>(a.ints[i]);
      r->floats[i] = convertFloat(resultElem, v);
    }
  } else if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
    bool isSigned = isa<arith::FPToSIOp>(op);
    unsigned to = integerWidth(resultElem);
    for (int64_t i = 0; i < n; ++i)
      r->ints[i] = floatToInt(a.floats[i], to, isSigned);
  } else if (isa<arith::BitcastOp>(op)) {
    bool fromFloat = isa<FloatType>(srcElem),
         toFloat = isa<FloatType>(resultElem);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t bits = fromFloat ? encodeFloat(srcElem, a.floats[i]) : a.ints[i];
      if (toFloat)
        r->floats[i] = decodeFloat(resultElem, bits);
      else
        r->ints[i] = bits;
    }
  } else {
    return unsupported(op);
  }
  results.push_back(wrap(std::move(r)));
  return success();
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

LogicalResult OpEvaluator::math(Operation *op, ArrayRef<RuntimeValue> operands,
                                SmallVectorImpl<RuntimeValue> &results,
                                bool &handled) {
  StringRef name = op->getName().getStringRef();
  if (!name.starts_with("math."))
    return success();
  handled = true;
  if (op->getNumResults() != 1)
    return unsupported(op);
  for (const RuntimeValue &v : operands)
    if (v.kind != RuntimeValue::Kind::Data)
      return unsupported(op);
  Type resultElem = elementTypeOf(op->getResult(0).getType());
  if (isa<math::FmaOp>(op)) {
    const TensorData &a = *operands[0].data, &b = *operands[1].data,
                     &c = *operands[2].data;
    Elementwise e = elementwiseShape({&a, &b, &c});
    if (!e.ok)
      return fail(op, "operand shapes differ");
    DataPtr r = makeData(resultElem, e.shape);
    for (int64_t i = 0; i < e.n; ++i) {
      double x = a.floats[at(a, i)], y = b.floats[at(b, i)],
             z = c.floats[at(c, i)];
      r->floats[i] = floatOp(
          resultElem, [&] { return std::fma(float(x), float(y), float(z)); },
          [&] { return std::fma(x, y, z); });
    }
    results.push_back(wrap(std::move(r)));
    return success();
  }
  if (isa<math::AbsIOp, math::CountLeadingZerosOp, math::CountTrailingZerosOp,
          math::CtPopOp>(op)) {
    const TensorData &a = *operands[0].data;
    unsigned w = integerWidth(resultElem);
    DataPtr r = makeData(resultElem, a.shape);
    for (int64_t i = 0; i < a.numElements(); ++i) {
      uint64_t x = a.ints[i];
      uint64_t v = 0;
      if (isa<math::AbsIOp>(op)) {
        int64_t s = signExtend(x, w);
        v = static_cast<uint64_t>(s < 0 ? -s : s);
      } else if (isa<math::CtPopOp>(op)) {
        v = static_cast<uint64_t>(__builtin_popcountll(x));
      } else if (isa<math::CountLeadingZerosOp>(op)) {
        v = x ? static_cast<uint64_t>(__builtin_clzll(x)) - (64 - w) : w;
      } else {
        v = x ? static_cast<uint64_t>(__builtin_ctzll(x)) : w;
      }
      r->ints[i] = truncateToWidth(v, w);
    }
    results.push_back(wrap(std::move(r)));
    return success();
  }
  return unsupported(op);
}

//===----------------------------------------------------------------------===//
// tt
//===----------------------------------------------------------------------===//

LogicalResult OpEvaluator::dot(Operation *op, const TensorData &a,
                               const TensorData &b, const TensorData &c,
                               Type resultType, RuntimeValue &result) {
  size_t rank = a.shape.size();
  if ((rank != 2 && rank != 3) || b.shape.size() != rank ||
      c.shape.size() != rank)
    return fail(op, "operands must be matrices (or batches of them)");
  int64_t batch = rank == 3 ? a.shape[0] : 1;
  int64_t m = a.shape[rank - 2], k = a.shape[rank - 1], n = b.shape[rank - 1];
  if (b.shape[rank - 2] != k || c.shape[rank - 2] != m ||
      c.shape[rank - 1] != n ||
      (rank == 3 && (b.shape[0] != batch || c.shape[0] != batch)))
    return fail(op, "operand shapes do not form a matrix product");
  Type elem = elementTypeOf(resultType);
  DataPtr d = makeData(elem, c.shape);
  if (a.isFloat() != b.isFloat() || a.isFloat() != c.isFloat())
    return fail(op, "mixed integer and float operands");
  if (a.isFloat()) {
    // Float32 throughout: operands converted exactly (every input type is a
    // subset of f32 or is f32), one rounding per multiply and per add, k in
    // increasing order for every element.
    std::vector<float> fa(a.floats.begin(), a.floats.end());
    std::vector<float> fb(b.floats.begin(), b.floats.end());
    std::vector<float> acc(c.floats.begin(), c.floats.end());
    for (int64_t p = 0; p < batch; ++p) {
      const float *pa = fa.data() + p * m * k;
      const float *pb = fb.data() + p * k * n;
      float *pc = acc.data() + p * m * n;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t kk = 0; kk < k; ++kk) {
          float aik = pa[i * k + kk];
          const float *row = pb + kk * n;
          float *out = pc + i * n;
          for (int64_t j = 0; j < n; ++j)
            out[j] += aik * row[j];
        }
    }
    for (size_t i = 0; i < acc.size(); ++i)
      d->floats[i] = roundToFloatType(elem, acc[i]);
  } else {
    unsigned wa = integerWidth(a.elementType), wb = integerWidth(b.elementType);
    unsigned wc = integerWidth(elem);
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int64_t idx = (p * m + i) * n + j;
          uint64_t acc = c.ints[idx];
          for (int64_t kk = 0; kk < k; ++kk)
            acc += static_cast<uint64_t>(
                signExtend(a.ints[(p * m + i) * k + kk], wa) *
                signExtend(b.ints[(p * k + kk) * n + j], wb));
          d->ints[idx] = truncateToWidth(acc, wc);
        }
  }
  result = wrap(std::move(d));
  return success();
}

LogicalResult OpEvaluator::reduce(tt::ReduceOp op,
                                  ArrayRef<RuntimeValue> operands,
                                  SmallVectorImpl<RuntimeValue> &results) {
  size_t numSrcs = operands.size();
  const TensorData &first = *operands[0].data;
  int64_t rank = static_cast<int64_t>(first.shape.size());
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= rank)
    return fail(op, "axis out of range");
  for (const RuntimeValue &v : operands)
    if (v.data->shape != first.shape)
      return fail(op, "operand shapes differ");
  int64_t outer = product(ArrayRef<int64_t>(first.shape).take_front(axis));
  int64_t len = first.shape[axis];
  int64_t inner = product(ArrayRef<int64_t>(first.shape).drop_front(axis + 1));
  if (len == 0)
    return fail(op, "reduction over an empty axis");
  Block &body = op.getCombineOp().front();
  if (body.getNumArguments() != 2 * numSrcs)
    return fail(op, "combiner takes " + Twine(body.getNumArguments()) +
                        " arguments, not " + Twine(2 * numSrcs));

  // Slice j of each source as a flat vector over (outer, inner): the
  // combiner's operations are elementwise, so one run of the region
  // combines every position at once, folding j = 0, 1, ... left to right.
  auto slice = [&](const TensorData &src, int64_t j) {
    DataPtr s = makeData(src.elementType, {outer * inner});
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        copyElement(src, (o * len + j) * inner + i, *s, o * inner + i);
    return s;
  };
  std::vector<RuntimeValue> acc;
  for (const RuntimeValue &v : operands)
    acc.push_back(wrap(slice(*v.data, 0)));
  llvm::DenseMap<Value, RuntimeValue> env;
  for (int64_t j = 1; j < len; ++j) {
    for (size_t s = 0; s < numSrcs; ++s) {
      env[body.getArgument(s)] = acc[s];
      env[body.getArgument(numSrcs + s)] = wrap(slice(*operands[s].data, j));
    }
    for (Operation &inner : body) {
      if (isa<tt::ReduceReturnOp>(inner)) {
        if (inner.getNumOperands() != numSrcs)
          return fail(op, "combiner returns the wrong number of values");
        for (size_t s = 0; s < numSrcs; ++s)
          acc[s] = env.lookup(inner.getOperand(s));
        break;
      }
      if (inner.getNumRegions() != 0 ||
          !(isa<arith::ArithDialect, math::MathDialect>(inner.getDialect())))
        return fail(op, "combiner operation '" +
                            inner.getName().getStringRef() +
                            "' is not elementwise arithmetic");
      SmallVector<RuntimeValue, 3> args, outs;
      for (Value v : inner.getOperands()) {
        auto it = env.find(v);
        if (it == env.end())
          return fail(op, "combiner uses a value from outside its region");
        args.push_back(it->second);
      }
      if (failed(evaluate(&inner, args, outs)))
        return failure();
      for (auto [res, val] : llvm::zip(inner.getResults(), outs))
        env[res] = val;
    }
  }
  // Back to the result shape: the source shape without `axis`, or scalars.
  SmallVector<int64_t, 4> shape(first.shape.begin(), first.shape.end());
  shape.erase(shape.begin() + axis);
  for (size_t s = 0; s < numSrcs; ++s) {
    if (!acc[s].data)
      return fail(op, "combiner did not produce a value");
    auto reshaped = std::make_shared<TensorData>(*acc[s].data);
    reshaped->shape = shape;
    reshaped->elementType = elementTypeOf(op->getResult(s).getType());
    results.push_back(wrap(std::move(reshaped)));
  }
  return success();
}

LogicalResult OpEvaluator::load(tt::LoadOp op, ArrayRef<RuntimeValue> operands,
                                SmallVectorImpl<RuntimeValue> &results) {
  const TensorData &ptrs = *operands[0].data;
  const TensorData *mask = op.getMask() ? operands[1].data.get() : nullptr;
  const TensorData *other =
      op.getOther() ? operands[op.getMask() ? 2 : 1].data.get() : nullptr;
  Type elem = elementTypeOf(op.getType());
  for (const TensorData *d : {mask, other})
    if (d && d->numElements() != ptrs.numElements() && !d->shape.empty())
      return fail(op, "mask or other does not match the pointers' shape");
  DataPtr r = makeData(elem, ptrs.shape);
  unsigned bytes = elementBytes(elem);
  for (int64_t i = 0; i < ptrs.numElements(); ++i) {
    if (mask && !(mask->ints[at(*mask, i)] & 1)) {
      if (other)
        copyElement(*other, static_cast<int64_t>(at(*other, i)), *r, i);
      continue; // zero: Triton leaves it undefined; any fixed value will do
    }
    unsigned buffer;
    uint64_t offset;
    uint64_t address = ptrs.ints[i];
    if (!memory.locate(address, bytes, buffer, offset))
      return fail(op, "load of " + describeBadAddress(address, bytes));
    uint64_t bits = memory.loadBits(buffer, offset, bytes);
    if (r->isFloat())
      r->floats[i] = decodeFloat(elem, bits);
    else
      r->ints[i] = truncateToWidth(bits, integerWidth(elem));
  }
  results.push_back(wrap(std::move(r)));
  return success();
}

LogicalResult OpEvaluator::store(tt::StoreOp op,
                                 ArrayRef<RuntimeValue> operands) {
  const TensorData &ptrs = *operands[0].data;
  const TensorData &values = *operands[1].data;
  const TensorData *mask = op.getMask() ? operands[2].data.get() : nullptr;
  Type elem = values.elementType;
  for (const TensorData *d : {&values, mask})
    if (d && d->numElements() != ptrs.numElements() && !d->shape.empty())
      return fail(op, "value or mask does not match the pointers' shape");
  unsigned bytes = elementBytes(elem);
  for (int64_t i = 0; i < ptrs.numElements(); ++i) {
    if (mask && !(mask->ints[at(*mask, i)] & 1))
      continue;
    unsigned buffer;
    uint64_t offset;
    uint64_t address = ptrs.ints[i];
    if (!memory.locate(address, bytes, buffer, offset))
      return fail(op, "store to " + describeBadAddress(address, bytes));
    size_t j = at(values, i);
    uint64_t bits =
        values.isFloat() ? encodeFloat(elem, values.floats[j]) : values.ints[j];
    memory.storeBits(buffer, offset, bytes, bits);
  }
  return success();
}

namespace {
/// Walks the block of a descriptor access: `visit(local index, coords,
/// inBounds)` for every element, coords being global.
template <typename F>
void forEachBlockElement(const TensorDescriptor &desc, ArrayRef<int64_t> block,
                         ArrayRef<int64_t> origin, F visit) {
  size_t rank = block.size();
  int64_t n = product(block);
  SmallVector<int64_t, 4> local(rank, 0), global(rank);
  for (int64_t i = 0; i < n; ++i) {
    bool inBounds = true;
    for (size_t d = 0; d < rank; ++d) {
      global[d] = origin[d] + local[d];
      if (global[d] < 0 || global[d] >= desc.shape[d])
        inBounds = false;
    }
    visit(i, ArrayRef<int64_t>(global), inBounds);
    for (size_t d = rank; d-- > 0;) {
      if (++local[d] < block[d])
        break;
      local[d] = 0;
    }
  }
}
} // namespace

LogicalResult
OpEvaluator::descriptorLoad(tt::DescriptorLoadOp op,
                            ArrayRef<RuntimeValue> operands,
                            SmallVectorImpl<RuntimeValue> &results) {
  const RuntimeValue &descValue = operands[0];
  if (descValue.kind != RuntimeValue::Kind::Descriptor || !descValue.descriptor)
    return fail(op, "operand is not a tensor descriptor");
  const TensorDescriptor &desc = *descValue.descriptor;
  auto type = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> block = type.getShape();
  if (operands.size() - 1 != block.size() || desc.shape.size() != block.size())
    return fail(op, "coordinate count differs from the block rank");
  SmallVector<int64_t, 4> origin;
  for (const RuntimeValue &v : operands.drop_front())
    origin.push_back(signExtend(v.data->ints[0], 32));
  Type elem = type.getElementType();
  DataPtr r = makeData(elem, block);
  unsigned bytes = elementBytes(elem);
  double fill = desc.padWithNan ? std::numeric_limits<double>::quiet_NaN() : 0;
  LogicalResult status = success();
  forEachBlockElement(
      desc, block, origin, [&](int64_t i, ArrayRef<int64_t> g, bool inBounds) {
        if (failed(status))
          return;
        if (!inBounds) {
          // TMA: out-of-bounds elements read as zero (NaN).
          if (r->isFloat())
            r->floats[i] = fill;
          return;
        }
        uint64_t address = descriptorAddress(desc, g);
        unsigned buffer;
        uint64_t offset;
        if (!memory.locate(address, bytes, buffer, offset)) {
          status = fail(op, "in-bounds element of the "
                            "descriptor at " +
                                describeBadAddress(address, bytes));
          return;
        }
        uint64_t bits = memory.loadBits(buffer, offset, bytes);
        if (r->isFloat())
          r->floats[i] = decodeFloat(elem, bits);
        else
          r->ints[i] = truncateToWidth(bits, integerWidth(elem));
      });
  if (failed(status))
    return failure();
  results.push_back(wrap(std::move(r)));
  return success();
}

LogicalResult OpEvaluator::descriptorStore(tt::DescriptorStoreOp op,
                                           ArrayRef<RuntimeValue> operands) {
  const RuntimeValue &descValue = operands[0];
  if (descValue.kind != RuntimeValue::Kind::Descriptor || !descValue.descriptor)
    return fail(op, "operand is not a tensor descriptor");
  const TensorDescriptor &desc = *descValue.descriptor;
  const TensorData &values = *operands[1].data;
  ArrayRef<int64_t> block = values.shape;
  if (product(block) != values.numElements())
    return fail(op, "stored value has no shape");
  if (operands.size() - 2 != block.size() || desc.shape.size() != block.size())
    return fail(op, "coordinate count differs from the block rank");
  SmallVector<int64_t, 4> origin;
  for (const RuntimeValue &v : operands.drop_front(2))
    origin.push_back(signExtend(v.data->ints[0], 32));
  Type elem = values.elementType;
  unsigned bytes = elementBytes(elem);
  LogicalResult status = success();
  forEachBlockElement(
      desc, block, origin, [&](int64_t i, ArrayRef<int64_t> g, bool inBounds) {
        // TMA: a store drops the elements outside the tensor.
        if (failed(status) || !inBounds)
          return;
        uint64_t address = descriptorAddress(desc, g);
        unsigned buffer;
        uint64_t offset;
        if (!memory.locate(address, bytes, buffer, offset)) {
          status = fail(op, "in-bounds element of the descriptor at " +
                                describeBadAddress(address, bytes));
          return;
        }
        uint64_t bits = values.isFloat() ? encodeFloat(elem, values.floats[i])
                                         : values.ints[i];
        memory.storeBits(buffer, offset, bytes, bits);
      });
  return status;
}

LogicalResult OpEvaluator::triton(Operation *op,
                                  ArrayRef<RuntimeValue> operands,
                                  SmallVectorImpl<RuntimeValue> &results,
                                  bool &handled) {
  if (!isa<tt::TTDialect>(op->getDialect()))
    return success();
  handled = true;
  // Every operand is data (a scalar or a tensor), except the descriptor of
  // a descriptor load or store (checked there).
  unsigned firstData =
      isa<tt::DescriptorLoadOp, tt::DescriptorStoreOp>(op) ? 1 : 0;
  for (unsigned i = firstData; i < operands.size(); ++i)
    if (operands[i].kind != RuntimeValue::Kind::Data || !operands[i].data)
      return unsupported(op);
  auto data = [&](unsigned i) -> const TensorData & {
    return *operands[i].data;
  };
  auto resultShape = [&](unsigned i) {
    SmallVector<int64_t, 4> shape;
    if (auto t = dyn_cast<RankedTensorType>(op->getResult(i).getType()))
      shape.assign(t.getShape().begin(), t.getShape().end());
    return shape;
  };
  auto push = [&](DataPtr d) {
    results.push_back(wrap(std::move(d)));
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<tt::GetProgramIdOp, tt::GetNumProgramsOp>([&](Operation *) {
        int64_t axis = static_cast<int64_t>(
            isa<tt::GetProgramIdOp>(op)
                ? cast<tt::GetProgramIdOp>(op).getAxis()
                : cast<tt::GetNumProgramsOp>(op).getAxis());
        int64_t value;
        if (isa<tt::GetProgramIdOp>(op))
          value = axis == 0 ? pid.x : axis == 1 ? pid.y : pid.z;
        else
          value = axis == 0 ? grid.x : axis == 1 ? grid.y : grid.z;
        results.push_back(
            makeInt(op->getResult(0).getType(), static_cast<uint64_t>(value)));
        return success();
      })
      .Case<tt::MakeRangeOp>([&](tt::MakeRangeOp range) {
        DataPtr d = makeData(range.getType().getElementType(), resultShape(0));
        for (int64_t i = 0; i < d->numElements(); ++i)
          d->ints[i] = truncateToWidth(range.getStart() + i, 32);
        return push(std::move(d));
      })
      .Case<tt::SplatOp>([&](tt::SplatOp) {
        const TensorData &s = data(0);
        DataPtr d = makeData(s.elementType, resultShape(0));
        for (int64_t i = 0; i < d->numElements(); ++i)
          copyElement(s, 0, *d, i);
        return push(std::move(d));
      })
      .Case<tt::UnsplatOp>([&](tt::UnsplatOp) {
        if (data(0).numElements() != 1)
          return fail(op, "operand does not have exactly one element");
        DataPtr d = makeData(data(0).elementType, {});
        copyElement(data(0), 0, *d, 0);
        return push(std::move(d));
      })
      .Case<tt::BroadcastOp>([&](tt::BroadcastOp) {
        const TensorData &s = data(0);
        SmallVector<int64_t, 4> shape = resultShape(0);
        if (s.shape.size() != shape.size())
          return fail(op, "ranks differ");
        for (size_t k = 0; k < shape.size(); ++k)
          if (s.shape[k] != 1 && s.shape[k] != shape[k])
            return fail(op, "dimension " + Twine(k) + " of size " +
                                Twine(s.shape[k]) + " cannot broadcast to " +
                                Twine(shape[k]));
        DataPtr d = makeData(s.elementType, shape);
        SmallVector<int64_t, 4> srcStrides = stridesOf(s.shape);
        SmallVector<int64_t, 4> idx(shape.size(), 0);
        for (int64_t i = 0; i < d->numElements(); ++i) {
          int64_t from = 0;
          for (size_t k = 0; k < shape.size(); ++k)
            from += (s.shape[k] == 1 ? 0 : idx[k]) * srcStrides[k];
          copyElement(s, from, *d, i);
          for (size_t k = shape.size(); k-- > 0;) {
            if (++idx[k] < shape[k])
              break;
            idx[k] = 0;
          }
        }
        return push(std::move(d));
      })
      .Case<tt::ExpandDimsOp, tt::ReshapeOp>([&](Operation *) {
        auto d = std::make_shared<TensorData>(data(0));
        d->shape = resultShape(0);
        if (product(d->shape) != d->numElements())
          return fail(op, "element count changes");
        return push(std::move(d));
      })
      .Case<tt::TransOp>([&](tt::TransOp trans) {
        const TensorData &s = data(0);
        ArrayRef<int32_t> order = trans.getOrder();
        SmallVector<int64_t, 4> shape = resultShape(0);
        if (order.size() != s.shape.size() || shape.size() != s.shape.size())
          return fail(op, "order does not match the rank");
        SmallVector<bool, 4> seen(order.size(), false);
        for (size_t k = 0; k < order.size(); ++k) {
          if (order[k] < 0 || static_cast<size_t>(order[k]) >= order.size() ||
              seen[order[k]] || shape[k] != s.shape[order[k]])
            return fail(op, "order is not a permutation of the source shape");
          seen[order[k]] = true;
        }
        DataPtr d = makeData(s.elementType, shape);
        SmallVector<int64_t, 4> srcStrides = stridesOf(s.shape);
        SmallVector<int64_t, 4> idx(shape.size(), 0);
        for (int64_t i = 0; i < d->numElements(); ++i) {
          int64_t from = 0;
          for (size_t k = 0; k < shape.size(); ++k)
            from += idx[k] * srcStrides[order[k]];
          copyElement(s, from, *d, i);
          for (size_t k = shape.size(); k-- > 0;) {
            if (++idx[k] < shape[k])
              break;
            idx[k] = 0;
          }
        }
        return push(std::move(d));
      })
      .Case<tt::CatOp>([&](tt::CatOp) {
        auto d = std::make_shared<TensorData>(data(0));
        d->shape = resultShape(0);
        d->floats.insert(d->floats.end(), data(1).floats.begin(),
                         data(1).floats.end());
        d->ints.insert(d->ints.end(), data(1).ints.begin(), data(1).ints.end());
        if (product(d->shape) != d->numElements())
          return fail(op, "element count changes");
        return push(std::move(d));
      })
      .Case<tt::JoinOp>([&](tt::JoinOp) {
        const TensorData &l = data(0), &r = data(1);
        DataPtr d = makeData(l.elementType, resultShape(0));
        if (r.numElements() != l.numElements() ||
            d->numElements() != 2 * l.numElements())
          return fail(op, "element counts do not join");
        for (int64_t i = 0; i < l.numElements(); ++i) {
          copyElement(l, i, *d, 2 * i);
          copyElement(r, i, *d, 2 * i + 1);
        }
        return push(std::move(d));
      })
      .Case<tt::SplitOp>([&](tt::SplitOp) {
        const TensorData &s = data(0);
        if (2 * product(resultShape(0)) != s.numElements() ||
            resultShape(0) != resultShape(1))
          return fail(op, "element counts do not split");
        for (int part = 0; part < 2; ++part) {
          DataPtr d = makeData(s.elementType, resultShape(part));
          for (int64_t i = 0; i < d->numElements(); ++i)
            copyElement(s, 2 * i + part, *d, i);
          results.push_back(wrap(std::move(d)));
        }
        return success();
      })
      .Case<tt::DotOp>([&](tt::DotOp dotOp) {
        RuntimeValue r;
        if (failed(dot(op, data(0), data(1), data(2), dotOp.getType(), r)))
          return failure();
        results.push_back(std::move(r));
        return success();
      })
      .Case<tt::ReduceOp>([&](tt::ReduceOp reduceOp) {
        return reduce(reduceOp, operands, results);
      })
      .Case<tt::FpToFpOp>([&](tt::FpToFpOp conv) {
        const TensorData &s = data(0);
        Type to = elementTypeOf(conv.getType());
        bool towardZero =
            conv.getRounding() && *conv.getRounding() == tt::RoundingMode::RTZ;
        DataPtr d = makeData(to, s.shape);
        for (int64_t i = 0; i < s.numElements(); ++i)
          d->floats[i] = convertFloat(to, s.floats[i], towardZero);
        return push(std::move(d));
      })
      .Case<tt::AddPtrOp>([&](tt::AddPtrOp add) {
        const TensorData &p = data(0), &o = data(1);
        Elementwise e = elementwiseShape({&p, &o});
        if (!e.ok)
          return fail(op, "operand shapes differ");
        Type pointee = cast<tt::PointerType>(elementTypeOf(add.getType()))
                           .getPointeeType();
        unsigned w = integerWidth(o.elementType);
        int64_t scale =
            isSupportedElementType(pointee) ? elementBytes(pointee) : 1;
        DataPtr d = makeData(p.elementType, e.shape);
        for (int64_t i = 0; i < e.n; ++i)
          d->ints[i] =
              p.ints[at(p, i)] +
              static_cast<uint64_t>(signExtend(o.ints[at(o, i)], w) * scale);
        return push(std::move(d));
      })
      .Case<tt::IntToPtrOp, tt::PtrToIntOp>([&](Operation *) {
        auto d = std::make_shared<TensorData>(data(0));
        d->elementType = elementTypeOf(op->getResult(0).getType());
        return push(std::move(d));
      })
      .Case<tt::BitcastOp>([&](tt::BitcastOp) {
        const TensorData &s = data(0);
        Type to = elementTypeOf(op->getResult(0).getType());
        DataPtr d = makeData(to, s.shape);
        for (int64_t i = 0; i < s.numElements(); ++i) {
          uint64_t bits =
              s.isFloat() ? encodeFloat(s.elementType, s.floats[i]) : s.ints[i];
          if (d->isFloat())
            d->floats[i] = decodeFloat(to, bits);
          else
            d->ints[i] = truncateToWidth(bits, integerWidth(to));
        }
        return push(std::move(d));
      })
      .Case<tt::LoadOp>(
          [&](tt::LoadOp loadOp) { return load(loadOp, operands, results); })
      .Case<tt::StoreOp>(
          [&](tt::StoreOp storeOp) { return store(storeOp, operands); })
      .Case<tt::MakeTensorDescOp>([&](tt::MakeTensorDescOp make) {
        auto desc = std::make_shared<TensorDescriptor>();
        desc->base = data(0).ints[0];
        desc->block = make.getType().getBlockType();
        desc->elementType = desc->block.getElementType();
        size_t rank = make.getShape().size();
        for (size_t d = 0; d < rank; ++d)
          desc->shape.push_back(signExtend(data(1 + d).ints[0], 32));
        for (size_t d = 0; d < make.getStrides().size(); ++d)
          desc->strides.push_back(signExtend(data(1 + rank + d).ints[0], 64));
        if (desc->strides.size() != rank ||
            static_cast<size_t>(desc->block.getRank()) != rank)
          return fail(op, "shape, strides and block ranks differ");
        desc->padWithNan = make.getPadding() &&
                           *make.getPadding() == tt::PaddingOption::PAD_NAN;
        RuntimeValue r;
        r.kind = RuntimeValue::Kind::Descriptor;
        r.descriptor = std::move(desc);
        results.push_back(std::move(r));
        return success();
      })
      .Case<tt::DescriptorLoadOp>([&](tt::DescriptorLoadOp loadOp) {
        return descriptorLoad(loadOp, operands, results);
      })
      .Case<tt::DescriptorStoreOp>([&](tt::DescriptorStoreOp storeOp) {
        return descriptorStore(storeOp, operands);
      })
      .Default([&](Operation *) { return unsupported(op); });
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

RuntimeValue makeInt(Type type, uint64_t value) {
  auto d = std::make_shared<TensorData>();
  d->elementType = type;
  d->ints.push_back(truncateToWidth(value, integerWidth(type)));
  return RuntimeValue::of(std::move(d));
}

RuntimeValue makeFloat(Type type, double value) {
  auto d = std::make_shared<TensorData>();
  d->elementType = type;
  d->floats.push_back(roundToFloatType(type, value));
  return RuntimeValue::of(std::move(d));
}

} // namespace tawa::interp
