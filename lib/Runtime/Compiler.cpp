//===- Compiler.cpp - NVRTC compilation with an on-disk cache
//--------------===//

#include "tawa/runtime/Compiler.h"
#include "tawa/runtime/Error.h"
#include "tawa/runtime/Hash.h"

#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#ifndef TAWA_RUNTIME_VERSION
#error "TAWA_RUNTIME_VERSION must be defined by the build"
#endif
#ifndef TAWA_DEFAULT_INCLUDE_DIR
#error "TAWA_DEFAULT_INCLUDE_DIR must be defined by the build"
#endif
#ifndef TAWA_CUDA_INCLUDE_DIR
#error "TAWA_CUDA_INCLUDE_DIR must be defined by the build"
#endif

namespace fs = std::filesystem;

namespace tawa::runtime {

namespace {

void checkNvrtc(nvrtcResult r, const char *call, const std::string &context) {
  if (r == NVRTC_SUCCESS)
    return;
  throw Error(std::string(call) + " failed: " + nvrtcGetErrorString(r) + " [" +
              context + "]");
}

std::string envOr(const char *name, const std::string &fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string cudaIncludeDir() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return std::string(home) + "/include";
  return TAWA_CUDA_INCLUDE_DIR;
}

bool readFile(const std::string &path, std::vector<char> &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out.assign(std::istreambuf_iterator<char>(in),
             std::istreambuf_iterator<char>());
  return static_cast<bool>(in) || in.eof();
}

/// A cached entry is used only if it looks like an ELF image; anything else
/// (say, a file damaged by a full disk) is recompiled and replaced.
bool looksLikeCubin(const std::vector<char> &image) {
  return image.size() > 4 && image[0] == 0x7f && image[1] == 'E' &&
         image[2] == 'L' && image[3] == 'F';
}

} // namespace

const char *runtimeVersion() { return TAWA_RUNTIME_VERSION; }

std::string defaultCacheDir() {
  if (const char *dir = std::getenv("TAWA_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tawa";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tawa";
  return "/tmp/tawa-cache";
}

std::string deviceIncludeDir() {
  return envOr("TAWA_INCLUDE_DIR", TAWA_DEFAULT_INCLUDE_DIR);
}

std::vector<std::string> nvrtcOptionList(const CompileOptions &options) {
  std::vector<std::string> list = {
      "--gpu-architecture=" + options.arch,
      "-std=c++17",
      "-I" + deviceIncludeDir(),
      "-I" + cudaIncludeDir(),
  };
  list.insert(list.end(), options.extraOptions.begin(),
              options.extraOptions.end());
  return list;
}

std::string compileCacheKey(std::string_view source, const std::string &name,
                            const std::vector<std::string> &optionList) {
  Sha256 h;
  h.updateField("tawa-nvrtc-cache/1");
  h.updateField(runtimeVersion());
  int major = 0, minor = 0;
  checkNvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion", "cache key");
  h.updateField(std::to_string(major) + "." + std::to_string(minor));
  h.updateField(name);
  h.updateField(std::to_string(optionList.size()));
  for (const std::string &o : optionList)
    h.updateField(o);
  h.updateField(source);
  // The device library is header-only and may change under an unchanged
  // kernel source, so its bytes are part of the key. Sorted for stability.
  fs::path deviceDir = fs::path(deviceIncludeDir()) / "tawa" / "device";
  std::vector<fs::path> headers;
  std::error_code ec;
  if (fs::is_directory(deviceDir, ec))
    for (const auto &entry : fs::recursive_directory_iterator(deviceDir, ec))
      if (entry.is_regular_file())
        headers.push_back(entry.path());
  std::sort(headers.begin(), headers.end());
  h.updateField(std::to_string(headers.size()));
  for (const fs::path &p : headers) {
    std::vector<char> bytes;
    if (!readFile(p.string(), bytes))
      throw Error("cache key: cannot read device header '" + p.string() + "'");
    h.updateField(fs::relative(p, deviceDir).string());
    h.updateField(std::string_view(bytes.data(), bytes.size()));
  }
  return h.hexDigest();
}

CompileResult compileCuda(std::string_view source, const std::string &name,
                          const CompileOptions &options) {
  CompileResult result;
  std::vector<std::string> optionList = nvrtcOptionList(options);
  result.key = compileCacheKey(source, name, optionList);
  std::string dir =
      options.cacheDir.empty() ? defaultCacheDir() : options.cacheDir;
  result.cachePath = dir + "/" + result.key + ".cubin";

  if (options.useCache && !options.emitPtx &&
      readFile(result.cachePath, result.cubin) &&
      looksLikeCubin(result.cubin)) {
    result.cacheHit = true;
    return result;
  }
  result.cubin.clear();

  nvrtcProgram prog;
  std::string sourceText(source);
  checkNvrtc(nvrtcCreateProgram(&prog, sourceText.c_str(), name.c_str(), 0,
                                nullptr, nullptr),
             "nvrtcCreateProgram", name);
  // Destroy the program on every path out of this scope.
  struct Guard {
    nvrtcProgram *p;
    ~Guard() { nvrtcDestroyProgram(p); }
  } guard{&prog};

  std::vector<const char *> argv;
  for (const std::string &o : optionList)
    argv.push_back(o.c_str());
  nvrtcResult compiled =
      nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t logSize = 0;
  checkNvrtc(nvrtcGetProgramLogSize(prog, &logSize), "nvrtcGetProgramLogSize",
             name);
  if (logSize > 1) {
    std::string log(logSize, '\0');
    checkNvrtc(nvrtcGetProgramLog(prog, log.data()), "nvrtcGetProgramLog",
               name);
    log.resize(logSize - 1);
    result.log = log;
  }
  if (compiled != NVRTC_SUCCESS) {
    std::string opts;
    for (const std::string &o : optionList)
      opts += " " + o;
    throw Error("nvrtcCompileProgram failed: " +
                std::string(nvrtcGetErrorString(compiled)) + " [" + name +
                ", options:" + opts + "]\n" + result.log);
  }
  if (options.emitPtx) {
    size_t ptxSize = 0;
    checkNvrtc(nvrtcGetPTXSize(prog, &ptxSize), "nvrtcGetPTXSize", name);
    result.ptx.assign(ptxSize, '\0');
    checkNvrtc(nvrtcGetPTX(prog, result.ptx.data()), "nvrtcGetPTX", name);
    if (!result.ptx.empty() && result.ptx.back() == '\0')
      result.ptx.pop_back();
    return result;
  }
  size_t cubinSize = 0;
  checkNvrtc(nvrtcGetCUBINSize(prog, &cubinSize), "nvrtcGetCUBINSize", name);
  if (cubinSize == 0)
    throw Error("nvrtcGetCUBINSize returned 0 for " + name + " (arch " +
                options.arch + " is virtual? use a real sm_ target)");
  result.cubin.resize(cubinSize);
  checkNvrtc(nvrtcGetCUBIN(prog, result.cubin.data()), "nvrtcGetCUBIN", name);

  if (options.useCache) {
    // Write to a private temporary name, then rename: concurrent processes
    // compiling the same kernel never observe a half-written entry.
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::string tmp = result.cachePath + ".tmp." + std::to_string(getpid());
    std::ofstream out(tmp, std::ios::binary);
    out.write(result.cubin.data(),
              static_cast<std::streamsize>(result.cubin.size()));
    out.close();
    if (!out || (fs::rename(tmp, result.cachePath, ec), ec)) {
      fs::remove(tmp, ec);
      result.log += (result.log.empty() ? "" : "\n") +
                    std::string("tawa: warning: could not write cache entry ") +
                    result.cachePath;
    }
  }
  return result;
}

bool tryCompileCuda(std::string_view source, const std::string &name,
                    const CompileOptions &options, CompileResult &result,
                    std::string &error) noexcept {
  try {
    result = compileCuda(source, name, options);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

} // namespace tawa::runtime
