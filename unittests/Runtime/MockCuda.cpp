//===- MockCuda.cpp - A recording stand-in for libcuda.so.1
//----------------===//
//
// Built as mockcuda/libcuda.so.1 and put first on LD_LIBRARY_PATH for
// TawaRuntimeMockDriverTests only, so the runtime's launch path (attributes,
// tensor-map encoding, launch configuration, parameter marshalling) can be
// checked on machines without a GPU. Functions are defined under cuda.h's
// names, so the versioning macros give them the exported names a real driver
// has (cuMemAlloc -> cuMemAlloc_v2). Nothing here executes kernels.
//
//===----------------------------------------------------------------------===//

#include "MockCuda.h"

#include <cstdlib>
#include <cstring>

namespace {
MockState state;
int ctxA, ctxB, moduleTag, functionTag;
CUcontext current = nullptr;
} // namespace

extern "C" {

MockState *tawa_mock_state() { return &state; }

CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *v) {
  *v = CUDA_VERSION;
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_NOT_FOUND       ? "CUDA_ERROR_NOT_FOUND"
       : r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
                                       : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult, const char **s) {
  *s = "mock driver";
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice) {
  if (a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    *v = state.smCount;
  else if (a == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    *v = 232448;
  else
    *v = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  std::strncpy(name, "mock", len);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(&ctxA);
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
  *c = state.switchContext ? reinterpret_cast<CUcontext>(&ctxB) : current;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  current = c;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice *d) {
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  if (std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return CUDA_ERROR_INVALID_IMAGE;
  *m = reinterpret_cast<CUmodule>(&moduleTag);
  ++state.modulesLoaded;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) {
  ++state.modulesUnloaded;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule, const char *name) {
  if (std::strcmp(name, "missing_kernel") == 0)
    return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(&functionTag);
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute a, int v) {
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    state.maxDynamicSmem = v;
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction) {
  if (a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    *v = state.maxThreads;
  else if (a == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    *v = state.staticSmem;
  else
    *v = 0;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction, void **params,
                          void **extra) {
  MockLaunch l;
  l.grid[0] = c->gridDimX;
  l.grid[1] = c->gridDimY;
  l.grid[2] = c->gridDimZ;
  l.block[0] = c->blockDimX;
  l.block[1] = c->blockDimY;
  l.block[2] = c->blockDimZ;
  l.smem = c->sharedMemBytes;
  l.stream = c->hStream;
  l.numAttrs = c->numAttrs;
  if (c->numAttrs > 0 &&
      c->attrs[0].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
    l.cluster[0] = c->attrs[0].value.clusterDim.x;
    l.cluster[1] = c->attrs[0].value.clusterDim.y;
    l.cluster[2] = c->attrs[0].value.clusterDim.z;
  }
  l.hasExtra = extra != nullptr;
  for (int i = 0; i < state.paramCount && i < 8; ++i) {
    l.paramAddr[i] = params[i];
    std::memcpy(&l.paramWord[i], params[i], 8);
  }
  state.launches[state.numLaunches++ % 16] = l;
  return CUDA_SUCCESS;
}
CUresult cuTensorMapEncodeTiled(CUtensorMap *m, CUtensorMapDataType type,
                                cuuint32_t rank, void *address,
                                const cuuint64_t *dim, const cuuint64_t *stride,
                                const cuuint32_t *box, const cuuint32_t *es,
                                CUtensorMapInterleave, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion,
                                CUtensorMapFloatOOBfill oob) {
  if (reinterpret_cast<uintptr_t>(m) % 64 != 0)
    return CUDA_ERROR_INVALID_VALUE; // the real driver's first rule
  MockEncode &e = state.encodes[state.numEncodes++ % 16];
  e.type = type;
  e.rank = rank;
  e.address = reinterpret_cast<uint64_t>(address);
  for (cuuint32_t i = 0; i < rank; ++i) {
    e.dim[i] = dim[i];
    e.box[i] = box[i];
    e.elementStride[i] = es[i];
    if (i + 1 < rank)
      e.stride[i] = stride[i];
  }
  e.swizzle = sw;
  e.oob = oob;
  // Tag the opaque map with the address so a test can tell which map a
  // kernel parameter points at.
  std::memset(m, 0, sizeof *m);
  m->opaque[0] = e.address;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
  *p = reinterpret_cast<CUdeviceptr>(
      std::aligned_alloc(256, (n + 255) / 256 * 256));
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  std::free(reinterpret_cast<void *>(p));
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) {
  std::memcpy(reinterpret_cast<void *>(d), s, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) {
  std::memcpy(d, reinterpret_cast<void *>(s), n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void *>(d), v, n);
  return CUDA_SUCCESS;
}

} // extern "C"
