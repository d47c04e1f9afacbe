/*===- tawa_compiler.h - C API of the tawa compiler ----------------*- C -*-===*
 *
 * A flat C interface over tawa::compile for ctypes (python/tawa/compiler.py)
 * and other languages, exported by libtawa_compiler.so. TTIR text and
 * options in; the warp-specialized IR, CUDA C++, PTX or CUBIN, the launch
 * metadata (docs/METADATA.md) and the diagnostics out. Diagnostics point at
 * the user's source lines as tawac reports them ("kernel.py:12:5: error:
 * ...").
 *
 * Functions that can fail return 0 on success and -1 on failure;
 * tawa_compiler_last_error() then gives the message (per thread, valid until
 * the next failing call on that thread). A failed compilation is not a
 * failure of tawa_compiler_compile: it returns a result whose `ok` is 0 and
 * whose diagnostics say why.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TAWA_DRIVER_TAWA_COMPILER_H
#define TAWA_DRIVER_TAWA_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TAWA_COMPILER_C_API_VERSION 1

/* How far a compilation goes; each stage includes the ones before it. */
enum {
  TAWA_STAGE_CHECK = 0,   /* verify and check the supported subset */
  TAWA_STAGE_WS_IR = 1,   /* warp-specialized IR */
  TAWA_STAGE_LOWERED = 2, /* arefs lowered, layouts assigned */
  TAWA_STAGE_CUDA = 3,    /* CUDA C++ and launch metadata */
  TAWA_STAGE_PTX = 4,     /* NVRTC: PTX */
  TAWA_STAGE_CUBIN = 5    /* NVRTC + ptxas: CUBIN and resource report */
};

enum { TAWA_SCHEDULE_HEURISTIC = 0, TAWA_SCHEDULE_OPTIMAL = 1 };

enum {
  TAWA_PAIR_AUTO = 0,
  TAWA_PAIR_OFF = 1,
  TAWA_PAIR_X = 2,
  TAWA_PAIR_Y = 3
};

/* The compiler's knobs, as tawac names them (tawac --help). Fill with
 * tawa_compiler_options_init, which sets every field to tawac's default. */
typedef struct tawa_compiler_options {
  int32_t stage;            /* TAWA_STAGE_* (default CUBIN) */
  int32_t aref_depth;       /* --aref-depth; 0: the compiler's choice */
  int32_t mma_depth;        /* --mma-depth; -1: the compiler's choice */
  int32_t consumer_groups;  /* --consumer-groups; 0: the compiler's choice */
  int32_t persistent;       /* --persistent: 1 or 0 */
  int32_t pingpong;         /* --pingpong: 1, 0, or -1 for the default */
  int32_t schedule;         /* --schedule: TAWA_SCHEDULE_* */
  int32_t pair_programs;    /* --pair-programs: TAWA_PAIR_* */
  int32_t tile_swizzle;     /* --tile-swizzle: 1 to 64 */
  int32_t epilogue_overlap; /* --epilogue-overlap: -1 (default) to 8 */
  int32_t cluster;          /* --cluster: 1 or 2 */
  int32_t want_ws_ir;       /* 1: also keep the warp-specialized IR text */
} tawa_compiler_options;

/* What a result holds. */
enum {
  TAWA_OUT_DIAGNOSTICS = 0, /* errors, warnings and notes, as text */
  TAWA_OUT_WS_IR = 1,       /* with want_ws_ir and stage >= WS_IR */
  TAWA_OUT_CUDA = 2,        /* stage >= CUDA */
  TAWA_OUT_METADATA = 3,    /* stage >= CUDA: tawa-kernel-metadata/1 JSON */
  TAWA_OUT_PTX = 4,         /* stage == PTX */
  TAWA_OUT_CUBIN = 5,       /* stage == CUBIN (binary) */
  TAWA_OUT_PTXAS_LOG = 6,   /* stage == CUBIN: ptxas -v */
  TAWA_OUT_IR = 7           /* stage <= LOWERED: the IR of that stage */
};

typedef struct tawa_compiler_result tawa_compiler_result;

int tawa_compiler_c_api_version(void);
const char *tawa_compiler_version(void);
const char *tawa_compiler_last_error(void);

void tawa_compiler_options_init(tawa_compiler_options *options);

/* Compiles `ttir` (`ttir_size` bytes, as Triton prints it; `buffer_name`
 * names it in diagnostics that point into the text itself, NULL for
 * "<ttir>"). The metadata names `cubin_name` as its CUBIN (NULL for
 * "kernel.cubin"). On return 0, *out is a result to free with
 * tawa_compiler_result_free, also when the compilation failed. */
int tawa_compiler_compile(const char *ttir, size_t ttir_size,
                          const char *buffer_name, const char *cubin_name,
                          const tawa_compiler_options *options,
                          tawa_compiler_result **out);

/* 1 if the compilation reached its stage, else 0. */
int tawa_compiler_result_ok(const tawa_compiler_result *result);

/* The bytes of one output (TAWA_OUT_*): a pointer valid until the result is
 * freed (NUL-terminated for convenience; CUBINs contain NULs, use *size),
 * or NULL with *size = 0 where the result has no such output. */
const char *tawa_compiler_result_output(const tawa_compiler_result *result,
                                        int which, size_t *size);

void tawa_compiler_result_free(tawa_compiler_result *result);

#ifdef __cplusplus
}
#endif

#endif /* TAWA_DRIVER_TAWA_COMPILER_H */
