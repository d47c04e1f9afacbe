//===- CudaEmitter.cpp - CUDA C++ emission of warp-specialized IR --------===//
//
// The kernel: parameters, the shared-memory plan, the partitions, the
// source around the translated body, and the launch metadata. The
// emitter's other parts are listed in Emitter.h.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "tawa/Transforms/Partition.h"

using namespace mlir;

namespace tawa {
namespace cuda {

//===----------------------------------------------------------------------===//
// Partitions
//===----------------------------------------------------------------------===//

void Emitter::emitSetMaxNReg(StringRef direction, int32_t regs) {
  // A task runs inside a kernel whose register budget is the kernel's
  // (CudaEmitOptions::megaTask): it leaves the registers as they are.
  if (options.megaTask)
    line() << "// setmaxnreg" << direction << "<" << regs
           << ">: not in a mega-kernel task\n";
  else
    line() << "setmaxnreg" << direction << "<" << regs << ">();\n";
}

LogicalResult Emitter::emitWarpSpecialize(WarpSpecializeOp op) {
  if (region != Region::Top)
    return error(op) << "nested warp_specialize";
  ArrayRef<int32_t> warps = op.getWarps(), regs = op.getRegs();
  // One 4-warp producer, then either one consumer partition of 1 or 2 warp
  // groups (cooperative: they split each tile's rows) or, ping-pong, two
  // consumer partitions of one warp group each (each on its own tiles).
  bool pingpong = op->hasAttr("tawa.pingpong");
  bool shapeOk = warps.size() >= 2 && warps[0] == 4;
  for (int32_t w : warps.drop_front())
    shapeOk &= w % 4 == 0 && w >= 4;
  if (pingpong)
    shapeOk &= warps.size() == 3 && warps[1] == 4 && warps[2] == 4;
  else
    shapeOk &= warps.size() == 2 && warps[1] <= 12;
  if (!shapeOk)
    return error(op) << "supported: one 4-warp producer and either one "
                        "consumer partition of 1 to 3 warp groups or two "
                        "ping-pong partitions of one warp group each";
  groups = pingpong ? 1 : warps[1] / 4;
  if (!pingpong)
    planDeferredEpilogue(op);

  op.getPartitions()[0].walk([&](SmemTransposeOp) { producerAllWarps = true; });
  if (producerAllWarps && !deviceMaps.empty())
    return error(op) << "a kernel that builds tensor maps on the device "
                        "cannot also store tiles transposed";
  line() << "if (warpGroupIndex() == 0) {\n";
  ++indent;
  if (producerAllWarps) {
    line() << "// Producer: warp 0's elected lane issues expect_tx and TMA "
              "(warp 0 waits\n";
    line() << "// for free slots); warps 1.. wait for staged tiles, "
              "transpose them into\n";
    line() << "// their ring slots and publish them. All walk the same "
              "loops.\n";
    emitSetMaxNReg("Dec", regs[0]);
    line() << "constexpr int kProducerWarps = " << warps[0] << ";\n";
    line() << "{\n";
    ++indent;
    line() << "const bool leader = warpInGroup() == 0 && electOne();\n";
  } else {
    line() << "// Producer: warp 0 runs the producer program, its elected "
              "lane issues\n";
    line() << "// expect_tx and TMA; the other warps only hand their "
              "registers over.\n";
    emitSetMaxNReg("Dec", regs[0]);
    line() << "if (warpInGroup() == 0) {\n";
    ++indent;
    line() << "const bool leader = electOne();\n";
  }
  line() << "(void)leader;\n";
  region = Region::Producer;
  for (auto &[v, fb] : fillParity) {
    line() << "int32_t " << fb.name << "[" << fb.depth
           << "]; // parity of each slot's last fill, -1: none\n";
    line() << "for (int s = 0; s < " << fb.depth << "; ++s)\n";
    line() << "  " << fb.name << "[s] = -1;\n";
  }
  if (failed(emitBlock(op.getPartitions()[0].front())))
    return failure();
  --indent;
  line() << "}\n";
  --indent;
  line() << "} else {\n";
  ++indent;
  region = Region::Consumer;
  emitSetMaxNReg("Inc", regs[1]);
  line() << "// wg: this consumer warp group (its epilogue buffers, named "
            "barrier and\n";
  line() << "// tensor-map slots); cg: its place among the groups that split "
            "a tile, which\n";
  line() << "// owns rows [64 F cg, 64 F (cg + 1)) of every accumulator.\n";
  line() << "const int wg = warpGroupIndex() - 1;\n";
  line() << "const int tid = threadIdx.x % kWarpGroupThreads;\n";
  line() << "const bool laneZero = threadIdx.x % 32 == 0;\n";
  line() << "uint32_t epiBox = 0; // epilogue boxes staged so far\n";
  line() << "(void)wg; (void)tid; (void)laneZero; (void)epiBox;\n";
  if (pingpong) {
    if (failed(emitPingPongConsumers(op)))
      return failure();
  }
  for (unsigned p = 1; !pingpong && p < warps.size(); ++p) {
    line() << "{\n";
    ++indent;
    line() << "const int cg = wg;\n";
    line() << "(void)cg;\n";
    if (deferredEpi) {
      line() << "// Deferred epilogue: the last " << deferredEpi->deferred
             << " boxes of each fragment of a tile's store, packed, stored "
                "during the next tile's first products.\n";
      for (unsigned seg = 0; seg < deferredEpi->segmentDescs.size(); ++seg) {
        std::string x = pendSuffix(seg);
        line() << "uint32_t pendC" << x << "[" << deferredEpi->frags << "]["
               << deferredEpi->deferred * 16 << "];\n";
        line() << "int32_t pendRow" << x << " = 0, pendCol" << x << " = 0;\n";
        line() << "uint32_t pendBoxes" << x << " = 0; // boxes of pendC" << x
               << " not stored yet\n";
      }
    }
    // Cooperative groups that take turns issuing products, round robin: the
    // last group passes the first turn to group 0, and group 0 takes the
    // turn the last group passes after its last products, so no named
    // barrier is left half-arrived.
    issueTurns = !pingpong && groups >= 2 &&
                 op.getPartitions()[p]
                     .walk([](DotAsyncOp dot) {
                       return dot->hasAttr(kIssueTurnAttr)
                                  ? WalkResult::interrupt()
                                  : WalkResult::advance();
                     })
                     .wasInterrupted();
    if (issueTurns)
      line() << "if (cg == " << groups - 1 << ")\n"
             << std::string(2 * indent, ' ')
             << "  namedBarrierArrive(kIssueTurnBarrier + 0, 2 * "
                "kWarpGroupThreads);\n";
    if (failed(emitBlock(op.getPartitions()[p].front())))
      return failure();
    if (issueTurns)
      line() << "if (cg == 0)\n"
             << std::string(2 * indent, ' ')
             << "  namedBarrierSync(kIssueTurnBarrier + 0, 2 * "
                "kWarpGroupThreads);\n";
    if (deferredEpi)
      emitDeferredFlush(/*all=*/true);
    --indent;
  }
  if (!pingpong)
    line() << "}\n";
  line() << "// Global writes of the last stores must land before the CTA "
            "retires.\n";
  line() << "if (tid == 0)\n";
  line() << "  tmaStoreWait<0>();\n";
  --indent;
  line() << "}\n";
  region = Region::Top;
  return success();
}

LogicalResult Emitter::emitPingPongConsumers(WarpSpecializeOp op) {
  // Each consumer's program is emitted with its turns indexed by the
  // run-time `wg` and its names counted from the same start; where the two
  // texts are the same (they differ only in their turn ops' groups, as
  // loop distribution makes them), the kernel keeps one copy, which halves
  // what NVRTC and ptxas compile.
  sharedPingPong = true;
  SmallVector<std::string, 2> programs;
  int firstName = counter, lastName = counter;
  ++indent;
  for (unsigned p = 1; p < 3; ++p) {
    size_t start = bodyStorage.size();
    counter = firstName;
    line() << "const int cg = 0;\n";
    line() << "(void)cg;\n";
    if (failed(emitBlock(op.getPartitions()[p].front())))
      return failure();
    lastName = std::max(lastName, counter);
    programs.push_back(bodyStorage.substr(start));
    bodyStorage.resize(start);
  }
  --indent;
  counter = lastName;
  sharedPingPong = false;
  if (programs[0] == programs[1]) {
    line() << "{ // ping-pong consumers 0 and 1 (wg): one program, each on "
              "its own tiles\n";
    body << programs[0];
  } else {
    for (unsigned g = 0; g < 2; ++g) {
      line() << (g == 0 ? "if" : "} else if") << " (wg == " << g
             << ") { // ping-pong consumer " << g << ": its own tiles\n";
      body << programs[g];
    }
  }
  line() << "}\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emit(KernelMetadata &md) {
  Block &entry = func.getBody().front();
  std::string kernelName = func.getSymName().str();

  // Parameters, named after the user's arguments where Triton kept them.
  llvm::StringSet<> used;
  struct Param : KernelParam {
    std::string ctype;
  };
  SmallVector<Param> params;
  WarpSpecializeOp ws;
  for (Operation &op : entry)
    if (auto w = dyn_cast<WarpSpecializeOp>(op))
      ws = w;
  if (!ws)
    return error(func) << "no warp_specialize op: run the ws-ir pipeline "
                          "with -tawa-aref-lowering -tawa-layout-assignment";
  if (auto c = ws->getAttrOfType<IntegerAttr>("tawa.cluster")) {
    clusterSize = c.getInt();
    if (clusterSize != 2)
      return error(ws) << "only clusters of 2 CTAs are supported";
    if (ws->hasAttr("tawa.pingpong"))
      return error(ws) << "clusters with ping-pong consumers are not "
                          "supported";
  }
  for (BlockArgument arg : entry.getArguments()) {
    std::string base = "arg" + std::to_string(arg.getArgNumber());
    if (auto nameLoc = dyn_cast<NameLoc>(arg.getLoc()))
      if (isIdentifier(nameLoc.getName().strref()))
        base = nameLoc.getName().str();
    std::string name = base;
    for (int i = 1; used.contains(name); ++i)
      name = base + "_" + std::to_string(i);
    used.insert(name);
    names[arg] = name;
    Param p;
    p.name = name;
    if (auto desc = dyn_cast<tt::TensorDescType>(arg.getType())) {
      RankedTensorType block = desc.getBlockType();
      auto en = elemNames(block.getElementType());
      if (block.getRank() != 2 || !en)
        return error(arg.getLoc())
               << "only rank-2 f16/bf16/e4m3 tensor descriptors are supported";
      p.kind = "tensormap";
      p.dtype = en->second.str();
      p.block.assign(block.getShape().begin(), block.getShape().end());
      // A store through tawa.clip_rows is a store of this map.
      auto isStore = [](Operation *u) {
        if (auto clip = dyn_cast<ClipRowsOp>(u))
          return !clip->use_empty() &&
                 llvm::all_of(clip->getUsers(), [](Operation *v) {
                   return isa<tt::DescriptorStoreOp>(v);
                 });
        return isa<tt::DescriptorStoreOp>(u);
      };
      bool stored = llvm::any_of(arg.getUsers(), isStore);
      bool loaded = llvm::any_of(arg.getUsers(),
                                 [&](Operation *u) { return !isStore(u); });
      // The block the caller's grid is computed with: the source's where
      // -tawa-row-block-widening widened it.
      if (auto source = func.getArgAttrOfType<DenseI64ArrayAttr>(
              arg.getArgNumber(), "tawa.source_block"))
        p.block.assign(source.asArrayRef().begin(), source.asArrayRef().end());
      // One tensor map has one box: the store's 64 x 64 or the load's tile.
      if (stored && loaded)
        return error(arg.getLoc()) << "a descriptor both loaded and stored "
                                      "is not supported";
      // Loads move the tile as tileSwizzle lays it out, one box per span
      // (emitOp, TmaLoadOp); stores move 64-row x 64-column boxes (one
      // fragment's slice each, staged as 64 rows of 64 columns). Rows that
      // no swizzle covers are reported at the load.
      int64_t eb = elemBytes(block.getElementType());
      int64_t rows = stored ? 64 : block.getShape()[0];
      int64_t cols =
          stored ? storeBoxCols(block.getShape()[1]) : block.getShape()[1];
      std::optional<SmemSwizzle> swizzle = tileSwizzle(cols * eb);
      p.box = {rows, swizzle ? swizzle->spanBytes / eb : cols};
      p.swizzle = swizzle ? swizzle->metadataName() : "none";
      // Checked again at the store, at its line, for a clear message.
      if (stored && !storableTile(block))
        return error(*llvm::find_if(arg.getUsers(), isStore))
               << "stored tiles must be a multiple of 64 columns, or 32, 16 "
                  "or 8 columns of a 16-bit type";
      // Loads split between the CTAs of a cluster move half-height boxes.
      if (llvm::any_of(arg.getUsers(), [](Operation *u) {
            auto load = dyn_cast<TmaLoadOp>(u);
            return load && load.getMulticast();
          }))
        p.box[0] /= 2;
      descParams.push_back({arg, name});
      p.ctype = options.megaTask ? "const CUtensorMap *"
                                 : "const __grid_constant__ CUtensorMap";
    } else if (auto axis = func.getArgAttrOfType<IntegerAttr>(
                   arg.getArgNumber(), "tawa.num_programs")) {
      // The program grid of a persistent kernel (-tawa-persistent-programs),
      // filled by the runtime from the caller's grid.
      p.kind = "num_programs";
      p.axis = axis.getInt();
      p.ctype = "int32_t";
      programsGrid = true;
    } else if (auto ptr = dyn_cast<tt::PointerType>(arg.getType())) {
      FailureOr<std::string> ctype = scalarType(ptr, arg.getLoc());
      if (failed(ctype))
        return failure();
      p.kind = "ptr";
      p.ctype = *ctype;
    } else if (arg.getType().isInteger(32) || arg.getType().isInteger(64)) {
      p.kind = arg.getType().isInteger(32) ? "i32" : "i64";
      p.ctype = arg.getType().isInteger(32) ? "int32_t" : "int64_t";
    } else if (arg.getType().isF32()) {
      p.kind = "f32";
      p.ctype = "float";
    } else {
      return error(arg.getLoc())
             << "unsupported kernel argument type " << arg.getType();
    }
    params.push_back(p);
  }

  // A task is one program run by the calling CTA: nothing of it may
  // outlive the program or reach beyond the CTA.
  if (options.megaTask) {
    if (clusterSize > 1)
      return error(ws) << "a mega-kernel task runs on one CTA: 2-CTA "
                          "clusters are not supported in it";
    if (programsGrid)
      return error(func) << "a mega-kernel task is one program: a "
                            "persistent walk of the program grid is not "
                            "supported in it";
  }

  // Shared memory: rings first (each 1024-aligned: a whole swizzle pattern
  // of any span, 8 rows of up to 128 bytes), epilogue boxes, then the
  // mbarriers.
  // The B tiles of fused products go slot by slot side by side, so that
  // the two read as one tile of twice the rows.
  findFusedProducts();
  int64_t offset = 0;
  SmallVector<std::string> layout;
  auto ringBytes = [](Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t bytes = elemBytes(type.getElementType());
    for (int64_t d : type.getShape())
      bytes *= d;
    return std::make_pair(bytes, bytes / type.getShape()[0]);
  };
  auto placeRing = [&](Value buffer, int64_t at, int64_t stride) {
    int64_t slotBytes = ringBytes(buffer).second;
    std::string name = fresh("ring");
    rings[buffer] = {name, at, slotBytes, stride};
    std::string apart =
        stride != slotBytes
            ? llvm::formatv(", slots {0} bytes apart", stride).str()
            : std::string();
    layout.push_back(llvm::formatv("uint8_t *{0} = smem + {1}; // {2}{3}", name,
                                   at, buffer.getType(), apart)
                         .str());
  };
  for (Operation &op : entry) {
    auto alloc = dyn_cast<SmemAllocOp>(op);
    if (!alloc || rings.count(alloc.getResult()))
      continue; // not a ring, or the second of a side-by-side pair
    auto [bytes, slotBytes] = ringBytes(alloc.getResult());
    offset = llvm::alignTo(offset, 1024);
    auto partner = ringPartner.find(alloc.getResult());
    if (partner == ringPartner.end()) {
      placeRing(alloc.getResult(), offset, slotBytes);
      offset += bytes;
      continue;
    }
    placeRing(alloc.getResult(), offset, 2 * slotBytes);
    placeRing(partner->second, offset + slotBytes, 2 * slotBytes);
    offset += 2 * bytes;
  }
  // Consumer warp groups of all consumer partitions (ping-pong: 2 of 1).
  int64_t totalGroups = 0;
  for (int32_t w : ws.getWarps().drop_front())
    totalGroups += w / 4;
  groups = ws.getWarps().size() == 2 ? ws.getWarps()[1] / 4 : 1;
  // Device-side tensor descriptors: one global slot per SM and creating
  // warp (the producer's, or one per consumer group).
  bool producerMaps = false;
  WalkResult mapWalk = ws.walk([&](tt::MakeTensorDescOp make) {
    bool inProducer = ws.getPartitions()[0].isAncestor(make->getParentRegion());
    RankedTensorType block =
        cast<tt::TensorDescType>(make.getType()).getBlockType();
    Type elem = block.getElementType();
    DeviceMap m;
    m.slot = deviceMapSlots;
    deviceMapSlots += inProducer ? 1 : totalGroups;
    producerMaps |= inProducer;
    m.elem = elem.isF16()                  ? "F16"
             : elem.isBF16()               ? "BF16"
             : elem.isF32()                ? "F32"
             : isa<Float8E4M3FNType>(elem) ? "U8"
                                           : "";
    bool stored = false, loaded = false;
    for (Operation *u : make->getUsers()) {
      stored |= isa<tt::DescriptorStoreOp>(u);
      loaded |= !isa<tt::DescriptorStoreOp>(u);
    }
    if (m.elem.empty() || block.getRank() != 2 || (stored && loaded)) {
      error(make) << "supported device-side descriptors: rank 2, f16, bf16, "
                     "f32 or e4m3, either loaded or stored";
      return WalkResult::interrupt();
    }
    // The boxes of the host maps (above): a store's 64 x 64, a load's
    // tile in spans of its swizzle; rows no swizzle covers are reported at
    // the load.
    int64_t eb = elemBytes(elem);
    int64_t storeCols = storeBoxCols(block.getShape()[1]);
    std::optional<SmemSwizzle> swizzle =
        tileSwizzle(stored ? storeCols * eb : block.getShape()[1] * eb);
    if (stored)
      m.box = {64, storeCols};
    else if (swizzle)
      m.box = {block.getShape()[0], swizzle->spanBytes / eb};
    else
      m.box = {block.getShape()[0], block.getShape()[1]};
    if (swizzle)
      m.spanBytes = swizzle->spanBytes;
    deviceMaps[make] = m;
    return WalkResult::advance();
  });
  if (mapWalk.wasInterrupted())
    return failure();
  if (producerMaps)
    ws.getPartitions()[0].walk([&](TmaLoadOp load) {
      if (!fillParity.count(load.getBars()))
        fillParity[load.getBars()] = {
            fresh("fills"),
            cast<MBarriersType>(load.getBars().getType()).getCount()};
    });
  bool stores = false;
  ws.walk([&](tt::DescriptorStoreOp) { stores = true; });
  offset = llvm::alignTo(offset, 1024);
  int64_t epiOffset = offset;
  // What follows the staging boxes (1024-aligned, so no padding before the
  // tensor-map staging): tensor-map staging, mbarriers, ping-pong
  // hand-overs, and the 1024 bytes of slack for aligning the base.
  int64_t tailBytes = 1024 + (deviceMapSlots ? 128 * (1 + totalGroups) : 0) +
                      (ws->hasAttr("tawa.pingpong") ? 16 : 0);
  for (Operation &op : entry)
    if (auto alloc = dyn_cast<MBarrierAllocOp>(op))
      tailBytes += 8 * alloc.getType().getCount();
  // Two staging boxes per group let a box be written while the previous
  // one's TMA store still reads; where that second box does not fit (a ring
  // that LoopDistribution deepened by one slot instead: an epilogue operand
  // such as D = alpha A B + beta C's tile of C), one box, each store's reads
  // waited for before the next box is written.
  epiBuffers = 2;
  if (stores && offset + totalGroups * 2 * kEpiBoxBytes + tailBytes > 232448 &&
      offset + totalGroups * kEpiBoxBytes + tailBytes <= 232448)
    epiBuffers = 1;
  if (stores)
    offset += totalGroups * epiBuffers * kEpiBoxBytes;
  layout.push_back(llvm::formatv("uint8_t *epi = smem + {0}; // {1} x 64x64 "
                                 "staging boxes per consumer group",
                                 epiOffset, epiBuffers)
                       .str());
  if (deviceMapSlots) {
    offset = llvm::alignTo(offset, 128);
    layout.push_back(llvm::formatv("uint8_t *descStaging = smem + {0}; // "
                                   "tensor maps built by the producer warp "
                                   "and each consumer group",
                                   offset)
                         .str());
    offset += 128 * (1 + totalGroups);
  }
  SmallVector<std::string> inits;
  for (Operation &op : entry) {
    if (auto alloc = dyn_cast<MBarrierAllocOp>(op)) {
      int64_t count = alloc.getType().getCount();
      std::string name = fresh("bars");
      bars[alloc.getResult()] = {name, count, alloc.getArrivals()};
      barrierArrays.push_back({name, count});
      layout.push_back(llvm::formatv("MBarrier *{0} = reinterpret_cast<"
                                     "MBarrier *>(smem + {1});",
                                     name, offset)
                           .str());
      inits.push_back(llvm::formatv("for (int s = 0; s < {0}; ++s)\n      "
                                    "mbarrierInit(&{1}[s], {2});",
                                    count, name, alloc.getArrivals())
                          .str());
      offset += 8 * count;
    }
  }
  if (ws->hasAttr("tawa.pingpong")) {
    layout.push_back(llvm::formatv("MBarrier *pingpongOrder = reinterpret_cast<"
                                   "MBarrier *>(smem + {0}); // hand-overs to "
                                   "ping-pong consumer 0, 1",
                                   offset)
                         .str());
    inits.push_back("for (int s = 0; s < 2; ++s)\n      "
                    "mbarrierInit(&pingpongOrder[s], 1);");
    barrierArrays.push_back({"pingpongOrder", 2});
    offset += 16;
  }
  int64_t smemBytes = offset + 1024;
  // Device-built tensor maps live in per-SM slots: the CTA must have its SM
  // to itself, which asking for more than half of its shared memory ensures.
  if (deviceMapSlots)
    smemBytes = std::max<int64_t>(smemBytes, kExclusiveSmemBytes);
  if (options.megaTask && deviceMapSlots)
    return error(ws) << "a mega-kernel task cannot build tensor maps on the "
                        "device (they live in per-SM slots of a CTA that "
                        "has its SM to itself)";
  if (smemBytes > 232448)
    return error(ws) << "needs " << smemBytes
                     << " bytes of shared memory; Hopper has 232448";

  if (failed(emitBlock(entry)))
    return failure();
  int64_t threads = 128 * (1 + totalGroups);

  // Source.
  if (options.megaTask) {
    SmallVector<std::string> declared;
    for (const Param &p : params)
      declared.push_back(p.ctype + " " + p.name);
    emitTaskSource(kernelName, declared, layout, inits, smemBytes, threads);
  } else {
    os << "// Generated by tawac --emit=cuda from kernel " << kernelName
       << ". Do not edit.\n";
    os << "#include \"tawa/device/device.cuh\"\n\n";
    os << "using namespace tawa::device;\n\n";
    os << "namespace {\n";
    emitHelpers();
    os << "} // namespace\n\n";
    if (deviceMapSlots) {
      os << "// Tensor maps built by the kernel (tt.make_tensor_descriptor): "
            "one slot per SM\n// and creating warp; each CTA has its SM to "
            "itself (see its shared memory).\n";
      os << "constexpr int kTawaMaxSms = 256;\n";
      os << "__device__ __align__(128) CUtensorMap tawaTensorMaps[kTawaMaxSms]["
         << deviceMapSlots << "];\n\n";
    }
    os << "extern \"C\" __global__ void __launch_bounds__(" << threads
       << ", 1)\n    " << kernelName << "(";
    for (auto [i, p] : llvm::enumerate(params))
      os << (i ? ",\n        " : "") << p.ctype << " " << p.name;
    os << ") {\n";
    os << "  extern __shared__ uint8_t smemRaw[];\n";
    os << "  // The dynamic shared-memory base is only 16-byte aligned; round "
          "up to the\n  // 1024 bytes of a 128B-swizzle atom (the metadata "
          "reserves the slack).\n";
    emitSmemLayout(layout);
    if (deviceMapSlots)
      os << "  if (smId() >= kTawaMaxSms)\n    __trap();\n";
    emitBarrierInits(inits);
    if (clusterSize > 1) {
      // The partner arrives on these barriers and multicasts into this CTA's
      // slots: its barriers must be initialized first, and neither CTA may
      // exit while the other can still reach its shared memory.
      os << "  }\n  clusterSync();\n";
      os << "  const uint32_t ctaRank = clusterCtaRank();\n  (void)ctaRank;\n";
      os << bodyStorage;
      os << "  clusterSync();\n";
    } else {
      os << "  }\n  __syncthreads();\n";
      os << bodyStorage;
    }
    os << "}\n";
  }

  // Metadata (docs/METADATA.md). The grid is Triton's launch grid, chosen
  // by the caller.
  md.kernel = kernelName;
  md.threads = threads;
  md.dynamicSmemBytes = smemBytes;
  for (const Param &p : params)
    md.params.push_back(p);
  md.consumerGroups = totalGroups;
  md.megaTask = options.megaTask;
  if (options.megaTask && !options.taskName.empty())
    md.kernel = options.taskName;
  md.pingpong = ws->hasAttr("tawa.pingpong");
  md.cluster = clusterSize;
  md.programsGrid = programsGrid;
  md.pairedPrograms = func->hasAttr("tawa.paired_programs");
  if (auto swizzle = func->getAttrOfType<IntegerAttr>("tawa.tile_swizzle"))
    md.tileSwizzle = swizzle.getInt();
  if (deferredEpi)
    md.epilogueOverlap = deferredEpi->deferred;
  for (Operation &op : entry)
    if (auto alloc = dyn_cast<SmemAllocOp>(op))
      md.arefDepth = std::max<int64_t>(
          md.arefDepth, cast<MemRefType>(alloc.getType()).getShape()[0]);
  std::set<int64_t> depths;
  ws.walk([&](DotWaitOp wait) {
    // A wait in the K loop, on the product issued in the same iteration
    // (not the drain after the loop, which waits for all).
    auto issue = wait->getNumOperands()
                     ? wait->getOperand(0).getDefiningOp<DotAsyncOp>()
                     : DotAsyncOp();
    if (issue && issue->getBlock() == wait->getBlock()) {
      md.mmaDepth = std::max<int64_t>(md.mmaDepth, wait.getPendings());
      depths.insert(wait.getPendings());
    }
  });
  if (depths.size() > 1)
    md.mmaDepthVersions.assign(depths.begin(), depths.end());
  return success(!hadError);
}

void Emitter::emitSmemLayout(ArrayRef<std::string> layout) {
  os << "  uint8_t *smem = reinterpret_cast<uint8_t *>(\n"
     << "      (reinterpret_cast<uintptr_t>(smemRaw) + 1023) & "
        "~uintptr_t(1023));\n";
  for (const std::string &l : layout)
    os << "  " << l << "\n";
  os << "  (void)epi;\n";
}

void Emitter::emitBarrierInits(ArrayRef<std::string> inits) {
  os << "  if (threadIdx.x == 0) {\n";
  for (const std::string &i : inits)
    os << "    " << i << "\n";
  os << "    fenceMBarrierInit();\n";
  // A kernel's maps are parameters; a task's, pointers already.
  for (auto &[v, name] : descParams)
    os << "    tmaPrefetchDescriptor(" << (options.megaTask ? "" : "&") << name
       << ");\n";
}

void Emitter::emitHelpers() {
  os << "// arith.ceildivsi / floordivsi: rounding toward +/- infinity.\n"
     << "template <typename T> __device__ __forceinline__ T tawaCeilDiv(T a, "
        "T b) {\n"
     << "  T q = a / b;\n  return q + T((a % b != 0) && ((a < 0) == (b < 0)));"
        "\n}\n"
     << "template <typename T> __device__ __forceinline__ T tawaFloorDiv(T a, "
        "T b) {\n"
     << "  T q = a / b;\n  return q - T((a % b != 0) && ((a < 0) != (b < 0)));"
        "\n}\n";
}

void Emitter::emitTaskSource(StringRef kernelName, ArrayRef<std::string> params,
                             ArrayRef<std::string> layout,
                             ArrayRef<std::string> inits, int64_t smemBytes,
                             int64_t threads) {
  os << "// Generated by tawac --emit=cuda --mega-task from kernel "
     << kernelName << ". Do not edit.\n";
  os << "// One program of the kernel as a task of tawa's mega-kernel "
        "(docs/MEGAKERNEL.md,\n// \"Compiled tasks\").\n";
  os << "#pragma once\n";
  os << "#include \"tawa/device/device.cuh\"\n\n";
  std::string ns =
      options.taskName.empty() ? kernelName.str() : options.taskName;
  os << "namespace tawa::generated::" << ns << " {\n\n";
  os << "using namespace tawa::device;\n\n";
  emitHelpers();
  os << "\n/// Threads of the calling CTA: a 4-warp producer, then the "
        "consumer warp groups.\n";
  os << "constexpr int kThreads = " << threads << ";\n";
  os << "/// Shared memory the task uses from `smemRaw`, with the slack that "
        "aligns it to\n/// 1024 bytes.\n";
  os << "constexpr int kSmemBytes = " << smemBytes << ";\n\n";
  os << "/// Program `program` of a grid of `programs`, run by all kThreads "
        "threads of the\n/// calling CTA, each calling with the same "
        "arguments. Tensor maps live in global\n/// memory, 64-byte aligned "
        "and unchanged while the task runs. Returns after\n/// its global "
        "writes are complete and its mbarriers invalidated, so the CTA\n/// "
        "may reuse `smemRaw` for anything next.\n";
  // Inlined: ptxas serializes the wgmma pipeline of a function it calls
  // (C7510, "wgmma pipeline crossing function boundary").
  os << "__device__ __forceinline__ void task(";
  for (const std::string &p : params)
    os << p << ",\n                                     ";
  os << "const int3 program, const int3 programs,\n"
        "                                     uint8_t *smemRaw) {\n";
  emitSmemLayout(layout);
  os << "  (void)program;\n  (void)programs;\n";
  os << "  // What the CTA did with this shared memory before (generic "
        "accesses) comes\n  // before the TMA writes into it, and what it "
        "acquired before (the tiles of\n  // the tasks it waited for) before "
        "the TMA reads of global memory.\n";
  os << "  fenceProxyAsyncShared();\n  fenceProxyAsyncGlobal();\n"
        "  __syncthreads();\n";
  emitBarrierInits(inits);
  os << "  }\n  __syncthreads();\n";
  os << bodyStorage;
  os << "  // Each store group's issuer waited for its global writes; order "
        "them before the\n  // generic accesses that follow the task (the "
        "runtime's release of its event).\n";
  os << "  fenceProxyAsyncGlobal();\n  __syncthreads();\n";
  os << "  if (threadIdx.x == 0) {\n";
  for (auto &[name, count] : barrierArrays)
    os << "    for (int s = 0; s < " << count << "; ++s)\n      "
       << "mbarrierInval(&" << name << "[s]);\n";
  os << "  }\n  __syncthreads();\n";
  os << "}\n\n} // namespace tawa::generated::" << ns << "\n";
}

} // namespace cuda

FailureOr<KernelMetadata> emitCuda(tt::FuncOp func, raw_ostream &source,
                                   const CudaEmitOptions &options) {
  // Buffer the output so that a failure writes nothing.
  std::string src;
  llvm::raw_string_ostream srcOs(src);
  cuda::Emitter emitter(func, srcOs, options);
  KernelMetadata metadata;
  if (failed(emitter.emit(metadata)))
    return failure();
  source << src;
  return metadata;
}

void writeMetadataJson(const KernelMetadata &md, StringRef cubinName,
                       raw_ostream &json) {
  json << "{\n  \"format\": \"tawa-kernel-metadata/1\",\n";
  json << "  \"kernel\": \"" << md.kernel << "\",\n";
  json << "  \"cubin\": \"" << cubinName << "\",\n";
  json << "  \"block\": [" << md.threads << ", 1, 1],\n";
  json << "  \"cluster\": [" << md.cluster << ", 1, 1],\n";
  json << "  \"dynamic_smem_bytes\": " << md.dynamicSmemBytes << ",\n";
  json << "  \"grid\": {\"kind\": \""
       << (md.programsGrid ? "programs" : "explicit") << "\"},\n";
  json << "  \"params\": [\n";
  for (auto [i, p] : llvm::enumerate(md.params)) {
    json << "    {\"name\": \"" << p.name << "\", \"kind\": \"" << p.kind
         << "\"";
    if (p.kind == "num_programs")
      json << ", \"axis\": \""
           << "xyz"[p.axis] << "\"";
    if (p.kind == "tensormap") {
      json << ", \"dtype\": \"" << p.dtype << "\", \"box\": [";
      llvm::interleaveComma(p.box, json);
      json << "], \"swizzle\": \"" << p.swizzle
           << "\", \"oob\": \"zero\", \"_block\": [";
      llvm::interleaveComma(p.block, json);
      json << "]";
    }
    json << "}" << (i + 1 < md.params.size() ? "," : "") << "\n";
  }
  json << "  ],\n";
  json << "  \"_tawa\": {\"aref_depth\": " << md.arefDepth
       << ", \"mma_depth\": " << md.mmaDepth;
  if (!md.mmaDepthVersions.empty()) {
    json << ", \"mma_depth_versions\": [";
    for (auto [i, d] : llvm::enumerate(md.mmaDepthVersions))
      json << (i ? ", " : "") << d;
    json << "]";
  }
  json << ", \"consumer_groups\": " << md.consumerGroups
       << ", \"persistent\": " << (md.programsGrid ? "true" : "false")
       << ", \"pingpong\": " << (md.pingpong ? "true" : "false")
       << ", \"cluster\": " << md.cluster;
  if (md.megaTask)
    json << ", \"mega_task\": true";
  if (md.pairedPrograms)
    json << ", \"paired_programs\": true";
  if (md.tileSwizzle)
    json << ", \"tile_swizzle\": " << md.tileSwizzle;
  if (md.epilogueOverlap)
    json << ", \"epilogue_overlap\": " << md.epilogueOverlap;
  if (md.resources)
    json << ", \"registers\": " << md.resources->registers
         << ", \"spill_store_bytes\": " << md.resources->spillStoreBytes
         << ", \"spill_load_bytes\": " << md.resources->spillLoadBytes
         << ", \"stack_bytes\": " << md.resources->stackBytes;
  if (md.resources && !md.resources->performanceWarnings.empty()) {
    json << ", \"ptxas_performance_warnings\": [";
    for (auto [i, code] : llvm::enumerate(md.resources->performanceWarnings))
      json << (i ? ", " : "") << "\"" << code << "\"";
    json << "]";
  }
  json << "}\n}\n";
}

} // namespace tawa
