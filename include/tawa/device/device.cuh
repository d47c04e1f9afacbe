// The whole tawa device library; generated kernels include only this.
#pragma once
#include "tawa/device/cluster.cuh"
#include "tawa/device/fragment.cuh"
#include "tawa/device/math.cuh"
#include "tawa/device/mbarrier.cuh"
#include "tawa/device/mma.cuh"
#include "tawa/device/sync.cuh"
#include "tawa/device/tensormap.cuh"
#include "tawa/device/tma.cuh"
#include "tawa/device/transpose.cuh"
#include "tawa/device/wgmma.cuh"
