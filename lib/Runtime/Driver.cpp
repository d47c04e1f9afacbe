//===- Driver.cpp - Dynamically loaded CUDA driver API
//---------------------===//

#include "tawa/runtime/Driver.h"
#include "tawa/runtime/Error.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace tawa::runtime {

namespace {

struct LoadState {
  std::once_flag once;
  bool ok = false;
  std::string error;
};

LoadState &loadState() {
  static LoadState state;
  return state;
}

/// Set once the entry points are resolved (before cuInit, so that a cuInit
/// failure can already be named by the driver).
Driver *&loadedDriver() {
  static Driver *driver = nullptr;
  return driver;
}

/// Well-known names and descriptions for the codes a missing or failing
/// driver produces, so messages stay informative when libcuda itself is
/// unavailable to translate them.
const char *fallbackName(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE:
    return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_NOT_FOUND:
    return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub libcuda was loaded, "
           "not a real driver)";
  default:
    return nullptr;
  }
}

} // namespace

bool traceEnabled() {
  static const bool enabled = [] {
    const char *v = std::getenv("TAWA_RUNTIME_TRACE");
    return v && *v && std::string(v) != "0";
  }();
  return enabled;
}

void trace(const std::string &message) {
  if (!traceEnabled())
    return;
  std::fprintf(stderr, "tawa-runtime: %s\n", message.c_str());
  std::fflush(stderr);
}

std::string describeCuResult(CUresult r) {
  const char *name = nullptr;
  const char *text = nullptr;
  // Only consult the driver once it loaded; this function must not recurse
  // into Driver::get() while reporting a load failure.
  if (Driver *dp = loadedDriver()) {
    Driver &d = *dp;
    if (d.cuGetErrorName(r, &name) != CUDA_SUCCESS)
      name = nullptr;
    if (d.cuGetErrorString(r, &text) != CUDA_SUCCESS)
      text = nullptr;
  }
  if (!name)
    name = fallbackName(r);
  std::string s = name ? name : "CUresult " + std::to_string(int(r));
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

void checkCu(CUresult result, const char *call, const std::string &context) {
  if (result == CUDA_SUCCESS)
    return;
  // TAWA_CU_CHECK passes the whole call expression ("d.cuFoo(&x, y)"); the
  // message names just the API function.
  std::string name = call;
  name = name.substr(0, name.find('('));
  if (size_t dot = name.find_last_of(".>"); dot != std::string::npos)
    name = name.substr(dot + 1);
  std::string msg = name + " failed: " + describeCuResult(result);
  if (!context.empty())
    msg += " [" + context + "]";
  throw Error(msg);
}

void Driver::load() {
  // libcuda.so.1 is the driver's soname; the unversioned name exists only
  // where the toolkit's stub or a -dev package put it.
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw Error(std::string("cannot load the CUDA driver libcuda.so.1 (is an "
                            "NVIDIA driver installed?): ") +
                dlerror());
  // Resolve each entry point by the symbol name cuda.h's versioning macros
  // give it (cuMemAlloc -> cuMemAlloc_v2, cuCtxGetDevice stays v1): that is
  // exactly the ABI of the prototype we call through. cuGetProcAddress with
  // our CUDA_VERSION would instead return the newest ABI of that version,
  // which for cuCtxGetDevice and cuCtxSynchronize in 13.0 takes an extra
  // CUcontext argument (a crash seen on the H100 on 2026-11-22).
  auto resolve = [&](const char *symbol, void **slot) {
    *slot = dlsym(handle, symbol);
    if (!*slot)
      throw Error(std::string("libcuda.so.1 has no symbol ") + symbol +
                  "; the driver is older than the CUDA " +
                  std::to_string(CUDA_VERSION / 1000) + "." +
                  std::to_string(CUDA_VERSION % 1000 / 10) +
                  " headers this runtime was built with");
  };
#define TAWA_STRINGIFY_EXPANDED(x) TAWA_STRINGIFY(x)
#define TAWA_STRINGIFY(x) #x
#define TAWA_DRIVER_FN(name)                                                   \
  resolve(TAWA_STRINGIFY_EXPANDED(name), reinterpret_cast<void **>(&name));
#include "tawa/runtime/DriverFunctions.def"
#undef TAWA_DRIVER_FN
}

Driver &Driver::get() {
  LoadState &st = loadState();
  std::call_once(st.once, [&] {
    static Driver driver;
    try {
      driver.load();
    } catch (const Error &e) {
      st.error = e.what();
      return;
    }
    loadedDriver() = &driver;
    trace("libcuda.so.1 loaded, entry points resolved");
    CUresult r = driver.cuInit(0);
    if (r != CUDA_SUCCESS) {
      st.error = "cuInit(0) failed: " + describeCuResult(r);
      return;
    }
    st.ok = true;
  });
  if (!st.ok)
    throw Error(st.error);
  return *loadedDriver();
}

bool Driver::available(std::string *why) {
  try {
    get();
    return true;
  } catch (const Error &e) {
    if (why)
      *why = e.what();
    return false;
  }
}

CUcontext ensureContext() {
  Driver &d = Driver::get();
  CUcontext ctx = nullptr;
  TAWA_CU_CHECK(d.cuCtxGetCurrent(&ctx), "looking for a current context");
  if (ctx)
    return ctx;
  trace("no current context: retaining the primary context");
  int ordinal = 0;
  if (const char *env = std::getenv("TAWA_DEVICE"))
    ordinal = std::atoi(env);
  int count = 0;
  TAWA_CU_CHECK(d.cuDeviceGetCount(&count), "counting devices");
  if (ordinal < 0 || ordinal >= count)
    throw Error("TAWA_DEVICE=" + std::to_string(ordinal) +
                " but the driver sees " + std::to_string(count) + " device(s)");
  CUdevice dev;
  TAWA_CU_CHECK(d.cuDeviceGet(&dev, ordinal),
                "device " + std::to_string(ordinal));
  // The primary context is the one the CUDA runtime (and so PyTorch) uses,
  // so tensors allocated there are valid in our launches and vice versa.
  TAWA_CU_CHECK(d.cuDevicePrimaryCtxRetain(&ctx, dev),
                "device " + std::to_string(ordinal));
  TAWA_CU_CHECK(d.cuCtxSetCurrent(ctx), "primary context");
  return ctx;
}

unsigned currentDeviceSmCount() {
  Driver &d = Driver::get();
  ensureContext();
  CUdevice dev;
  TAWA_CU_CHECK(d.cuCtxGetDevice(&dev), "device of the current context");
  int sms = 0;
  TAWA_CU_CHECK(d.cuDeviceGetAttribute(
                    &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                "multiprocessor count");
  return static_cast<unsigned>(sms);
}

} // namespace tawa::runtime
