//===- MockCuda.h - State recorded by the mock driver -----------*- C++ -*-===//
#pragma once

#include <cuda.h>

#include <cstdint>

struct MockEncode {
  int type = -1;
  unsigned rank = 0;
  uint64_t address = 0;
  uint64_t dim[5] = {}, stride[4] = {};
  unsigned box[5] = {}, elementStride[5] = {};
  int swizzle = -1, oob = -1;
};

struct MockLaunch {
  unsigned grid[3] = {}, block[3] = {}, cluster[3] = {};
  unsigned smem = 0, numAttrs = 0;
  CUstream stream = nullptr;
  bool hasExtra = false;
  void *paramAddr[8] = {};
  uint64_t paramWord[8] = {}; ///< first 8 bytes of each parameter
};

struct MockState {
  // Knobs the tests set.
  int smCount = 132;
  int maxThreads = 1024;
  int staticSmem = 0;
  int paramCount = 0; ///< how many parameters a launch should record
  bool switchContext = false;
  // What the runtime did.
  int maxDynamicSmem = -1;
  int modulesLoaded = 0, modulesUnloaded = 0;
  int numLaunches = 0, numEncodes = 0;
  MockLaunch launches[16];
  MockEncode encodes[16];
};

extern "C" MockState *tawa_mock_state();
