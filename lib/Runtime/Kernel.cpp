//===- Kernel.cpp - Loading and launching tawa kernels
//---------------------===//

#include "tawa/runtime/Kernel.h"
#include "tawa/runtime/Driver.h"
#include "tawa/runtime/Error.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace tawa::runtime {

KernelArg KernelArg::tensor(TensorDesc desc) {
  KernelArg a;
  a.kind_ = Kind::Tensor;
  a.tensor_ = std::move(desc);
  return a;
}

KernelArg KernelArg::integer(int64_t value) {
  KernelArg a;
  a.kind_ = Kind::Int;
  a.int_ = value;
  return a;
}

KernelArg KernelArg::floating(double value) {
  KernelArg a;
  a.kind_ = Kind::Float;
  a.float_ = value;
  return a;
}

static const char *argKindName(KernelArg::Kind k) {
  switch (k) {
  case KernelArg::Kind::Tensor:
    return "a tensor";
  case KernelArg::Kind::Int:
    return "an integer";
  case KernelArg::Kind::Float:
    return "a float";
  }
  return "?";
}

std::vector<std::optional<int64_t>>
checkKernelArgs(const KernelMetadata &md, const std::vector<KernelArg> &args) {
  size_t expected = 0;
  for (const ParamSpec &p : md.params)
    expected += p.passedByCaller();
  if (args.size() != expected)
    throw Error(md.kernel + ": expected " + std::to_string(expected) +
                " arguments, got " + std::to_string(args.size()));
  // Indexed by parameter; the runtime's own parameters have no value here.
  std::vector<std::optional<int64_t>> scalars(md.params.size());
  size_t argIndex = 0;
  for (size_t pi = 0; pi < md.params.size(); ++pi) {
    const ParamSpec &p = md.params[pi];
    if (!p.passedByCaller())
      continue;
    size_t i = argIndex++;
    const KernelArg &a = args[i];
    // Built only for a message: this runs on every launch.
    auto where = [&] {
      return md.kernel + ": argument " + std::to_string(i) + " '" + p.name +
             "' (" + paramKindName(p.kind) + ")";
    };
    KernelArg::Kind want = p.kind == ParamKind::TensorMap
                               ? KernelArg::Kind::Tensor
                           : p.kind == ParamKind::F32 ? KernelArg::Kind::Float
                                                      : KernelArg::Kind::Int;
    // An integer is accepted for an f32 parameter (the reverse would lose the
    // fraction silently), and a ptr takes a tensor's address or an integer.
    bool ok =
        a.kind() == want ||
        (want == KernelArg::Kind::Float && a.kind() == KernelArg::Kind::Int) ||
        (p.kind == ParamKind::Ptr && a.kind() == KernelArg::Kind::Tensor);
    if (!ok)
      throw Error(where() + ": got " + argKindName(a.kind()));
    if (p.kind == ParamKind::I32 &&
        (a.intValue() < std::numeric_limits<int32_t>::min() ||
         a.intValue() > std::numeric_limits<int32_t>::max()))
      throw Error(where() + ": value " + std::to_string(a.intValue()) +
                  " does not fit in 32 bits");
    if (p.kind == ParamKind::I32 || p.kind == ParamKind::I64)
      scalars[pi] = a.intValue();
  }
  return scalars;
}

struct Kernel::Impl {
  KernelMetadata md;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  unsigned smCount = 0;

  ~Impl() {
    if (!module || !Driver::available())
      return;
    // Unloading after the context is gone (process teardown) reports an
    // error that nobody can act on; ignore it.
    Driver::get().cuModuleUnload(module);
  }
};

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::Kernel(Kernel &&) noexcept = default;
Kernel &Kernel::operator=(Kernel &&) noexcept = default;
Kernel::~Kernel() = default;

const KernelMetadata &Kernel::metadata() const { return impl_->md; }
CUfunction Kernel::function() const { return impl_->function; }

