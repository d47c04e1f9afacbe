//===- Pipeline.cpp - tawa's pass pipelines -------------------------------===//

#include "tawa/Transforms/Pipeline.h"
#include "tawa/Transforms/Passes.h"

#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace tawa {

void addSupportedSubsetCheck(OpPassManager &pm) {
  pm.addPass(createSupportedSubsetCheck());
}

void addWarpSpecializationPasses(OpPassManager &pm,
                                 const WarpSpecializationOptions &options) {
  LoopDistributionOptions distribution;
  distribution.arefDepth = options.arefDepth;
  distribution.consumerGroups = options.consumerGroups;
  distribution.pingpong = options.pingpong;
  MmaPipelineOptions pipeline;
  pipeline.mmaDepth = options.mmaDepth;
  OpPassManager &funcPm = pm.nest<tt::FuncOp>();
  if (options.tileSwizzle > 1) {
    TileSwizzleOptions swizzle;
    swizzle.groupRows = options.tileSwizzle;
    funcPm.addPass(createTileSwizzle(swizzle));
  }
  if (options.persistent && options.pairPrograms)
    funcPm.addPass(createProgramPairing());
  if (options.persistent)
    funcPm.addPass(createPersistentPrograms());
  funcPm.addPass(createPartitionAnnotation());
  if (options.schedule == WarpSpecializationOptions::Schedule::Optimal)
    funcPm.addPass(createOptimalSchedule());
  funcPm.addPass(createLoopDistribution(distribution));
  funcPm.addPass(createMmaPipeline(pipeline));
  funcPm.addPass(createPipelineExpansion());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void addLoweringPasses(OpPassManager &pm, int64_t cluster) {
  OpPassManager &funcPm = pm.nest<tt::FuncOp>();
  funcPm.addPass(createArefLowering());
  funcPm.addPass(createLayoutAssignment());
  if (cluster != 1) {
    ClusterMulticastOptions multicast;
    multicast.required = cluster == 2;
    funcPm.addPass(createClusterMulticast(multicast));
  }
}

} // namespace tawa
