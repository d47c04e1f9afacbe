//===- Pipeline.cpp - tawa's pass pipelines -------------------------------===//

#include "tawa/Transforms/Pipeline.h"
#include "tawa/Transforms/Passes.h"

#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace tawa {

void addSupportedSubsetCheck(OpPassManager &pm) {
  // tl.assume's hints, which no pass uses, go before the check.
  pm.addPass(createDropAssumptions());
  pm.addPass(createSupportedSubsetCheck());
}

void addProgramPasses(OpPassManager &pm,
                      const WarpSpecializationOptions &options) {
  OpPassManager &funcPm = pm.nest<tt::FuncOp>();
  // Tiles addressed by tensors of pointers become TMA loads first: every
  // later pass sees descriptors.
  funcPm.addPass(createPointerTileDescriptors());
  if (options.tileSwizzle > 1) {
    TileSwizzleOptions swizzle;
    swizzle.groupRows = options.tileSwizzle;
    funcPm.addPass(createTileSwizzle(swizzle));
  }
  // Before pairing and persistence: the widened kernel's program count
  // along x is what the persistent loop walks.
  if (options.persistent && options.widenRows &&
      (options.consumerGroups == 0 || options.consumerGroups == 3) &&
      options.pingpong != 1 &&
      options.pairPrograms == WarpSpecializationOptions::PairPrograms::Auto)
    funcPm.addPass(createRowBlockWidening());
  using Pair = WarpSpecializationOptions::PairPrograms;
  // Auto pairs for two cooperative consumer groups only: each then holds a
  // 64-row slice of both accumulators (128 registers), as for a 128 x 256
  // tile; forced ping-pong or one group would hold twice that. (64-row
  // tiles, paired, become ping-pong where the groups are the compiler's
  // choice: a pair's 64 x 256 accumulators are 128 registers.)
  bool autoFits = options.pingpong != 1 &&
                  (options.consumerGroups == 0 || options.consumerGroups == 2);
  if (options.persistent && options.pairPrograms != Pair::Off &&
      (options.pairPrograms != Pair::Auto || autoFits)) {
    ProgramPairingOptions pairing;
    pairing.arefDepth = options.arefDepth;
    pairing.axis = options.pairPrograms == Pair::X   ? "x"
                   : options.pairPrograms == Pair::Y ? "y"
                                                     : "auto";
    funcPm.addPass(createProgramPairing(pairing));
  }
  if (options.persistent) {
    PersistentProgramsOptions persistent;
    persistent.heavyFirst = options.heavyFirst;
    persistent.streamOrder = options.streamOrder;
    funcPm.addPass(createPersistentPrograms(persistent));
  }
  // After persistence: its heavy-first walk reads the unsplit loop bound.
  if (options.splitMaskedLoops) {
    MaskedLoopSplitOptions masked;
    masked.mode = options.maskedLoopMode;
    funcPm.addPass(createMaskedLoopSplit(masked));
  }
  if (options.scaledRowMax)
    funcPm.addPass(createScaledRowMax());
  funcPm.addPass(createPartitionAnnotation());
}

void addWarpSpecializationPasses(OpPassManager &pm,
                                 const WarpSpecializationOptions &options) {
  LoopDistributionOptions distribution;
  distribution.arefDepth = options.arefDepth;
  distribution.consumerGroups = options.consumerGroups;
  distribution.pingpong = options.pingpong;
  MmaPipelineOptions pipeline;
  pipeline.mmaDepth = options.mmaDepth;
  addProgramPasses(pm, options);
  OpPassManager &funcPm = pm.nest<tt::FuncOp>();
  if (options.schedule == WarpSpecializationOptions::Schedule::Optimal)
    funcPm.addPass(createOptimalSchedule());
  funcPm.addPass(createLoopDistribution(distribution));
  funcPm.addPass(createMmaPipeline(pipeline));
  if (options.coarsePipeline) {
    CoarsePipelineOptions coarse;
    coarse.issueTurns = options.issueTurns;
    funcPm.addPass(createCoarsePipeline(coarse));
  }
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
  funcPm.addPass(createBarrierArrivalCheck());
}

} // namespace tawa