Kernel Kernel::fromImage(KernelMetadata md, const std::vector<char> &image) {
  Driver &d = Driver::get();
  auto impl = std::make_unique<Impl>();
  impl->context = ensureContext();
  const std::string what = "kernel " + md.kernel;
  TAWA_CU_CHECK(d.cuModuleLoadData(&impl->module, image.data()), what);
  CUresult r =
      d.cuModuleGetFunction(&impl->function, impl->module, md.kernel.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    throw Error("cuModuleGetFunction failed: " + describeCuResult(r) +
                " [the CUBIN has no entry '" + md.kernel +
                "'; is it declared extern \"C\" __global__?]");
  checkCu(r, "cuModuleGetFunction", what);

  CUdevice dev;
  TAWA_CU_CHECK(d.cuCtxGetDevice(&dev), what);
  int sms = 0, optin = 0;
  TAWA_CU_CHECK(d.cuDeviceGetAttribute(
                    &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                what);
  TAWA_CU_CHECK(
      d.cuDeviceGetAttribute(
          &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
      what);
  impl->smCount = static_cast<unsigned>(sms);
  int staticSmem = 0;
  TAWA_CU_CHECK(d.cuFuncGetAttribute(&staticSmem,
                                     CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                     impl->function),
                what);
  if (static_cast<long>(staticSmem) + md.dynamicSmemBytes >
      static_cast<long>(optin))
    throw Error(what + ": " + std::to_string(staticSmem) + " B static + " +
                std::to_string(md.dynamicSmemBytes) +
                " B dynamic shared memory exceeds the device's per-block "
                "limit of " +
                std::to_string(optin) + " B");
  // Without raising this attribute every launch asking for more than 48 KiB
  // of dynamic shared memory fails with CUDA_ERROR_INVALID_VALUE.
  TAWA_CU_CHECK(
      d.cuFuncSetAttribute(impl->function,
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                           static_cast<int>(md.dynamicSmemBytes)),
      what + ", " + std::to_string(md.dynamicSmemBytes) + " B");
  int maxThreads = 0;
  TAWA_CU_CHECK(d.cuFuncGetAttribute(&maxThreads,
                                     CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                     impl->function),
                what);
  unsigned threads = md.block[0] * md.block[1] * md.block[2];
  if (threads > static_cast<unsigned>(maxThreads))
    throw Error(what + ": metadata asks for " + std::to_string(threads) +
                " threads per CTA but the compiled function allows at most " +
                std::to_string(maxThreads) +
                " (check __launch_bounds__ and register use)");
  trace("loaded " + md.kernel + " (" + std::to_string(image.size()) +
        " B image, " + std::to_string(sms) + " SMs)");
  impl->md = std::move(md);
  return Kernel(std::move(impl));
}

Kernel Kernel::load(const std::string &metadataPath,
                    const LoadOptions &options) {
  KernelMetadata md = loadMetadataFile(metadataPath);
  std::vector<char> image;
  if (!options.cubinOverride.empty() || !md.cubin.empty()) {
    std::string path = options.cubinOverride.empty() ? md.resolve(md.cubin)
                                                     : options.cubinOverride;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw Error("cannot open CUBIN '" + path + "' named by " + metadataPath);
    image.assign(std::istreambuf_iterator<char>(in),
                 std::istreambuf_iterator<char>());
    if (image.empty())
      throw Error("CUBIN '" + path + "' is empty");
  } else {
    std::string path = md.resolve(md.source);
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw Error("cannot open CUDA source '" + path + "' named by " +
                  metadataPath);
    std::ostringstream text;
    text << in.rdbuf();
    CompileOptions compile = options.compile;
    compile.extraOptions.insert(compile.extraOptions.end(),
                                md.nvrtcOptions.begin(), md.nvrtcOptions.end());
    image = compileCuda(text.str(), path, compile).cubin;
  }
  return fromImage(std::move(md), image);
}

LaunchDims Kernel::launchDims(const std::vector<KernelArg> &args,
                              const std::optional<ExplicitGrid> &grid) const {
  return computeLaunchDims(impl_->md, checkKernelArgs(impl_->md, args),
                           impl_->smCount, grid);
}

struct PreparedLaunch::Impl {
  std::string kernel;
  CUcontext context = nullptr;
  CUfunction function = nullptr;
  LaunchDims dims;
  // Parameter storage: params[] points into these, so Impl never moves (it
  // lives behind a unique_ptr) and the buffers never reallocate. Tensor maps
  // need 64-byte alignment; they live in a byte buffer aligned by hand
  // rather than in a std::vector<CUtensorMap>, so correctness does not hang
  // on the process's allocator honouring aligned operator new (a host
  // process such as Python may replace malloc).
  std::unique_ptr<unsigned char[]> mapBytes;
  CUtensorMap *maps = nullptr;
  size_t numMaps = 0;
  struct Scalar {
    int32_t i32;
    int64_t i64;
    float f32;
  };
  std::vector<Scalar> scalars;
  std::vector<void *> params;
  CUlaunchAttribute attrs[1];
  CUlaunchConfig config = {};

  /// The launch in words, for messages (built only when one is needed).
  std::string description() const {
    std::ostringstream ctx;
    ctx << kernel << ": grid (" << dims.grid[0] << ", " << dims.grid[1]
        << ", " << dims.grid[2] << "), block (" << dims.block[0] << ", "
        << dims.block[1] << ", " << dims.block[2] << "), cluster ("
        << dims.cluster[0] << ", " << dims.cluster[1] << ", "
        << dims.cluster[2] << "), " << dims.dynamicSmemBytes
        << " B dynamic shared memory";
    return ctx.str();
  }
};

PreparedLaunch::PreparedLaunch(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
PreparedLaunch::PreparedLaunch(PreparedLaunch &&) noexcept = default;
PreparedLaunch &PreparedLaunch::operator=(PreparedLaunch &&) noexcept = default;
PreparedLaunch::~PreparedLaunch() = default;

const LaunchDims &PreparedLaunch::dims() const { return impl_->dims; }

void PreparedLaunch::launch(CUstream stream) const {
  if (impl_->dims.empty())
    return;
  Driver &d = Driver::get();
  CUcontext current = nullptr;
  TAWA_CU_CHECK(d.cuCtxGetCurrent(&current), impl_->kernel);
  if (current != impl_->context)
    throw Error(impl_->kernel +
                ": launched from a thread whose current context "
                "is not the one the kernel was loaded into");
  // cuLaunchKernelEx reads the config; copy it so launch() stays const and
  // safe to call from several threads with different streams.
  CUlaunchConfig config = impl_->config;
  config.hStream = stream;
  if (traceEnabled()) {
    std::ostringstream os;
    os << "cuLaunchKernelEx " << impl_->description() << ", stream "
       << stream;
    trace(os.str());
  }
  CUresult r = d.cuLaunchKernelEx(&config, impl_->function,
                                 impl_->params.data(), nullptr);
  if (r != CUDA_SUCCESS)
    checkCu(r, "cuLaunchKernelEx", impl_->description());
  trace("cuLaunchKernelEx returned");
}

PreparedLaunch Kernel::prepare(const std::vector<KernelArg> &args,
                               const std::optional<ExplicitGrid> &grid) const {
  const KernelMetadata &md = impl_->md;
  auto plan = std::make_unique<PreparedLaunch::Impl>();
  plan->kernel = md.kernel;
  plan->context = impl_->context;
  plan->function = impl_->function;
  plan->dims = launchDims(args, grid);
  const LaunchDims &dims = plan->dims;
  size_t tensorParams = 0;
  for (const ParamSpec &p : md.params)
    tensorParams += p.kind == ParamKind::TensorMap;
  if (tensorParams) {
    plan->mapBytes.reset(
        new unsigned char[tensorParams * sizeof(CUtensorMap) + 64]);
    uintptr_t base = reinterpret_cast<uintptr_t>(plan->mapBytes.get());
    plan->maps = reinterpret_cast<CUtensorMap *>((base + 63) & ~uintptr_t(63));
  }
  plan->scalars.resize(md.params.size());
  plan->params.resize(md.params.size());
  size_t argIndex = 0;
  for (size_t pi = 0; pi < md.params.size(); ++pi) {
    const ParamSpec &p = md.params[pi];
    auto &sc = plan->scalars[pi];
    if (p.kind == ParamKind::NumPrograms) {
      sc.i32 = static_cast<int32_t>(dims.programs[p.axis]);
      plan->params[pi] = &sc.i32;
      continue;
    }
    size_t i = argIndex++;
    switch (p.kind) {
    case ParamKind::TensorMap: {
      TensorMapEncodeArgs enc =
          computeTensorMapArgs(p.tensor, args[i].tensorDesc(), p.name);
      if (traceEnabled()) {
        std::ostringstream os;
        os << "encoding tensor map '" << p.name << "' at 0x" << std::hex
           << enc.address;
        trace(os.str());
      }
      CUtensorMap map = encodeTensorMap(enc, p.name);
      CUtensorMap *slot = plan->maps + plan->numMaps++;
      std::memcpy(static_cast<void *>(slot), &map, sizeof(CUtensorMap));
      plan->params[pi] = slot;
      break;
    }
    case ParamKind::Ptr:
      sc.i64 = static_cast<int64_t>(args[i].kind() == KernelArg::Kind::Tensor
                                        ? args[i].tensorDesc().address
                                        : args[i].intValue());
      plan->params[pi] = &sc.i64;
      break;
    case ParamKind::I32:
      sc.i32 = static_cast<int32_t>(args[i].intValue());
      plan->params[pi] = &sc.i32;
      break;
    case ParamKind::I64:
      sc.i64 = args[i].intValue();
      plan->params[pi] = &sc.i64;
      break;
    case ParamKind::NumPrograms:
      break; // filled above
    case ParamKind::F32:
      sc.f32 = static_cast<float>(args[i].kind() == KernelArg::Kind::Int
                                      ? double(args[i].intValue())
                                      : args[i].floatValue());
      plan->params[pi] = &sc.f32;
      break;
    }
  }

  CUlaunchConfig &config = plan->config;
  config.gridDimX = dims.grid[0];
  config.gridDimY = dims.grid[1];
  config.gridDimZ = dims.grid[2];
  config.blockDimX = dims.block[0];
  config.blockDimY = dims.block[1];
  config.blockDimZ = dims.block[2];
  config.sharedMemBytes = dims.dynamicSmemBytes;
  if (dims.cluster[0] * dims.cluster[1] * dims.cluster[2] > 1) {
    plan->attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    plan->attrs[0].value.clusterDim.x = dims.cluster[0];
    plan->attrs[0].value.clusterDim.y = dims.cluster[1];
    plan->attrs[0].value.clusterDim.z = dims.cluster[2];
    config.attrs = plan->attrs;
    config.numAttrs = 1;
  }
  return PreparedLaunch(std::move(plan));
}

void Kernel::launch(const std::vector<KernelArg> &args, CUstream stream) const {
  prepare(args).launch(stream);
}

void Kernel::launch(const std::vector<KernelArg> &args,
                    const ExplicitGrid &grid, CUstream stream) const {
  prepare(args, grid).launch(stream);
}

} // namespace tawa::runtime
