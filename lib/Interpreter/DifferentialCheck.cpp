//===- DifferentialCheck.cpp - the compiled kernel against the original ---===//

#include "tawa/Interpreter/DifferentialCheck.h"

#include "tawa/Interpreter/Numerics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cstring>

using namespace mlir;

namespace tawa::interp {

tt::FuncOp findKernel(ModuleOp module, std::string &error) {
  tt::FuncOp kernel;
  unsigned count = 0;
  for (tt::FuncOp f : module.getOps<tt::FuncOp>())
    if (!f.isExternal()) {
      kernel = f;
      ++count;
    }
  if (count != 1) {
    error = "the module holds " + std::to_string(count) +
            " kernels (tt.func with a body); the interpreter runs exactly one";
    return nullptr;
  }
  return kernel;
}

DiagnosticCollector::DiagnosticCollector(MLIRContext *context)
    : context(context) {
  id = context->getDiagEngine().registerHandler([this](Diagnostic &diag) {
    auto add = [&](Diagnostic &d) {
      const char *severity =
          d.getSeverity() == DiagnosticSeverity::Error     ? "error"
          : d.getSeverity() == DiagnosticSeverity::Warning ? "warning"
          : d.getSeverity() == DiagnosticSeverity::Note    ? "note"
                                                           : "remark";
      text += formatLocation(d.getLocation()) + ": " + severity + ": " +
              d.str() + "\n";
    };
    add(diag);
    for (Diagnostic &note : diag.getNotes())
      add(note);
    return success();
  });
}

DiagnosticCollector::~DiagnosticCollector() {
  context->getDiagEngine().eraseHandler(id);
}

std::string DiagnosticCollector::take() { return std::move(text); }

LogicalResult checkSupportedSubset(ModuleOp module, std::string &diagnostics) {
  DiagnosticCollector collect(module.getContext());
  PassManager pm(module.getContext());
  addSupportedSubsetCheck(pm);
  LogicalResult result = pm.run(module);
  diagnostics = collect.take();
  return result;
}

FailureOr<OwningOpRef<ModuleOp>>
compileWarpSpecialized(ModuleOp original,
                       const WarpSpecializationOptions &options,
                       std::string &diagnostics) {
  OwningOpRef<ModuleOp> module(original.clone());
  DiagnosticCollector collect(original.getContext());
  PassManager pm(original.getContext());
  addSupportedSubsetCheck(pm);
  addWarpSpecializationPasses(pm, options);
  LogicalResult result = pm.run(*module);
  diagnostics = collect.take();
  if (failed(result))
    return failure();
  return module;
}

FailureOr<std::unique_ptr<DifferentialCheck>>
DifferentialCheck::create(ModuleOp module, const DifferentialOptions &options,
                          std::string &error) {
  std::unique_ptr<DifferentialCheck> check(new DifferentialCheck());
  check->options = options;
  check->original = findKernel(module, error);
  if (!check->original)
    return failure();
  FailureOr<KernelArguments> args = makeKernelArguments(
      check->original, options.shapes, options.dataSeed, error);
  if (failed(args))
    return failure();
  check->args = std::move(*args);
  if (options.grid) {
    check->theGrid = *options.grid;
    check->gridHow = "given";
  } else {
    FailureOr<Grid> grid =
        inferGrid(check->original, check->args, options.limits,
                  options.maxProgramsPerAxis, check->gridHow, error);
    if (failed(grid))
      return failure();
    check->theGrid = *grid;
  }
  if (failed(check->runOriginal(error)))
    return failure();
  return check;
}

LogicalResult DifferentialCheck::runOriginal(std::string &error) {
  // Program by program, in launch order (x fastest), noting which program
  // wrote each element: a compiled kernel may run the programs in another
  // order (a persistent one walks them CTA by CTA), which only gives the
  // same memory if no two programs write the same element.
  expected = args.memory;
  ExecutionOptions run;
  run.seed = options.seed;
  run.limits = options.limits;
  std::vector<std::vector<int64_t>> writer(expected.size());
  for (unsigned b = 0; b < expected.size(); ++b)
    writer[b].assign(expected.buffer(b).numElements(), -1);
  originalRun = ExecutionResult();
  for (int64_t z = 0; z < theGrid.z; ++z)
    for (int64_t y = 0; y < theGrid.y; ++y)
      for (int64_t x = 0; x < theGrid.x; ++x) {
        int64_t index = (z * theGrid.y + y) * theGrid.x + x;
        expected.clearWritten();
        ExecutionResult r = runProgram(
            original, args.values, ProgramId{x, y, z}, theGrid, expected, run);
        originalRun.steps += r.steps;
        ++originalRun.programs;
        if (!r.completed()) {
          error = "the original kernel failed: " + r.message;
          return failure();
        }
        for (unsigned b = 0; b < expected.size(); ++b) {
          const Buffer &buffer = expected.buffer(b);
          for (int64_t e = 0; e < buffer.numElements(); ++e) {
            if (!buffer.written[e])
              continue;
            int64_t other = writer[b][e];
            if (other >= 0 && other != index) {
              auto name = [&](int64_t i) {
                return "(" + std::to_string(i % theGrid.x) + ", " +
                       std::to_string(i / theGrid.x % theGrid.y) + ", " +
                       std::to_string(i / theGrid.x / theGrid.y) + ")";
              };
              error = "programs " + name(other) + " and " + name(index) +
                      " of the original kernel both write " +
                      buffer.elementName(e) +
                      ": over this grid and these shapes its result depends "
                      "on the order of the programs; choose a grid (--grid) "
                      "or shapes under which they write disjoint elements";
              return failure();
            }
            writer[b][e] = index;
          }
        }
      }
  for (unsigned b = 0; b < expected.size(); ++b)
    for (int64_t e = 0; e < expected.buffer(b).numElements(); ++e)
      expected.buffer(b).written[e] = writer[b][e] >= 0;
  return success();
}

std::vector<std::string> DifferentialCheck::outputs() const {
  std::vector<std::string> out;
  for (unsigned i = 0; i < expected.size(); ++i) {
    const Buffer &b = expected.buffer(i);
    int64_t written = 0;
    for (uint8_t w : b.written)
      written += w;
    if (written)
      out.push_back(b.name + " (" + std::to_string(written) + " of " +
                    std::to_string(b.numElements()) + " elements)");
  }
  return out;
}

namespace {
std::string formatElement(const Buffer &b, int64_t index) {
  unsigned bytes = elementBytes(b.elementType);
  uint64_t bits = 0;
  std::memcpy(&bits, b.bytes.data() + index * bytes, bytes);
  std::string s;
  llvm::raw_string_ostream os(s);
  if (isa<FloatType>(b.elementType))
    os << llvm::format("%.9g", decodeFloat(b.elementType, bits));
  else
    os << signExtend(bits, integerWidth(b.elementType));
  os << " (" << llvm::format_hex(bits, 2 + 2 * bytes) << ")";
  return s;
}
} // namespace

std::optional<std::string>
DifferentialCheck::compare(const GlobalMemory &actual,
                           int64_t &differences) const {
  std::optional<std::string> first;
  differences = 0;
  for (unsigned i = 0; i < expected.size(); ++i) {
    const Buffer &want = expected.buffer(i), &got = actual.buffer(i);
    unsigned bytes = elementBytes(want.elementType);
    for (int64_t e = 0; e < want.numElements(); ++e) {
      bool valueDiffers = std::memcmp(want.bytes.data() + e * bytes,
                                      got.bytes.data() + e * bytes, bytes) != 0;
      bool writeDiffers = want.written[e] != got.written[e];
      if (!valueDiffers && !writeDiffers)
        continue;
      ++differences;
      if (first)
        continue;
      if (valueDiffers)
        first = want.elementName(e) + ": original " + formatElement(want, e) +
                ", warp-specialized " + formatElement(got, e);
      else
        first = want.elementName(e) + " (" + formatElement(want, e) +
                ") is written by the " +
                (want.written[e] ? "original only" : "warp-specialized only");
    }
  }
  return first;
}

namespace {
/// The arguments and grid of `kernel`, compiled from `original`: the same,
/// or for a persistent kernel (PersistentPrograms) the program grid as
/// three more arguments and `ctas` CTAs walking it.
LogicalResult launchOf(tt::FuncOp kernel, tt::FuncOp original,
                       ArrayRef<RuntimeValue> originalArgs, Grid programs,
                       int64_t ctas, std::vector<RuntimeValue> &args,
                       Grid &grid, std::string &launch, std::string &error) {
  ArrayRef<Type> want = original.getArgumentTypes();
  ArrayRef<Type> have = kernel.getArgumentTypes();
  // A descriptor RowBlockWidening widened keeps the source's block on
  // record (tawa.source_block): the same tensor, accessed in larger blocks.
  auto sameArg = [&](unsigned i) {
    if (have[i] == want[i])
      return true;
    auto h = dyn_cast<tt::TensorDescType>(have[i]);
    auto w = dyn_cast<tt::TensorDescType>(want[i]);
    auto source =
        kernel.getArgAttrOfType<DenseI64ArrayAttr>(i, "tawa.source_block");
    return h && w && source &&
           source.asArrayRef() == w.getBlockType().getShape() &&
           h.getBlockType().getElementType() ==
               w.getBlockType().getElementType();
  };
  bool same = have.size() >= want.size();
  for (unsigned i = 0; same && i < want.size(); ++i)
    same = sameArg(i);
  if (!same || !kernel.getResultTypes().empty()) {
    error = "the compiled kernel's signature differs from the original's";
    return failure();
  }
  args.assign(originalArgs.begin(), originalArgs.end());
  grid = programs;
  if (have.size() == want.size())
    return success();
  for (unsigned i = want.size(); i < have.size(); ++i) {
    auto axis = kernel.getArgAttrOfType<IntegerAttr>(i, "tawa.num_programs");
    if (!axis || axis.getInt() < 0 || axis.getInt() > 2 ||
        !have[i].isInteger(32)) {
      error = "argument " + std::to_string(i) +
              " of the compiled kernel is not in the original and is not a "
              "program-grid argument (tawa.num_programs)";
      return failure();
    }
    int64_t extent = axis.getInt() == 0   ? programs.x
                     : axis.getInt() == 1 ? programs.y
                                          : programs.z;
    args.push_back(makeInt(have[i], static_cast<uint64_t>(extent)));
  }
  int64_t count = programs.count();
  int64_t n = ctas > 0 ? std::min(ctas, count) : (count + 1) / 2;
  grid = Grid{std::max<int64_t>(n, 1), 1, 1};
  launch = "persistent: " + std::to_string(grid.x) + " CTA" +
           (grid.x == 1 ? "" : "s") + " for " + std::to_string(count) +
           " program" + (count == 1 ? "" : "s");
  return success();
}
} // namespace

Verdict DifferentialCheck::check(ModuleOp compiled) {
  Verdict v;
  std::string error;
  tt::FuncOp kernel = findKernel(compiled, error);
  if (kernel && kernel.getName() != original.getName())
    error = "the compiled kernel is @" + kernel.getName().str() +
            ", the original @" + original.getName().str();
  std::vector<RuntimeValue> values;
  Grid grid;
  if (error.empty())
    (void)launchOf(kernel, original, args.values, theGrid, options.ctas, values,
                   grid, v.launch, error);
  if (!error.empty()) {
    v.status = Verdict::Status::Error;
    v.kind = "runtime-error";
    v.message = error;
    return v;
  }
  for (unsigned s = 0; s < options.schedules; ++s) {
    uint64_t seed = options.seed + s;
    GlobalMemory memory = args.memory;
    ExecutionOptions run;
    run.seed = seed;
    run.limits = options.limits;
    run.turnVariant = options.turnVariant;
    ExecutionResult r = runGrid(kernel, values, grid, memory, run);
    v.schedules = s + 1;
    v.seed = seed;
    v.cooperativeGroups = r.cooperativeGroups;
    v.issueTurns = r.issueTurns;
    if (!r.completed()) {
      bool protocol = r.outcome == Outcome::Deadlock ||
                      r.outcome == Outcome::ProtocolViolation;
      v.status = protocol ? Verdict::Status::Violation : Verdict::Status::Error;
      v.kind = r.kind;
      v.message = r.message;
      v.details = r.details;
      return v;
    }
    int64_t differences = 0;
    if (std::optional<std::string> first = compare(memory, differences)) {
      v.status = Verdict::Status::Mismatch;
      v.kind = "mismatch";
      v.message = *first;
      v.details.push_back(std::to_string(differences) +
                          " element(s) differ in all");
      return v;
    }
  }
  return v;
}

Verdict
DifferentialCheck::checkConfiguration(const WarpSpecializationOptions &config) {
  std::string diagnostics;
  FailureOr<OwningOpRef<ModuleOp>> compiled = compileWarpSpecialized(
      original->getParentOfType<ModuleOp>(), config, diagnostics);
  if (failed(compiled)) {
    Verdict v;
    v.status = Verdict::Status::Rejected;
    v.kind = "rejected";
    StringRef text(diagnostics);
    v.message = text.split('\n').first.str();
    SmallVector<StringRef> lines;
    text.trim().split(lines, '\n');
    for (StringRef line : llvm::drop_begin(lines))
      v.details.push_back(line.str());
    if (v.message.empty())
      v.message = "the pass pipeline failed without a diagnostic";
    return v;
  }
  return check(**compiled);
}

} // namespace tawa::interp
