//===- CApi.cpp - C API of the tawa host runtime
//---------------------------===//

#include "tawa/runtime/Driver.h"
#include "tawa/runtime/Error.h"
#include "tawa/runtime/Kernel.h"
#include "tawa/runtime/tawa_runtime.h"

#include <cstring>
#include <string>

using namespace tawa::runtime;

struct tawa_kernel {
  Kernel kernel;
};

struct tawa_plan {
  PreparedLaunch plan;
};

namespace {

thread_local std::string lastError;

/// Runs `body`, turning any exception into -1 plus a stored message, since
/// exceptions must not cross the C boundary.
template <typename F> int guarded(F &&body) {
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    lastError = e.what();
  } catch (...) {
    lastError = "unknown C++ exception";
  }
  return -1;
}

std::vector<KernelArg> convertArgs(const tawa_arg *args, int nargs) {
  if (nargs < 0 || (nargs > 0 && !args))
    throw Error("invalid argument array");
  if (traceEnabled())
    for (int i = 0; i < nargs; ++i) {
      const tawa_arg &a = args[i];
      std::string s = "arg " + std::to_string(i) + ": kind " +
                      std::to_string(a.kind) + " dtype " +
                      std::to_string(a.dtype) + " rank " +
                      std::to_string(a.rank) + " ptr " + std::to_string(a.ptr) +
                      " i " + std::to_string(a.i);
      for (int d = 0; d < a.rank && d < 5; ++d)
        s += " [" + std::to_string(a.shape[d]) + ":" +
             std::to_string(a.strides[d]) + "]";
      trace(s);
    }
  std::vector<KernelArg> out;
  for (int i = 0; i < nargs; ++i) {
    const tawa_arg &a = args[i];
    switch (a.kind) {
    case TAWA_ARG_TENSOR: {
      if (a.rank < 1 || a.rank > 5)
        throw Error("argument " + std::to_string(i) + ": tensor rank " +
                    std::to_string(a.rank) + " outside 1..5");
      if (a.dtype < 0 || a.dtype > TAWA_DTYPE_I64)
        throw Error("argument " + std::to_string(i) + ": unknown dtype code " +
                    std::to_string(a.dtype));
      TensorDesc t;
      t.address = a.ptr;
      t.dtype = static_cast<DType>(a.dtype);
      t.shape.assign(a.shape, a.shape + a.rank);
      t.strides.assign(a.strides, a.strides + a.rank);
      out.push_back(KernelArg::tensor(std::move(t)));
      break;
    }
    case TAWA_ARG_INT:
      out.push_back(KernelArg::integer(a.i));
      break;
    case TAWA_ARG_FLOAT:
      out.push_back(KernelArg::floating(a.f));
      break;
    default:
      throw Error("argument " + std::to_string(i) + ": unknown kind " +
                  std::to_string(a.kind));
    }
  }
  return out;
}

void requireKernel(const tawa_kernel *k) {
  if (!k)
    throw Error("null tawa_kernel");
}

} // namespace

extern "C" {

int tawa_c_api_version(void) { return TAWA_C_API_VERSION; }

const char *tawa_runtime_version(void) { return runtimeVersion(); }

const char *tawa_last_error(void) { return lastError.c_str(); }

int tawa_driver_available(void) {
  std::string why;
  if (Driver::available(&why))
    return 1;
  lastError = why;
  return 0;
}

int tawa_device_sm_count(int *out) {
  return guarded([&] {
    if (!out)
      throw Error("null output pointer");
    *out = static_cast<int>(currentDeviceSmCount());
  });
}

int tawa_kernel_load(const char *metadata_path, const char *cubin_override,
                     tawa_kernel **out) {
  return guarded([&] {
    if (!metadata_path || !out)
      throw Error("tawa_kernel_load: null argument");
    LoadOptions options;
    if (cubin_override)
      options.cubinOverride = cubin_override;
    *out = new tawa_kernel{Kernel::load(metadata_path, options)};
  });
}

void tawa_kernel_free(tawa_kernel *kernel) { delete kernel; }

int tawa_kernel_num_params(const tawa_kernel *kernel) {
  if (!kernel) {
    lastError = "null tawa_kernel";
    return -1;
  }
  return static_cast<int>(kernel->kernel.metadata().params.size());
}

int tawa_kernel_launch_dims(const tawa_kernel *kernel, const tawa_arg *args,
                            int nargs, uint32_t grid[3], uint32_t block[3],
                            uint64_t *tiles) {
  return guarded([&] {
    requireKernel(kernel);
    LaunchDims d = kernel->kernel.launchDims(convertArgs(args, nargs));
    for (int i = 0; i < 3; ++i) {
      if (grid)
        grid[i] = d.grid[i];
      if (block)
        block[i] = d.block[i];
    }
    if (tiles)
      *tiles = d.tiles;
  });
}

int tawa_kernel_launch(const tawa_kernel *kernel, const tawa_arg *args,
                       int nargs, void *stream) {
  return guarded([&] {
    requireKernel(kernel);
    kernel->kernel.launch(convertArgs(args, nargs),
                          static_cast<CUstream>(stream));
  });
}

int tawa_kernel_launch_grid(const tawa_kernel *kernel, const tawa_arg *args,
                            int nargs, const uint32_t grid[3], void *stream) {
  return guarded([&] {
    requireKernel(kernel);
    if (!grid)
      throw Error("tawa_kernel_launch_grid: null grid");
    kernel->kernel.launch(convertArgs(args, nargs),
                          ExplicitGrid{grid[0], grid[1], grid[2]},
                          static_cast<CUstream>(stream));
  });
}

int tawa_kernel_prepare(const tawa_kernel *kernel, const tawa_arg *args,
                        int nargs, tawa_plan **out) {
  return guarded([&] {
    requireKernel(kernel);
    if (!out)
      throw Error("tawa_kernel_prepare: null output pointer");
    *out = new tawa_plan{kernel->kernel.prepare(convertArgs(args, nargs))};
  });
}

int tawa_kernel_prepare_grid(const tawa_kernel *kernel, const tawa_arg *args,
                             int nargs, const uint32_t grid[3],
                             tawa_plan **out) {
  return guarded([&] {
    requireKernel(kernel);
    if (!out || !grid)
      throw Error("tawa_kernel_prepare_grid: null argument");
    *out = new tawa_plan{kernel->kernel.prepare(
        convertArgs(args, nargs), ExplicitGrid{grid[0], grid[1], grid[2]})};
  });
}

int tawa_plan_launch(const tawa_plan *plan, void *stream) {
  return guarded([&] {
    if (!plan)
      throw Error("null tawa_plan");
    plan->plan.launch(static_cast<CUstream>(stream));
  });
}

void tawa_plan_free(tawa_plan *plan) { delete plan; }

int tawa_compile_cuda(const char *source, const char *name,
                      const char *const *options, char *path, size_t cap,
                      int *cache_hit) {
  return guarded([&] {
    if (!source || !name || !path)
      throw Error("tawa_compile_cuda: null argument");
    CompileOptions opts;
    for (const char *const *o = options; o && *o; ++o)
      opts.extraOptions.push_back(*o);
    CompileResult r = compileCuda(source, name, opts);
    if (r.cachePath.size() + 1 > cap)
      throw Error("tawa_compile_cuda: path buffer of " + std::to_string(cap) +
                  " bytes is too small for " + r.cachePath);
    std::memcpy(path, r.cachePath.c_str(), r.cachePath.size() + 1);
    if (cache_hit)
      *cache_hit = r.cacheHit ? 1 : 0;
  });
}

} // extern "C"
