#pragma once
// Fixed-width integers and CUtensorMap for the device library, under nvcc and
// under NVRTC alike. NVRTC has no C++ standard library headers and cannot
// include cuda.h, so there the few names the library needs are declared
// here: the integer types of the LP64 data model, and CUtensorMap as
// cuda.h defines it (64 opaque, 64-byte aligned bytes, passed by value as a
// __grid_constant__ kernel parameter).

#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef unsigned long uintptr_t;
typedef unsigned long size_t;
typedef struct CUtensorMap_st {
  alignas(64) unsigned long long opaque[16];
} CUtensorMap;
#else
#include <cstdint>
#include <cuda.h>
#endif
