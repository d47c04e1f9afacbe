//===- Driver.h - Dynamically loaded CUDA driver API ------------*- C++ -*-===//
//
// libcuda is opened with dlopen rather than linked, so that the runtime and
// its unit tests load on machines that have the CUDA toolkit but no driver;
// only calls that need the GPU fail there, with a message saying why.
// Entry points are looked up by the symbol names cuda.h's versioning macros
// produce, so each pointer matches the prototype it is called through.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda.h>

#include <string>

namespace tawa::runtime {

class Driver {
public:
  /// The process-wide driver table; throws Error if libcuda cannot be loaded
  /// or cuInit fails.
  static Driver &get();
  /// Whether get() would succeed; `why` receives the reason when not.
  static bool available(std::string *why = nullptr);

  // Members are named after the API so call sites read like plain driver
  // code; cuda.h's versioning macros rename member and call alike.
#define TAWA_DRIVER_FN(name) decltype(&::name) name = nullptr;
#include "tawa/runtime/DriverFunctions.def"
#undef TAWA_DRIVER_FN

private:
  Driver() = default;
  void load();
};

/// Throws Error("<call> failed: <NAME> (<description>) [<context>]") unless
/// `result` is CUDA_SUCCESS.
void checkCu(CUresult result, const char *call, const std::string &context);

/// "CUDA_ERROR_X (text)" for a result code, usable without a driver.
std::string describeCuResult(CUresult result);

/// Makes a context current on this thread: keeps one that is already current
/// (e.g. PyTorch's), otherwise retains the primary context of device
/// $TAWA_DEVICE (default 0). Returns the current context.
CUcontext ensureContext();

/// Multiprocessor count of the device of the current context.
unsigned currentDeviceSmCount();

/// With TAWA_RUNTIME_TRACE=1, prints "tawa-runtime: <message>" to stderr and
/// flushes, so a crash inside a driver call can be located from the log.
bool traceEnabled();
void trace(const std::string &message);

} // namespace tawa::runtime

#define TAWA_CU_CHECK(call, context)                                           \
  ::tawa::runtime::checkCu((call), #call, (context))
