//===- Passes.td - tawa passes --------------------------------*- tablegen -*-===//

#ifndef TAWA_TRANSFORMS_PASSES_TD
#define TAWA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DropAssumptions : Pass<"tawa-drop-assumptions", "::mlir::ModuleOp"> {
  let summary = "remove tl.assume's hints (llvm.intr.assume) and what only they read";
  let description = [{
    Triton lowers `tl.assume(cond)` (written on program ids and strides in
    Triton's persistent-matmul tutorial and many GEMMs) to
    `llvm.intr.assume %cond`: a promise to LLVM's optimizer with no effect of
    its own. tawa's passes do not use these promises: this pass erases every
    `llvm.intr.assume` and the pure operations that computed only its
    condition. It runs before the supported-subset check.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def SupportedSubsetCheck : Pass<"tawa-check-supported", "::mlir::ModuleOp"> {
  let summary = "report every construct tawa cannot compile yet";
  let description = [{
    Walks the input TTIR and reports each operation or type outside the subset
    tawa compiles, at the user's source location (the innermost frame of the
    operation's Triton location that is not inside Triton's own library). The
    pass leaves the IR unchanged and fails if it reported anything, so that
    unsupported input stops with a diagnostic instead of a wrong kernel.
  }];
  let dependentDialects = ["::tawa::tt::TTDialect"];
}

def TileSwizzle : Pass<"tawa-tile-swizzle", "::tawa::tt::FuncOp"> {
  let summary = "walk a user's row-major persistent tile loop in groups of rows, for L2 reuse";
  let description = [{
    A kernel that walks its tiles itself, `for tile = program_id(x) to R * C
    step S` (or Triton's grouped-GEMM idiom: an `scf.while` over each window
    `last <= tile < last + R * C` of a loop over windows, `t = tile - last`)
    and splits the index row-major, `row = t / C, col = t % C`, computes
    each wave of about S tiles over a few rows and all C columns, so every
    wave streams the whole B operand through L2. This pass maps t to
    (row, col) in groups of `group-rows` rows instead (the order of
    Triton's matmul tutorial): a bijection of [0, R * C), so the same tiles
    are computed, each by another program and at another time.

    That is only the same kernel where every tile of the walk is visited:
    a run-time guard keeps the user's order unless S > 0, the grid has at
    least S programs along x (so that programs start at every index of
    [0, S)), R and C are positive and C <= 2^27 (no overflow), and, for the
    grouped walk, no earlier window had a negative size (a flag carried
    across the windows). The iterations must also be independent tiles:
    nothing is carried between them but the tile index, t has no use but
    the split, and the only memory written is one block per tile (a
    `tt.descriptor_store` at (row * c0, col * c1) with c0, c1 at least the
    block's extents). Outputs are assumed not to alias inputs, as the
    persistent pipeline already assumes. Kernels that do not match are left
    unchanged. The function gets `tawa.tile_swizzle = group-rows`.
  }];
  let options = [
    Option<"groupRows", "group-rows", "int64_t", /*default=*/"8",
           "tile rows per group; 1 keeps the user's order">
  ];
  let dependentDialects = ["::tawa::tt::TTDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def ProgramPairing : Pass<"tawa-program-pairing", "::tawa::tt::FuncOp"> {
  let summary = "run two programs of adjacent x (or y) in one, sharing what they both load";
  let description = [{
    Two programs that differ only in `tt.get_program_id` of the pairing
    axis (`axis`: x or y; a = 2q and 2q + 1) run as one: every operation
    that does not depend on a (for x, the B operand's TMA load of a GEMM
    whose A rows are x * BM; for y, the A operand's load of one whose B
    rows are y * BN; the loop bounds) runs once for both, the rest twice,
    and the two main (K) loops become one loop with both programs'
    loop-carried values, so that each shared tile is loaded once per pair
    instead of once per program (a 128 x 128 tile pair reads as many bytes
    per flop as one 256 x 128 tile). Paired along y, the two products share
    A and read B tiles that the CUDA emitter places side by side, so that
    they issue as one wgmma of twice the width (two 128-column products:
    one m64n256k16 per consumer group, as a 128 x 256 tile). The second
    program's epilogue runs only where 2q + 1 is a program of the grid
    (`scf.if`); its K-loop loads run either way (TMA loads outside a tensor
    read zeros; the rows of another batch are harmless to read).

    Along y, a kernel of a 1-D grid that computes its tile's row and
    column from program_id(0) alone (Triton's grouped order, or p / n and
    p % n) is paired along the coordinate its B tile reads and its A tile
    does not: pair q is the tiles (s, 2c) and (s, 2c + 1), (s, c) the q-th
    of the rectangle of pairs in groups of rows, where the launch is the
    rectangle's programs along x (checked at run time; otherwise every
    program runs the kernel's own map with the second program's epilogue
    off). The count of pairs is an op marked `tawa.program_count`, which
    `-tawa-persistent-programs` walks instead of the launch's programs.

    `axis=auto` pairs along y only where that fusion applies (the K loop has
    one `tt.dot` whose A load does not depend on y and whose B operand is
    a TMA load that does (or its transpose), with an accumulator of 128
    rows and 64 or 128 columns per program) and the pairing is possible;
    elsewhere it leaves the kernel unchanged, silently.

    The function gets the attribute `tawa.paired_programs` = the axis (0 or
    1), and `-tawa-persistent-programs` (which must follow: the program grid
    the caller launches stays the original one) then walks ceil(n / 2)
    pairs along that axis. Requirements, each an error at the user's line
    where the kernel does not meet it (axis x or y): the kernel reads
    `tt.get_program_id` of the axis and does not walk program ids itself;
    its body has one top-level `scf.for` with a `tt.dot` (the K loop) whose
    bounds do not depend on it and which stores nothing and loads through
    pointers only what does not depend on it; nothing before that loop
    stores; no TMA load follows it; every store after it depends on it, and
    so does every load after a store there.
  }];
  let options = [
    Option<"axis", "axis", "std::string", /*default=*/"\"x\"",
           "x, y, or auto (y where the paired products fuse into one wgmma)">,
    Option<"arefDepth", "aref-depth", "int64_t", /*default=*/"0",
           "with axis=auto: the ring depth the kernel will be given (0: the "
           "compiler's choice); auto does not pair where that many slots of "
           "the paired loop's tiles exceed shared memory">
  ];
  let dependentDialects = ["::tawa::tt::TTDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileLoopPrograms : Pass<"tawa-tile-loop-programs", "::tawa::tt::FuncOp"> {
  let summary = "turn a kernel's own persistent tile loop into one program per tile";
  let description = [{
    A kernel whose body is `for t = program_id(0) to T step S { tile t }`
    (Triton's persistent-matmul idiom: NUM_SMS programs each walking tiles S
    apart; nothing carried between tiles, nothing after the loop, nothing
    with effects before it, no other program id read) becomes one program
    per tile: program q computes tile t = q / g * S + q % g with g =
    min(#programs, S) (the op marked `tawa.tile_index`), over T / S * g +
    min(T % S, g) programs (the op marked `tawa.program_count`, which
    `-tawa-persistent-programs` walks): the same tiles the walk computes,
    each once. An error, with the reason, where the kernel is not of that
    form. `-tawa-program-pairing=axis=auto` applies it to its copy of such
    a kernel so that its tiles pair like programs.
  }];
  let dependentDialects = ["::tawa::tt::TTDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def RowBlockWidening : Pass<"tawa-row-block-widening", "::tawa::tt::FuncOp"> {
  let summary = "run 192 query rows per program where a kernel's 128 rows are independent and three consumer groups fit";
  let description = [{
    FlashAttention-3's tile for head dimension 64: 192 query rows, one
    64-row slice per consumer warp group, three groups sharing each K and V
    block; a Triton source cannot say it (its blocks are powers of two).
    Where program_id(x) enters a kernel only as `pid * 128` (plus a base
    that does not read it) in the row index of descriptor loads and stores
    of 128-row blocks, and every value derived from those rows keeps them
    as its dimension 0 (elementwise ops, splats and splat constants, dots
    whose A operand and accumulator carry them, reductions, expand_dims and
    broadcasts along dimension 1, loop-carried values), program x processes
    rows [192 x, 192 x + 192) instead: those tensors, the row-indexed
    descriptors (argument attribute `tawa.source_block` keeps the source's
    block for the caller's grid) and the multiplier become 192; a store
    writes through `tawa.clip_rows` below base + 128 * num_programs(x), the
    first row past the programs' range, so the last block of a range (a
    head) does not write into the next one; and the program count along x,
    ceil(128 nx / 192), is marked `tawa.program_count` for
    -tawa-persistent-programs.

    Applied only to attention-shaped kernels (a loop of two products and a
    row reduction) whose products' accumulators add up to at most 192
    columns (S of 128 keys and O of head dimension 64: 96 registers per
    thread of a group, which with P and addresses fits the 160 each of
    three groups get); others are left as they are.
  }];
  let dependentDialects = ["::tawa::tt::TTDialect", "::tawa::TawaDialect",
                           "::mlir::arith::ArithDialect"];
}

def PersistentPrograms : Pass<"tawa-persistent-programs", "::tawa::tt::FuncOp"> {
  let summary = "turn a kernel of one program per tile into a persistent one";
  let description = [{
    Tawa paper §III-D (persistent kernels), for any input. The kernel gets
    three i32 arguments, `num_programs_x/y/z` (attribute `tawa.num_programs`
    = 0, 1, 2), which the runtime fills with the program grid the caller
    launches with (metadata grid kind "programs"), while only min(#SMs,
    programs) CTAs run. The body becomes a loop over program indices
    t = CTA id, CTA id + CTAs, ... below nx * ny * nz; in each iteration
    `tt.get_program_id x/y/z` read t's coordinates and `tt.get_num_programs`
    the program grid. A kernel that does not read program_id(y) walks them
    in launch order (x fastest; a 1-D grid's kernel maps its program id to
    tiles itself, e.g. the GEMM samples' grouped order); one that does
    walks each z plane 8 x values at a time, for each y the group's x values
    (Triton's grouped order: a wave of CTAs reuses a few blocks of each
    operand in L2 instead of touching every x block). The
    aref rings then keep their state across a CTA's tiles, so the producer
    loads the next tile while the consumers run the epilogue.

    After -tawa-program-pairing (function attribute `tawa.paired_programs`
    = the pairing axis) the loop walks ceil(nx / 2) * ny * nz pairs instead
    (or nx * ceil(ny / 2) * nz for y), while `tt.get_num_programs` still
    reads the program grid.

    A kernel that already walks program ids itself (a loop whose bounds or
    loop-carried values derive from `tt.get_program_id`, as the user's
    persistent and grouped GEMMs do) is left as it is, unless `force` is set.

    Where a program's work grows with its x index (a loop whose upper bound
    grows with program_id(0) through additions and multiplications by
    positive constants while its lower bound does not depend on it: causal
    attention's (pid_m + 1) * BM), x is walked from the largest down
    (`heavy-first`), so that the longest programs start in the first wave,
    and CTA c takes position k G + c of round k in even rounds and
    k G + G - 1 - c in odd ones (complete rounds only): the CTA that got a
    round's heaviest program gets the next one's lightest.

    Otherwise, where the kernel reads program_id(y) and every load inside a
    loop depends on y but none on x (attention's K and V blocks, indexed by
    the head; followed through loop-carried values to their initial and
    yielded values), x is walked fastest (`stream-order`), so that the CTAs
    running at once work on a few y and share those blocks in L2; a GEMM,
    whose A and B tiles depend on x and y, keeps the grouped order.
  }];
  let options = [
    Option<"force", "force", "bool", /*default=*/"false",
           "transform even a kernel that loops over program ids itself">,
    Option<"heavyFirst", "heavy-first", "bool", /*default=*/"true",
           "walk x from the largest down where a program's work grows with x">,
    Option<"streamOrder", "stream-order", "bool", /*default=*/"true",
           "walk x fastest where the loads inside loops depend on y alone">
  ];
  let dependentDialects = ["::tawa::tt::TTDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def PartitionAnnotation : Pass<"tawa-partition-annotation", "::tawa::tt::FuncOp"> {
  let summary = "assign each operation of a kernel to the producer or consumer warp group";
  let description = [{
    Tawa paper §III-C1. Walks use-def chains backwards from two kinds of roots:
    every TMA load (`tt.descriptor_load`) roots the *producer* slice (partition
    0: the load and the iteration statements that compute its coordinates), and
    every side-effecting sink (stores) roots the *consumer* slice (partition 1:
    tile statements and the epilogue), which stops at TMA load results — those
    edges become arefs. Loops belong to every partition that has operations in
    them, and the consumer runs every loop around a TMA load (it takes every
    tile the producer puts, used or not); scalar computations needed by both
    are replicated.

    Results, as attributes only:
    - `tawa.partition = array<i32: ...>` on every operation of the function
      body (outside reduction combiners): the partitions that execute it;
    - `tawa.iter_arg_partitions = array<i32: ...>` on every `scf.for` and
      `scf.while`: per loop-carried value, a bit mask (1 = producer,
      2 = consumer) of the partitions that carry it.
    A kernel without TMA loads gets an error: there is nothing to specialize.
  }];
  let dependentDialects = ["::tawa::tt::TTDialect", "::mlir::scf::SCFDialect"];
}

def LoopDistribution : Pass<"tawa-loop-distribution", "::tawa::tt::FuncOp"> {
  let summary = "split an annotated kernel into warp-group regions that talk through arefs";
  let description = [{
    Tawa paper §III-C2. Reads the `tawa.partition` annotations and rebuilds the
    kernel body as one `tawa.warp_specialize` with a producer region and a
    consumer region, each holding its own clone of the loop nest. Every
    cross-partition edge (a TMA load used by the consumer) goes through an
    aref; loads in one block that feed the same `tt.dot` share one tuple aref,
    and so one pair of barriers. Each aref's iteration index is a running
    counter threaded through every enclosing loop, so that a persistent
    kernel's ring keeps its state across tiles. The producer puts after the
    group's last load; the consumer gets before the first use and marks the
    slot consumed after the last one.

    An epilogue operand of cooperative groups (one 2-D tile of 16-bit
    elements loaded after the streamed loop and only combined element-wise,
    such as C of D = alpha A B^T + beta C) whose rows span several 128-byte
    boxes gets `tawa.column_boxes` on its aref where reading it a box at a
    time buys the streamed rings a slot (auto depth: a 128 x 256 bf16 tile
    of C leaves A and B four slots instead of three) or lets an explicit
    depth fit: -tawa-aref-lowering then streams it through a ring of one box.
  }];
  let options = [
    Option<"arefDepth", "aref-depth", "int64_t", /*default=*/"0",
           "slots D of each aref whose loads are inside a loop (others get 1); "
           "0 chooses the most slots, up to 4, that fit in 227 KiB of shared "
           "memory next to the other arefs and 32 KiB of epilogue staging "
           "(16 KiB, or an epilogue operand read in column boxes, where that "
           "buys a slot)">,
    Option<"pingpong", "pingpong", "int64_t", /*default=*/"-1",
           "1: two consumer warp groups, each in its own partition, take "
           "alternate tiles of the tile loop; 0: never; -1: where the "
           "consumer groups are the compiler's choice, a tile's accumulators "
           "fit one group's registers and the kernel has a tile loop">,
    Option<"consumerGroups", "consumer-groups", "int64_t", /*default=*/"0",
           "consumer warp groups (4 warps each) that share the consumer "
           "region, 1 to 3; 0 chooses the fewest (at most 2) whose share of "
           "the largest accumulator fits in 128 registers per thread">
  ];
  let dependentDialects = ["::tawa::TawaDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def MmaPipeline : Pass<"tawa-mma-pipeline", "::tawa::tt::FuncOp"> {
  let summary = "schedule the fine-grained MMA pipeline of the consumer loops (Tawa §III-D1)";
  let description = [{
    In every warp-specialized loop where a `tt.dot` accumulates into a
    loop-carried value and reads a tile obtained with `tawa.aref.get`, the dot
    becomes `tawa.dot_async` followed by `tawa.dot_wait {pendings = P}`, and
    the `tawa.aref.consumed` of the tiles it reads moves P iterations later.
    The pass only writes the schedule — `tawa.stage` on every operation of the
    loop body and `tawa.num_stages` on the loop — which
    `-tawa-pipeline-expand` realizes. P must be smaller than the depth of
    every aref released late: a producer waiting for a slot that is released
    only P products later would otherwise deadlock.

    Where the pass chooses P = 2 itself, it versions the loop on its trip
    count: the loop and the rest of its block (the epilogue) move into
    `scf.if (trips <= 8)`, whose then branch holds a copy pipelined with
    P = 1 (measured faster for short loops on the H100: the products in
    flight at the end of a tile hold slots the next tile's prefetch needs).
    Scalars the block's terminator reads become results of the if; where a
    tensor would have to, the loop keeps one version.

    A loop that -tawa-optimal-schedule solved carries `tawa.schedule_lag`,
    the fewest products in flight that realize its schedule: P is then at
    least that (the rule above decides how many more; the short-loop version
    only where the lag is 1).
  }];
  let dependentDialects = ["::tawa::TawaDialect", "::mlir::arith::ArithDialect"];
  let options = [
    Option<"mmaDepth", "mma-depth", "int64_t", /*default=*/"-1",
           "MMA pipeline depth P: products in flight after each issue; -1 "
           "chooses 2 for two cooperative consumer groups holding 128 "
           "accumulator registers each on rings of 4 or more slots (with a "
           "P = 1 version of the loop for at most 8 iterations), else 1, "
           "and always less than the slots">
  ];
}

def PointerTileDescriptors
    : Pass<"tawa-pointer-tile-descriptors", "::tawa::tt::FuncOp"> {
  let summary = "turn tile loads and stores through tensors of pointers into TMA";
  let description = [{
    A 2-D `tt.load` or `tt.store` whose addresses are
    base + (s0 + i0) * stride0 + (s1 + i1) * stride1 — index vectors
    `splat(s) + make_range`, expanded, scaled by a scalar or constant stride,
    added to a splatted kernel-argument pointer; inside an `scf.for` (lower
    bound 0, constant step) possibly a loop-carried tile advanced by a uniform
    `tt.addptr` each iteration — becomes a `tt.descriptor_load` /
    `tt.descriptor_store` at coordinates (s0, s1) of a
    `tt.make_tensor_descriptor` created once at the function's entry, with
    the stride-1 dimension inner (a tile contiguous along its rows is loaded
    as its transpose and `tt.trans`-posed back).

    The descriptor's extent along a dimension comes from the mask: a
    conjunction of `index < bound` per dimension (other = 0, TMA's
    out-of-bounds fill) gives extent = start + bound - index start, which must
    be the same for every tile and iteration (made of kernel arguments). An
    index vector reduced `% bound` (the tutorial's rows past M) gets extent
    `bound`: those rows read zeros instead of wrapped-around rows, which is
    only accepted when every pointer store of the kernel is masked. An
    unmasked dimension has no bound (extent 2^31 - 1). TMA needs the base
    16-byte aligned and the row stride a multiple of 16 bytes: both must be
    kernel arguments with `tt.divisibility = 16` (Triton's default
    specialization) or constants.

    Accesses it cannot prove affine are left alone; a 2-D load that feeds a
    `tt.dot` and cannot be rewritten is an error at its line, with the
    reason. Pointer tiles nothing reads afterwards (loop-carried ones
    included) are removed.
  }];
}

def MaskedLoopSplit : Pass<"tawa-masked-loop-split", "::tawa::tt::FuncOp"> {
  let summary = "split a loop whose mask selects everything on a prefix of its iterations";
  let description = [{
    Causal attention written as one loop masks every key block although only
    the blocks on the diagonal band need it. In an `scf.for` with a constant
    positive step, an `arith.select` whose condition compares a loop-invariant
    row vector R = splat(a) + make_range(lo, ..) with a column vector
    C = splat(i + off) + make_range(lo2, hi2) of the induction variable i
    (`cmpi sge/sgt` R, C, or `sle/slt` C, R) selects its true value on every
    element while min R = a + lo is >= (or >) max C = i + off + hi2 - 1.
    The loop becomes two loops in sequence: [lb, split) with the select
    replaced by its true value, then the original body over [split, ub),
    carrying the first loop's results; split is the first iteration where
    the mask may select the false value, clamped to [lb, ub]. Nothing else
    changes: the second loop computes exactly what the original computed for
    its iterations, the first what it computed with a mask that was all true.

    With `mode=guard` (the default) the loop stays one loop and only the
    mask is made conditional: the select, its comparison and the loop-body
    values that only the comparison reads (the column vector) move into an
    `scf.if i >= split` whose else branch yields the select's true value.
    The iterations before split skip the comparison and select as the split
    loop's prefix would, and the loop keeps one body, so a pipelined loop is
    expanded (prologue, steady state, epilogue) once rather than twice and
    the pipeline does not drain between the two parts. Where the selects
    cannot move (the comparison has other users, or a select's result is
    used before the last select) guard mode splits instead.
    `mode=split`: the two loops, always.

    Runs after -tawa-persistent-programs (its heavy-first walk reads the
    original loop bound). -tawa-loop-distribution lets the two loops share
    their K and V rings.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"guard\"",
           "guard: one loop, the mask under scf.if i >= split; split: two loops">,
  ];
}

def ScaledRowMax : Pass<"tawa-scaled-row-max", "::tawa::tt::FuncOp"> {
  let summary = "take a row max (or min) of scaled scores as the scaled max of the raw ones";
  let description = [{
    `s = x * splat(c)` read by a `tt.reduce` whose combiner is one
    `arith.maxnumf`, `maximumf`, `minnumf` or `minimumf` (attention written
    `s = dot(q, k) * scale; m = max(m, max(s, 1)); p = exp2(s - m)`) becomes

      scf.if 0 < c < +inf { reduce(x) * c } else { reduce(x * c) }

    For a positive finite c rounding is monotone, so max_j fl(x_j c) =
    fl(max_j(x_j) c) (and min likewise) for every x, infinities and NaN
    included (the NaN-ignoring and NaN-propagating combiners keep their
    meaning); other c take the original computation, with its own product.
    The reduction then reads the dot's accumulator directly, and `x * c` is
    left with the uses it had besides the reduction, typically one
    subtraction, which the CUDA compiler fuses with it into one FFMA per
    score: 64 fewer instructions per thread and key block for a 64 x 128
    tile. The result is bit for bit the original's, but for the sign of a
    zero maximum. Runs before the partition annotation.
  }];
  let dependentDialects = ["::tawa::tt::TTDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def CoarsePipeline : Pass<"tawa-coarse-pipeline", "::tawa::tt::FuncOp"> {
  let summary = "schedule the coarse-grained pipeline of attention-shaped loops (Tawa Algorithm 1)";
  let description = [{
    In a consumer loop with a product T restarted every iteration (S = Q K^T),
    CUDA-core code C reading it (softmax) and a second product U accumulating
    into a loop-carried value from C's result (O += P V): T and U become
    `tawa.dot_async` + `tawa.dot_wait`; U, the ring get of its B operand and
    whatever depends on its accumulator or that ring's counter go to stage 1,
    the rest to stage 0; `tawa.order` interleaves them as issue T_{j+1}, issue
    U_j, wait T_{j+1}, C_{j+1}, wait U_j; the loop gets `tawa.pipeline_peel`.
    `-tawa-pipeline-expand` realizes it. Other loops are left alone.

    Where the loop runs in a consumer partition of two cooperative warp
    groups, both products get `tawa.issue_turn`: the groups take turns
    issuing them (FlashAttention-3's ping-pong, realized by CUDA emission
    with named barriers), so one group's softmax runs under the other's
    products.
  }];
  let dependentDialects = ["::tawa::TawaDialect"];
  let options = [
    Option<"issueTurns", "issue-turns", "bool", /*default=*/"true",
           "let two cooperative consumer groups take turns issuing products">
  ];
}

def PipelineExpansion : Pass<"tawa-pipeline-expand", "::tawa::tt::FuncOp"> {
  let summary = "realize the stage annotations of a loop as a software pipeline";
  let description = [{
    The one expander behind every schedule (heuristic MMA lag, coarse-grained
    pipelines, solver schedules). For an `scf.for` whose body operations carry
    `tawa.stage = s`, an operation of stage s runs, in iteration k of the new
    loop, on behalf of iteration k - s: it is guarded by k - s >= 0 and reads
    the values of iteration k - s from shift registers carried as extra loop
    values. After the loop, asynchronous products leaving it are retired
    (`tawa.dot_wait {pendings = 0}`), then a drain runs the late stages of the
    last iterations. Operations of stage s > 0 may read loop-invariant values,
    the induction variable and values of stage 0 (loop-carried or computed),
    and may produce values used only by operations of their own stage.
  }];
  let dependentDialects = ["::tawa::TawaDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoopGraphExtraction : Pass<"tawa-print-loop-graph", "::tawa::tt::FuncOp"> {
  let summary = "print the dependence graph of a kernel's main loop for tawa-sched";
  let description = [{
    The first half of the optimal scheduler's compiler hook (Twill, DESIGN.md
    §4). For the innermost `scf.for` that holds a `tt.dot`, groups the loop
    body into coarse operations — each TMA load, each matrix product, and each
    connected group of the CUDA-core tensor work between them — and prints
    their dependence graph, with costs in clock cycles from an H100 model, in
    the text format `tawa-sched` reads (normalize it with `--normalize`).
    Costs per SM and clock: wgmma 2048 multiply-adds (4096 for fp8), MUFU
    exponentials 16, other fp32 element operations 128, conversions 64; TMA
    loads stream ahead of the pipeline. Edges follow SSA uses (distance 0) and
    loop-carried values (distance 1). The IR is left unchanged.
  }];
}

def OptimalSchedule : Pass<"tawa-optimal-schedule", "::tawa::tt::FuncOp"> {
  let summary = "choose the main loop's pipeline with the Twill solver (DESIGN.md §4)";
  let description = [{
    The compiler hook of the optimal scheduler. Runs after
    -tawa-partition-annotation: extracts the main loop's dependence graph
    (the one -tawa-print-loop-graph prints), normalizes its costs, solves
    the minimal-II modulo schedule and warp assignment jointly (Twill's
    Algorithm 1) and writes the result as attributes: `tawa.schedule_lag`
    on the loop (the iterations after its issue that each product completes
    in the schedule: the fewest products in flight that realize it), which
    -tawa-mma-pipeline keeps as the least P, `tawa.schedule_consumer_slack`
    (the consumers' free CUDA-core cycles per iteration, read by the CUDA
    emitter's deferred epilogue) and a record of the solution
    (`tawa.schedule*`). A warp assignment that does
    not put exactly the TMA loads on the producer group, a solver timeout or
    infeasibility is an error at the loop's source line.
  }];
  let options = [
    Option<"timeout", "timeout", "double", /*default=*/"60",
           "seconds for the whole search (a timeout is an error, never "
           "reported as infeasible)">,
    Option<"normalize", "normalize", "int64_t", /*default=*/"64",
           "rescale cycle counts with the cost-normalization ILP so that the "
           "distinct costs sum to at most this (0: keep the cycles)">
  ];
}

def LayoutAssignment : Pass<"tawa-layout-assignment", "::tawa::tt::FuncOp"> {
  let summary = "assign a register or shared-memory layout to every tile (DESIGN.md §2.3)";
  let description = [{
    Anchors at the matrix products and propagates through element-wise
    operations, conversions, `tt.expand_dims`, `tt.broadcast`, `tt.reduce`,
    loop-carried values, `tt.make_range`, `tt.splat` and pointer loads:
    - `smem`: a tile in shared memory (TMA loads, aref slots, their transposes);
    - `acc`: the wgmma accumulator fragment;
    - `row` / `col`: a vector (or a [M,1] / [1,N] tensor) indexed like the rows
      or the columns of an accumulator, e.g. row statistics or a bias;
    - `a_reg`: an accumulator converted into the A operand of a
      register-sourced wgmma;
    - `blocked`: any other register tensor.
    Writes `tawa.layouts = [...]` (one entry per result) on operations with
    tensor results and `tawa.iter_arg_layouts` on loops. A value that would
    need two layouts is reported at the user's line: layout conversions are
    not supported yet.
  }];
}

def ArefLowering : Pass<"tawa-aref-lowering", "::tawa::tt::FuncOp"> {
  let summary = "lower arefs to shared-memory rings, mbarriers and TMA (DESIGN.md §2.2)";
  let description = [{
    Each `tawa.aref.create` of D slots becomes one shared-memory ring buffer
    per payload tile plus a `full` and an `empty` array of D mbarriers: full
    completes on the elected producer thread's arrive.expect_tx and the TMA
    bytes (1 arrival); empty on one arrival per consumer warp. For ring
    position k (slot k mod D, phase (k / D) & 1):
    - `put` waits on empty[slot] with parity phase ^ 1 (a fresh barrier
      passes the first lap), announces the bytes of all its tiles on
      full[slot], and turns the TMA loads that produced its values into
      `tawa.tma.load`s into the slot;
    - `get` waits on full[slot] with parity phase and yields views of the slot;
    - `consumed` arrives on empty[slot] once per consumer warp.
    An aref marked `tawa.column_boxes = n` (one tile, by LoopDistribution)
    gets a ring of one column box of the tile: the put of aref position k
    becomes n puts of box j at ring position k n + j, and the get one
    `tawa.smem.read_boxes`, which waits for, reads and releases each box in
    turn (its `consumed` arrives nowhere).
    The arithmetic is that of include/tawa/Protocol/ArefProtocol.h, which the
    protocol model checker verifies; a constant ring position is folded with
    those very functions.
  }];
  let dependentDialects = ["::tawa::TawaDialect", "::mlir::arith::ArithDialect"];
}

def ClusterMulticast : Pass<"tawa-cluster-multicast", "::tawa::tt::FuncOp"> {
  let summary = "run a persistent kernel as 2-CTA clusters that share loaded tiles through TMA multicast";
  let description = [{
    Beyond the Tawa paper (DESIGN.md §4's future work; CUTLASS's and cuBLAS's
    1x2 clusters on Hopper). Runs on lowered IR. The two CTAs of a cluster
    (ranks 0 and 1, consecutive CTA ids) walk program indices in pairs
    (2c, 2c + 1), and wherever a TMA load's coordinates are the same for
    both programs, which they compare at run time, each CTA loads half of
    the block and multicasts it into both CTAs' slots: the shared operand
    crosses L2 once per cluster instead of twice.

    Rewrites:
    - the program loop of every partition runs to nx*ny*nz rounded up to
      even, so both CTAs run the same number of tiles; an index past the
      end runs its partner's tile again (clamped) with its stores guarded
      off;
    - every `tawa.tma.load` of a host tensor map gets a `multicast` flag:
      its coordinates for this CTA's program equal those for the partner's
      (the coordinate computation is cloned with the partner's index);
    - the consumers' releases of the producer's slots (`mbarrier.arrive`
      per_warp) arrive in both CTAs (`cluster`), and those barriers expect
      twice the arrivals, so that no CTA overwrites a slot its partner
      still reads;
    - `tawa.cluster = 2` on the `tawa.warp_specialize` (the emitter adds the
      cluster barriers around the kernel and the launch's cluster shape).

    Conditions, checked on the IR (the lockstep of the two CTAs' rings
    depends on them): a persistent kernel (`-tawa-persistent-programs`) with
    one producer and one consumer partition (not ping-pong); inside the
    program loop, no loop bound, branch condition or `scf.while` depends on
    the program index, so both CTAs make the same ring positions tile after
    tile; the coordinates of the loads are pure integer arithmetic of the
    program index, loop induction variables and values both CTAs share;
    the only memory writes are the consumers' stores. With `required` an
    unmet condition is an error at the user's line; otherwise the kernel is
    left as it is.
  }];
  let options = [
    Option<"required", "required", "bool", /*default=*/"false",
           "report an error when the kernel cannot use clusters">
  ];
  let dependentDialects = ["::tawa::TawaDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def BarrierArrivalCheck : Pass<"tawa-barrier-arrival-check", "::tawa::tt::FuncOp"> {
  let summary = "check that every mbarrier expects the arrivals its users make";
  let description = [{
    Runs on lowered IR, last. A phase of a ring's mbarrier completes when it
    has received the count given at `tawa.mbarrier.alloc arrivals(N)`; a
    count its users never reach hangs the kernel on the GPU, one they exceed
    completes a phase early. By the ring protocol every partition that
    arrives on a barrier does so once per phase: one elected thread for an
    `arrive_expect_tx` or a plain `arrive`, each warp for a `per_warp`
    arrive (the warps after the first for the producer's transposing warps,
    `tawa.transposer`), twice with `cluster` (the arrival reaches both CTAs).
    Partitions add up, except the consumer groups of a ping-pong kernel,
    which take turns (the largest counts). The pass computes that sum for
    every barrier and reports a mismatch as an internal error at the
    allocation, so that a lowering bug stops the compile instead of hanging
    the GPU. It leaves the IR unchanged.
  }];
}

#endif // TAWA_TRANSFORMS_PASSES_TD
