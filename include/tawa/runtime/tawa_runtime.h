/*===- tawa_runtime.h - C API of the tawa host runtime -------------*- C -*-===*
 *
 * A flat C interface over tawa::runtime for ctypes (python/tawa/runtime.py)
 * and other languages. Functions return 0 on success and -1 on failure;
 * tawa_last_error() then gives the message (per thread, valid until the next
 * failing call on that thread).
 *
 *===----------------------------------------------------------------------===*/
#ifndef TAWA_RUNTIME_TAWA_RUNTIME_H
#define TAWA_RUNTIME_TAWA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TAWA_C_API_VERSION 1

/* Element types; the values equal tawa::runtime::DType. */
enum {
  TAWA_DTYPE_F16 = 0,
  TAWA_DTYPE_BF16 = 1,
  TAWA_DTYPE_F32 = 2,
  TAWA_DTYPE_E4M3 = 3,
  TAWA_DTYPE_E5M2 = 4,
  TAWA_DTYPE_I8 = 5,
  TAWA_DTYPE_I32 = 6,
  TAWA_DTYPE_I64 = 7
};

enum { TAWA_ARG_TENSOR = 0, TAWA_ARG_INT = 1, TAWA_ARG_FLOAT = 2 };

/* One launch argument. Tensors: device address, dtype, rank, shape and
 * strides in elements, outermost first. Integers use `i`, floats `f`. */
typedef struct tawa_arg {
  int32_t kind;
  int32_t dtype;
  int32_t rank;
  int32_t reserved;
  uint64_t ptr;
  int64_t shape[5];
  int64_t strides[5];
  int64_t i;
  double f;
} tawa_arg;

typedef struct tawa_kernel tawa_kernel;

int tawa_c_api_version(void);
const char *tawa_runtime_version(void);
const char *tawa_last_error(void);

/* 1 if the CUDA driver loads and initializes, else 0 (reason in
 * tawa_last_error()). */
int tawa_driver_available(void);

/* SM count of the device of the current (or primary) context. */
int tawa_device_sm_count(int *out);

/* Loads the metadata JSON and its CUBIN (or compiles its source with NVRTC);
 * `cubin_override` may be NULL. */
int tawa_kernel_load(const char *metadata_path, const char *cubin_override,
                     tawa_kernel **out);
void tawa_kernel_free(tawa_kernel *kernel);

int tawa_kernel_num_params(const tawa_kernel *kernel);
/* Grid and cluster the arguments would launch with; `tiles` may be NULL. */
int tawa_kernel_launch_dims(const tawa_kernel *kernel, const tawa_arg *args,
                            int nargs, uint32_t grid[3], uint32_t block[3],
                            uint64_t *tiles);
/* Asynchronous launch on `stream` (a CUstream; NULL for the legacy default). */
int tawa_kernel_launch(const tawa_kernel *kernel, const tawa_arg *args,
                       int nargs, void *stream);
/* Launch with a caller-chosen grid (x, y, z), which replaces the metadata's
 * formula; required for kernels whose metadata grid kind is "explicit". */
int tawa_kernel_launch_grid(const tawa_kernel *kernel, const tawa_arg *args,
                            int nargs, const uint32_t grid[3], void *stream);

/* A launch with validated arguments and encoded tensor maps, issued with
 * one driver call per tawa_plan_launch. It holds the tensors' addresses:
 * keep the tensors alive while the plan is used. */
typedef struct tawa_plan tawa_plan;
int tawa_kernel_prepare(const tawa_kernel *kernel, const tawa_arg *args,
                        int nargs, tawa_plan **out);
/* tawa_kernel_prepare with a caller-chosen grid (as tawa_kernel_launch_grid). */
int tawa_kernel_prepare_grid(const tawa_kernel *kernel, const tawa_arg *args,
                             int nargs, const uint32_t grid[3],
                             tawa_plan **out);
int tawa_plan_launch(const tawa_plan *plan, void *stream);
void tawa_plan_free(tawa_plan *plan);

/* Compiles CUDA source to an sm_90a CUBIN through the cache and writes the
 * cached CUBIN's path into `path` (capacity `cap`); `options` is a NULL-
 * terminated list (may be NULL); `cache_hit` (may be NULL) receives 1 on a hit.
 */
int tawa_compile_cuda(const char *source, const char *name,
                      const char *const *options, char *path, size_t cap,
                      int *cache_hit);

#ifdef __cplusplus
}
#endif

#endif /* TAWA_RUNTIME_TAWA_RUNTIME_H */
