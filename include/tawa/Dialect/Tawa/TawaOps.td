//===- TawaOps.td - the tawa dialect: arefs and warp groups ---*- tablegen -*-===//
//
// An aref (asynchronous reference, Tawa paper §III-B) is a ring of D slots, each
// holding a tuple of tiles and guarded by a full and an empty barrier. Fig. 4 of
// the paper gives the semantics of its operations on one slot, initially E=1,
// F=0:
//   put       needs E=1; writes the payload; sets F=1, E=0
//   get       needs F=1; reads the payload; sets F=0, E=0 (borrowed)
//   consumed  sets E=1 (the slot may be written again)
// Iteration k of a loop uses slot k mod D, which is why the operations take the
// iteration index rather than a slot: the lowering derives slot and phase.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_DIALECT_TAWA_TAWAOPS_TD
#define TAWA_DIALECT_TAWA_TAWAOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Tawa_Dialect : Dialect {
  let name = "tawa";
  let cppNamespace = "::tawa";
  let summary = "asynchronous references and warp-specialized regions";
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class Tawa_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tawa_Dialect, mnemonic, traits>;

def Tawa_ArefType : TypeDef<Tawa_Dialect, "Aref"> {
  let mnemonic = "aref";
  let summary = "a ring of D slots, each carrying a tuple of tiles";
  let description = [{
    `!tawa.aref<[tensor<128x64xf16>, tensor<256x64xf16>], 3>` is a 3-slot ring
    whose slots each carry one A tile and one B tile; both tiles of a slot share
    one pair of full/empty barriers.
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::Type">:$payload,
                        "int64_t":$depth);
  // The payload list is parsed by hand so that an empty list reaches the
  // verifier (and its message) instead of failing inside the type parser.
  let assemblyFormat = "`<` `[` custom<ArefPayload>($payload) `]` `,` $depth `>`";
  let genVerifyDecl = 1;
}

def Tawa_ArefCreateOp : Tawa_Op<"aref.create", [
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "create an aref ring (all slots empty)";
  let results = (outs Tawa_ArefType:$aref);
  let assemblyFormat = "attr-dict `:` qualified(type($aref))";
}

def Tawa_ArefPutOp : Tawa_Op<"aref.put", [
    MemoryEffects<[MemWrite<DefaultResource>, MemRead<DefaultResource>]>]> {
  let summary = "publish a payload into the slot of iteration `k`";
  let description = [{
    Waits until the slot of iteration `k` (slot `k mod D`) is empty, writes the
    payload and marks the slot full.
  }];
  let arguments = (ins Tawa_ArefType:$aref, I32:$k, Variadic<AnyType>:$values);
  let assemblyFormat = [{
    $aref `[` $k `]` `,` $values attr-dict `:` qualified(type($aref)) `,` type($values)
  }];
  let hasVerifier = 1;
}

def Tawa_ArefGetOp : Tawa_Op<"aref.get", [
    MemoryEffects<[MemWrite<DefaultResource>, MemRead<DefaultResource>]>]> {
  let summary = "borrow the payload of the slot of iteration `k`";
  let description = [{
    Waits until the slot of iteration `k` is full and returns its payload. The
    slot stays borrowed (neither full nor empty) until `tawa.aref.consumed`.
  }];
  let arguments = (ins Tawa_ArefType:$aref, I32:$k);
  let results = (outs Variadic<AnyType>:$values);
  let assemblyFormat = [{
    $aref `[` $k `]` attr-dict `:` qualified(type($aref)) `->` type($values)
  }];
  let hasVerifier = 1;
}

def Tawa_ArefConsumedOp : Tawa_Op<"aref.consumed", [
    MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "release the slot of iteration `k` for the next put";
  let arguments = (ins Tawa_ArefType:$aref, I32:$k);
  let assemblyFormat = "$aref `[` $k `]` attr-dict `:` qualified(type($aref))";
}

def Tawa_WarpSpecializeOp : Tawa_Op<"warp_specialize", [
    RecursiveMemoryEffects, NoTerminator]> {
  let summary = "run one region per warp group, concurrently";
  let description = [{
    Each region is the program of one partition: `warps[i]` warps (a whole
    number of 4-warp groups) whose registers are set to `regs[i]` per thread
    with setmaxnreg. Partition 0 is conventionally the producer.

    ```mlir
    tawa.warp_specialize partition warps(4) regs(40) {
      ...
    } partition warps(8) regs(232) {
      ...
    }
    ```
  }];
  let arguments = (ins DenseI32ArrayAttr:$warps, DenseI32ArrayAttr:$regs);
  let regions = (region VariadicRegion<SizedRegion<1>>:$partitions);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ping-pong consumers
//===----------------------------------------------------------------------===//

def Tawa_PingPongWaitOp : Tawa_Op<"pingpong.wait", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "wait for this consumer's turn to run its tile's products";
  let description = [{
    Ping-pong consumer `group` (0 or 1) takes alternate tiles; before the
    `turn`-th of its tiles it waits until the other consumer has passed the
    last ring position of the tile before (consumer 0's first turn does not
    wait). Besides ordering the two groups' tensor-core work, this keeps a
    consumer from waiting on a ring position more than one lap ahead of the
    fills, which a parity wait could not tell apart (DESIGN.md §2.2).
  }];
  let arguments = (ins I32:$turn, I32Attr:$group);
  let assemblyFormat = "`group` $group `turn` $turn attr-dict";
}

def Tawa_PingPongGroupOp : Tawa_Op<"pingpong.group", [Pure]> {
  let summary = "which ping-pong consumer runs this program (0 or 1)";
  let description = [{
    In a partition of a `tawa.pingpong` warp_specialize: 0 in partition 1,
    1 in partition 2. The consumers take the tiles whose count has this
    value mod 2; naming the group through this op rather than a constant
    keeps the two programs the same, so the CUDA emitter writes one program
    for both (indexed by the running warp group).

    ```mlir
    %g = tawa.pingpong.group : i32
    ```
  }];
  let results = (outs I32:$group);
  let assemblyFormat = "attr-dict `:` type($group)";
  let hasVerifier = 1;
}

def Tawa_PingPongArriveOp : Tawa_Op<"pingpong.arrive", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "hand the turn to the other ping-pong consumer";
  let description = [{
    Placed after the K loop of a ping-pong consumer's tile: every ring
    position of the tile has been waited for, so the other consumer may
    start waiting on the positions of the next tile.
  }];
  let arguments = (ins I32Attr:$group);
  let assemblyFormat = "`group` $group attr-dict";
}

//===----------------------------------------------------------------------===//
// Asynchronous matrix products (wgmma issue and wait)
//===----------------------------------------------------------------------===//

def Tawa_DotAsyncOp : Tawa_Op<"dot_async", [
    MemoryEffects<[MemRead<DefaultResource>]>,
    AllTypesMatch<["c", "d"]>]> {
  let summary = "issue d = a * b + c on the tensor cores without waiting";
  let description = [{
    Starts the product (one wgmma commit group). `d` may only be read after a
    `tawa.dot_wait` that retires this group; until then the operands' shared
    memory must stay untouched, which is why an aref slot read by the product
    is released only after such a wait.
  }];
  let arguments = (ins AnyRankedTensor:$a, AnyRankedTensor:$b, AnyRankedTensor:$c);
  let results = (outs AnyRankedTensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` type($a) `*` type($b) `->` type($d)
  }];
}

def Tawa_DotWaitOp : Tawa_Op<"dot_wait", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>,
    AllTypesMatch<["inputs", "outputs"]>]> {
  let summary = "wait until at most `pendings` asynchronous products are in flight";
  let description = [{
    Returns its operands, now safe to read if their products are among the
    retired ones (wgmma.wait_group pendings).
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I32Attr:$pendings);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

//===----------------------------------------------------------------------===//
// Lowered arefs: shared-memory rings, mbarriers and TMA (DESIGN.md §2.2)
//===----------------------------------------------------------------------===//

def Tawa_MBarriersType : TypeDef<Tawa_Dialect, "MBarriers"> {
  let mnemonic = "mbarriers";
  let summary = "an array of mbarriers in shared memory, one per ring slot";
  let parameters = (ins "int64_t":$count);
  let assemblyFormat = "`<` $count `>`";
}

def Tawa_MBarrierAllocOp : Tawa_Op<"mbarrier.alloc", [
    MemoryEffects<[MemAlloc<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "allocate and initialize mbarriers (before any partition runs)";
  let description = [{
    Each barrier completes a phase after `arrivals` arrivals (plus any bytes
    announced with expect_tx). Initialization is fenced and made visible to
    every warp group before the partitions start.
  }];
  let arguments = (ins I32Attr:$arrivals);
  let results = (outs Tawa_MBarriersType:$bars);
  let assemblyFormat = "`arrivals` `(` $arrivals `)` attr-dict `:` qualified(type($bars))";
}

def Tawa_MBarrierWaitOp : Tawa_Op<"mbarrier.wait", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "block until the phase with the given parity of a barrier completed";
  let arguments = (ins Tawa_MBarriersType:$bars, I32:$slot, I32:$parity);
  let assemblyFormat = [{
    $bars `[` $slot `]` `,` `parity` $parity attr-dict `:` qualified(type($bars))
  }];
}

def Tawa_MBarrierArriveOp : Tawa_Op<"mbarrier.arrive", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "arrive on a barrier (release)";
  let description = [{
    With `per_warp`, each warp of the executing warp group arrives once (lane
    0, after the warp's own preceding work): the form consumers use to
    release a slot, so that the barrier's count is one per consumer warp.
    Without it, one elected thread arrives.

    With `cluster` (a kernel of 2-CTA clusters, -tawa-cluster-multicast),
    each arrival is made on the barrier at the same offset in every CTA of
    the cluster: the release of a slot that a peer's multicast load may
    overwrite.
  }];
  let arguments = (ins Tawa_MBarriersType:$bars, I32:$slot, UnitAttr:$per_warp,
                       UnitAttr:$cluster);
  let assemblyFormat = [{
    $bars `[` $slot `]` (`per_warp` $per_warp^)? (`cluster` $cluster^)? attr-dict `:` qualified(type($bars))
  }];
}

def Tawa_MBarrierExpectTxOp : Tawa_Op<"mbarrier.arrive_expect_tx", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "arrive and announce `bytes` of TMA transactions";
  let arguments = (ins Tawa_MBarriersType:$bars, I32:$slot, I64Attr:$bytes);
  let assemblyFormat = [{
    $bars `[` $slot `]` `,` `bytes` $bytes attr-dict `:` qualified(type($bars))
  }];
}

def Tawa_SmemAllocOp : Tawa_Op<"smem.alloc", [
    MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "a shared-memory ring buffer: one tile per slot";
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Tawa_TmaLoadOp : Tawa_Op<"tma.load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "asynchronous TMA copy of one block into a ring slot";
  let description = [{
    Copies the descriptor's block at the given coordinates into slot `slot` of
    `buffer`; the copied bytes complete the transaction count of barrier
    `slot` of `bars` (announced before with arrive_expect_tx). Where the
    slot has the block's rows but fewer columns (a ring of column boxes,
    read by tawa.smem.read_boxes), only the slot's width of columns is
    copied, from the given coordinates.

    With a `multicast` flag (a kernel of 2-CTA clusters), where the flag is
    true the two CTAs of the cluster load the same block: each copies half
    of its rows (rank r the r-th half, along the outermost dimension) into
    the slot of both CTAs, completing bytes on both barriers. Where it is
    false, each CTA loads the whole block for itself.
  }];
  let arguments = (ins AnyType:$desc, Variadic<I32>:$indices,
                       AnyStaticShapeMemRef:$buffer, I32:$slot,
                       Tawa_MBarriersType:$bars, Optional<I1>:$multicast);
  let assemblyFormat = [{
    $desc `[` $indices `]` `into` $buffer `[` $slot `]` `arrive` $bars
    (`multicast` `if` $multicast^)? attr-dict
    `:` type($desc) `,` type($buffer) `,` qualified(type($bars))
  }];
}

def Tawa_ClipRowsOp : Tawa_Op<"clip_rows", [Pure,
    AllTypesMatch<["desc", "result"]>]> {
  let summary = "a tensor descriptor whose rows at and past a bound are out of bounds";
  let description = [{
    The same tensor map with its outermost (row) extent cut at `limit`: a
    store through the result does not write rows at or past `limit` (as a
    TMA store drops what lies outside the tensor). RowBlockWidening puts it
    on the store of a widened row block, whose last block of a row range
    (an attention head) reaches into the next one. The CUDA emitter stores
    64-row boxes and skips a box whose first row is at or past the limit,
    so the limit must sit a multiple of 64 rows from every stored block's
    first row (RowBlockWidening's limits do); the CPU interpreter clips
    row by row.

    ```mlir
    %o = tawa.clip_rows %o_desc below %limit : !tt.tensordesc<tensor<192x64xf16>>
    ```
  }];
  let arguments = (ins AnyType:$desc, I32:$limit);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$desc `below` $limit attr-dict `:` type($desc)";
}

def Tawa_SlotViewOp : Tawa_Op<"smem.slot", [
    MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "the tile in one slot of a shared-memory ring, as a value";
  let description = [{
    Reads of the result (a wgmma operand, a transpose view) read shared memory
    directly; the value is valid until the slot is released.

    With `transposed`, the slot holds the tile's transpose (a 2-D tile
    [R, C] stored as [C, R], written by tawa.smem.transpose): what an fp8
    product needs of a B operand loaded [K, N], since fp8 wgmma reads only
    K-major operands.
  }];
  let arguments = (ins AnyStaticShapeMemRef:$buffer, I32:$slot,
                       UnitAttr:$transposed);
  let results = (outs AnyRankedTensor:$tile);
  let assemblyFormat = [{
    $buffer `[` $slot `]` (`transposed` $transposed^)? attr-dict `:` type($buffer) `->` type($tile)
  }];
  let hasVerifier = 1;
}

def Tawa_SmemLoadOp : Tawa_Op<"smem.load", [
    MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "read a tile in shared memory into registers";
  let description = [{
    The result holds the elements of `tile` (a ring slot's view) in
    registers, read where this op stands: before the slot is released, even
    if the values are used later. -tawa-layout-assignment inserts it where a
    tile that lives in shared memory is read element by element (an operand
    loaded by TMA that an epilogue combines with the accumulator) and gives
    the result the layout its users need (the accumulator's).
  }];
  let arguments = (ins AnyRankedTensor:$tile);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $tile attr-dict `:` type($tile) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tawa_SmemReadBoxesOp : Tawa_Op<"smem.read_boxes", [
    AllTypesMatch<["full", "empty"]>, MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "read a tile that arrives box by box through a narrow ring";
  let description = [{
    The consumer's side of a ring whose slots hold one column box of the
    tile: the producer puts the tile's `boxes` boxes of columns at ring
    positions `position * boxes + j`, j = 0 ... boxes - 1. For each j in
    order, this op waits for position p = position * boxes + j to be full
    (slot p mod D, parity (p / D) & 1), reads the slot into columns
    [j * w, (j + 1) * w) of the result, w the slot's columns, and releases
    the slot (one arrival per warp on `empty`). ArefLowering makes it of an
    epilogue operand's get where LoopDistribution gave the aref
    `tawa.column_boxes`: a 64 KB tile of C then takes a 16 KB slot, and the
    main ring keeps its fourth slot. The result takes the accumulator layout.

    ```mlir
    %c = tawa.smem.read_boxes %ring[%k] full %full empty %empty boxes 4
        : memref<1x128x64xbf16, 3>, !tawa.mbarriers<1> -> tensor<128x256xbf16>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$buffer, I32:$position,
                       Tawa_MBarriersType:$full, Tawa_MBarriersType:$empty,
                       I64Attr:$boxes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $buffer `[` $position `]` `full` $full `empty` $empty `boxes` $boxes
    attr-dict `:` type($buffer) `,` qualified(type($full)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tawa_SmemTransposeOp : Tawa_Op<"smem.transpose", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "transpose one 8-bit tile between two rings' slots (producer)";
  let description = [{
    Every thread of the producer warp group copies its share of the [R, C]
    tile in slot `slot` of `src` (as TMA stored it: boxes of 128-byte rows,
    128-byte swizzle) to slot `slot` of `dst` as [C, R] in the same form, so
    that wgmma reads it as a K-major operand, then fences its writes for the
    async proxy. The caller waits for `src`'s fill before and arrives on the
    destination's full barrier after (per warp).
  }];
  let arguments = (ins AnyStaticShapeMemRef:$src, AnyStaticShapeMemRef:$dst,
                       I32:$slot);
  let assemblyFormat = [{
    $src `[` $slot `]` `into` $dst attr-dict `:` type($src) `,` type($dst)
  }];
  let hasVerifier = 1;
}

#endif // TAWA_DIALECT_TAWA_TAWAOPS_TD
