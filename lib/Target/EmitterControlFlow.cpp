//===- EmitterControlFlow.cpp - values, scalars and control flow -------===//
//
// Values and their C++ names, the op dispatcher, and scf loops, branches
// and while loops as C++ control flow.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

using namespace mlir;

namespace tawa {
namespace cuda {

//===----------------------------------------------------------------------===//
// Values and types
//===----------------------------------------------------------------------===//

FailureOr<std::string> Emitter::scalarType(Type type, Location loc) {
  if (auto ptr = dyn_cast<tt::PointerType>(type)) {
    FailureOr<std::string> pointee = scalarType(ptr.getPointeeType(), loc);
    if (failed(pointee))
      return failure();
    return *pointee + " *";
  }
  if (type.isInteger(1))
    return std::string("bool");
  if (type.isInteger(8))
    return std::string("int8_t");
  if (type.isInteger(16))
    return std::string("int16_t");
  if (type.isInteger(32))
    return std::string("int32_t");
  if (type.isInteger(64))
    return std::string("int64_t");
  if (type.isF32())
    return std::string("float");
  if (type.isF16())
    return std::string("__half");
  if (type.isBF16())
    return std::string("__nv_bfloat16");
  if (isa<Float8E4M3FNType>(type))
    return std::string("__nv_fp8_e4m3");
  error(loc) << "unsupported scalar type " << type;
  return failure();
}

std::string Emitter::lookup(Value v) {
  auto it = names.find(v);
  if (it != names.end())
    return it->second;
  // Only reachable for values the checks above let through unnamed.
  if (Operation *def = v.getDefiningOp())
    error(def) << "value used before it was emitted";
  else
    error(func) << "block argument without a C++ name";
  return "/*?*/0";
}

std::string Emitter::bind(Value v, StringRef prefix) {
  std::string name = fresh(prefix);
  names[v] = name;
  return name;
}

//===----------------------------------------------------------------------===//
// Blocks and ops
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitBlock(Block &block) {
  for (Operation &op : block) {
    if (failed(emitOp(&op)))
      return failure();
  }
  return success(!hadError);
}

LogicalResult Emitter::emitOp(Operation *op) {
  if (isa<scf::YieldOp, tt::ReturnOp, scf::ConditionOp>(op))
    return success(); // handled by the parent
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (isa<RankedTensorType>(c.getType())) {
      // Splat tensor constants are materialized where used (accumulator
      // init, epilogue operand), inside the partition that needs them.
      if (!isa<SplatElementsAttr>(c.getValue()))
        return error(op) << "only splat tensor constants are supported";
      return success();
    }
  }
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return emitFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return emitIf(ifOp);
  if (auto whileOp = dyn_cast<scf::WhileOp>(op))
    return emitWhile(whileOp);
  if (auto ws = dyn_cast<WarpSpecializeOp>(op))
    return emitWarpSpecialize(ws);
  if (auto dot = dyn_cast<DotAsyncOp>(op))
    return emitDotAsync(dot);
  if (auto wait = dyn_cast<DotWaitOp>(op))
    return emitDotWait(wait);
  if (auto store = dyn_cast<tt::DescriptorStoreOp>(op))
    return emitStore(store);
  if (isa<ClipRowsOp>(op))
    return success(); // read by the stores through it (emitStore)
  if (auto store = dyn_cast<tt::StoreOp>(op))
    return emitPointerStore(store);
  if (auto make = dyn_cast<tt::MakeTensorDescOp>(op))
    return emitMakeTensorDesc(make);
  if (isa<PingPongWaitOp, PingPongArriveOp, MBarrierWaitOp, MBarrierExpectTxOp,
          MBarrierArriveOp, TmaLoadOp, SlotViewOp, SmemTransposeOp>(op))
    return emitMemoryOp(op);

  if (auto alloc = dyn_cast<SmemAllocOp>(op)) {
    // Placed by emit() before the body is translated.
    return success();
  }
  if (isa<MBarrierAllocOp>(op))
    return success();

  if (auto pid = dyn_cast<tt::GetProgramIdOp>(op)) {
    StringRef a = tt::stringifyProgramIDDim(pid.getAxis());
    line() << "const int32_t " << bind(pid.getResult()) << " = "
           << (options.megaTask ? "program." : "blockIdx.") << a << ";\n";
    return success();
  }
  if (auto group = dyn_cast<PingPongGroupOp>(op)) {
    if (region != Region::Consumer)
      return error(op) << "ping-pong group outside a consumer partition";
    line() << "const int32_t " << bind(group.getResult()) << " = wg;\n";
    return success();
  }
  if (auto num = dyn_cast<tt::GetNumProgramsOp>(op)) {
    StringRef a = tt::stringifyProgramIDDim(num.getAxis());
    line() << "const int32_t " << bind(num.getResult()) << " = "
           << (options.megaTask ? "programs." : "gridDim.") << a << ";\n";
    return success();
  }

  if (auto trans = dyn_cast<tt::TransOp>(op)) {
    auto it = tiles.find(trans->getOperand(0));
    auto order = trans->getAttrOfType<DenseI32ArrayAttr>("order");
    if (it == tiles.end() || !order || order.size() != 2 || order[0] != 1 ||
        order[1] != 0)
      return error(op)
             << "only a [1, 0] transpose of a shared-memory tile is supported";
    SmemTile t = it->second;
    t.transposed = !t.transposed;
    tiles[trans->getResult(0)] = t;
    return success();
  }
  if (auto load = dyn_cast<SmemLoadOp>(op))
    return emitSmemLoad(load);
  if (auto read = dyn_cast<SmemReadBoxesOp>(op))
    return emitSmemReadBoxes(read);
  if (auto dot = dyn_cast<tt::DotOp>(op))
    return emitDot(dot);
  if (auto reduce = dyn_cast<tt::ReduceOp>(op))
    return emitReduce(reduce);
  if (isa<arith::TruncFOp, tt::FpToFpOp>(op) &&
      layoutAttrOf(op->getResult(0)) == "a_reg")
    return emitARegConversion(op);
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    // An accumulator converted for a TMA store is staged by the store.
    if (isa<RankedTensorType>(trunc.getType()) && !trunc->use_empty() &&
        llvm::all_of(trunc->getUsers(), [](Operation *u) {
          return isa<tt::DescriptorStoreOp>(u);
        })) {
      FailureOr<Acc> acc = accOf(trunc.getIn(), op);
      if (failed(acc))
        return failure();
      Type elem = getElementTypeOrSelf(trunc.getType());
      if (!elem.isF16() && !elem.isBF16())
        return error(op) << "only f16 and bf16 outputs are supported";
      converted[trunc.getResult()] = {*acc, elem};
      return success();
    }
  }
  if (op->getNumResults() == 1 &&
      isa<RankedTensorType>(op->getResult(0).getType()))
    return emitTensorOp(op);
  if (op->getNumResults() == 1 &&
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return emitScalarArith(op);
  if (isa<tt::AddPtrOp, tt::IntToPtrOp, tt::PtrToIntOp, tt::LoadOp>(op))
    return emitScalarArith(op);
  return error(op) << "unsupported operation '" << op->getName() << "'";
}

LogicalResult Emitter::assignYield(ValueRange yielded,
                                   ArrayRef<std::string> vars,
                                   ValueRange targets, Operation *op) {
  // Yields are parallel assignments (a rotation such as yield %b, %a is
  // common), so read every operand into a temporary first.
  SmallVector<std::pair<std::string, std::string>> moves;
  SmallVector<std::pair<Reg, Reg>> arrayMoves;
  SmallVector<std::pair<ARegTile, ARegTile>> aRegMoves;
  for (auto [i, v] : llvm::enumerate(yielded)) {
    Value target = targets[i];
    if (auto carried = aRegs.find(target); carried != aRegs.end()) {
      auto from = aRegs.find(v);
      if (from == aRegs.end())
        return error(op) << "a loop-carried register operand must be "
                            "yielded a converted tile";
      ARegTile tmp = from->second;
      tmp.array = fresh("next");
      line() << "uint32_t " << tmp.array << aRegShape(tmp) << ";\n";
      emitARegCopy(tmp, from->second);
      aRegMoves.push_back({carried->second, tmp});
      continue;
    }
    if (auto carried = regs.find(target); carried != regs.end()) {
      const Reg into = carried->second;
      FailureOr<Reg> tmp =
          declareReg(into.lay, cast<RankedTensorType>(v.getType()), op, "next");
      if (failed(tmp) || failed(emitRegCopy(*tmp, v, op)))
        return failure();
      arrayMoves.push_back({into, *tmp});
      continue;
    }
    if (isa<RankedTensorType>(v.getType())) {
      FailureOr<Acc> acc = accOf(v, op);
      if (failed(acc))
        return failure();
      if (acc->name != accs[target].name)
        return error(op) << "an accumulator chain must stay in one register "
                            "array (yielded value is a different one)";
      continue;
    }
    std::string tmp = fresh("next");
    FailureOr<std::string> type = scalarType(v.getType(), op->getLoc());
    if (failed(type))
      return failure();
    line() << "const " << *type << " " << tmp << " = " << lookup(v) << ";\n";
    moves.push_back({vars[i], tmp});
  }
  for (auto &[var, tmp] : moves)
    line() << var << " = " << tmp << ";\n";
  for (auto &[into, tmp] : aRegMoves)
    emitARegCopy(into, tmp);
  for (auto &[into, tmp] : arrayMoves) {
    emitRegLoops(into);
    line() << "    " << into.array << regIndex(into.lay) << " = " << tmp.array
           << regIndex(into.lay) << ";\n";
  }
  return success();
}

LogicalResult Emitter::emitFor(scf::ForOp op) {
  if (!op.getInductionVar().getType().isInteger(32))
    return error(op) << "only i32 loops are supported";
  if (op.getUnsignedCmp())
    return error(op) << "unsigned loop bounds are not supported";
  SmallVector<std::string> vars;
  SmallVector<Acc> lazyAfter;
  // Accumulator chains: loop-carried tensors that feed a product directly.
  auto feedsProduct = [&](Value arg) {
    return isa<RankedTensorType>(arg.getType()) && arg.hasOneUse() &&
           isa<DotAsyncOp>(*arg.getUsers().begin()) &&
           arg.getUsers().begin()->getBlock() == op.getBody();
  };
  int64_t chains = llvm::count_if(op.getRegionIterArgs(), feedsProduct);
  for (auto [init, arg, res] :
       llvm::zip(op.getInitArgs(), op.getRegionIterArgs(), op.getResults())) {
    if (isa<RankedTensorType>(arg.getType())) {
      StringRef lay = layoutAttrOf(arg);
      if (lay == "row" || lay == "col") {
        // Running statistics (softmax max and sum): a register array the
        // yield copies into.
        std::string var;
        if (failed(bindCarriedReg(init, arg, res, op, var)))
          return failure();
        vars.push_back(var);
        continue;
      }
      if (lay == "a_reg") {
        // A product's register A operand carried to the next iteration (P of
        // a coarse-pipelined attention loop).
        auto init_ = aRegs.find(init);
        if (init_ == aRegs.end())
          return error(op) << "a loop-carried register operand must start "
                              "from a converted tile";
        ARegTile carried = init_->second;
        carried.array = fresh("carried");
        line() << "uint32_t " << carried.array << aRegShape(carried) << ";\n";
        emitARegCopy(carried, init_->second);
        aRegs[arg] = carried;
        aRegs[res] = carried;
        vars.push_back(carried.array);
        continue;
      }
      if (!lay.empty() && lay != "acc")
        return error(op) << "a loop-carried register tensor in the '" << lay
                         << "' layout is not supported by CUDA emission";
      // Zero only where the loop runs no product (the first product then
      // ignores the registers: scale-d 0). With two chains (paired programs)
      // that fill after the loop makes ptxas serialize every wgmma (C7515),
      // so those are zeroed before the loop instead.
      bool lazy = chains == 1 && !accs.count(init) && isZeroSplat(init) &&
                  feedsProduct(arg);
      FailureOr<Acc> acc = accOf(init, op, /*fill=*/!lazy);
      if (failed(acc))
        return failure();
      if (lazy) {
        std::string flag = acc->name + "Live";
        line() << "bool " << flag << " = false; // a product was issued\n";
        lazyZero[acc->name] = flag;
        lazyAfter.push_back(*acc);
      }
      accs[arg] = *acc;
      accs[res] = *acc;
      vars.push_back(acc->name);
      continue;
    }
    FailureOr<std::string> type = scalarType(arg.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("iter");
    line() << *type << " " << var << " = " << lookup(init) << ";\n";
    names[arg] = var;
    names[res] = var;
    vars.push_back(var);
  }
  std::string iv = fresh("k");
  names[op.getInductionVar()] = iv;
  line() << "for (int32_t " << iv << " = " << lookup(op.getLowerBound()) << "; "
         << iv << " < " << lookup(op.getUpperBound()) << "; " << iv
         << " += " << lookup(op.getStep()) << ") {\n";
  ++indent;
  if (failed(emitBlock(*op.getBody())))
    return failure();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  if (failed(assignYield(yield.getOperands(), vars, op.getRegionIterArgs(),
                         yield)))
    return failure();
  --indent;
  line() << "}\n";
  for (const Acc &acc : lazyAfter) {
    std::string flag = lazyZero[acc.name];
    line() << "if (!" << flag << ") { // the loop ran zero times\n";
    ++indent;
    emitFill(acc, "0.0f");
    --indent;
    line() << "}\n";
    lazyZero.erase(acc.name);
  }
  return success();
}

LogicalResult Emitter::emitIf(scf::IfOp op) {
  SmallVector<std::string> vars;
  // Tensor results live in arrays declared before the if, which each branch
  // fills from what it yields (a pipelined loop under a trip-count guard
  // yields its accumulator and statistics this way).
  SmallVector<Value> scalarResults;
  SmallVector<std::pair<Value, Reg>> tensorResults;
  SmallVector<std::pair<Value, Acc>> accResults;
  for (Value res : op.getResults()) {
    if (auto type = dyn_cast<RankedTensorType>(res.getType())) {
      FailureOr<Lay> lay = layoutOf(res, op);
      if (failed(lay))
        return failure();
      if (*lay == Lay::Acc && type.getElementType().isF32() &&
          type.getRank() == 2) {
        Acc acc{fresh("acc"), type.getShape()[0] / (64 * groups),
                type.getShape()[1]};
        line() << "float " << acc.name << "[" << acc.frags << "]["
               << acc.cols / 2 << "];\n";
        accResults.push_back({res, acc});
        continue;
      }
      FailureOr<Reg> r = declareReg(*lay, type, op, "sel");
      if (failed(r))
        return failure();
      tensorResults.push_back({res, *r});
      continue;
    }
    scalarResults.push_back(res);
  }
  auto fillTensorResults = [&](scf::YieldOp yield) -> LogicalResult {
    for (auto &[res, acc] : accResults) {
      Reg shape;
      shape.lay = Lay::Acc;
      shape.array = acc.name;
      shape.frags = acc.frags;
      shape.cols = acc.cols;
      if (failed(emitRegCopy(
              shape, yield.getOperand(cast<OpResult>(res).getResultNumber()),
              yield)))
        return failure();
    }
    for (auto &[res, r] : tensorResults)
      if (failed(emitRegCopy(
              r, yield.getOperand(cast<OpResult>(res).getResultNumber()),
              yield)))
        return failure();
    return success();
  };
  auto scalarYields = [&](scf::YieldOp yield) {
    SmallVector<Value> out;
    for (Value res : scalarResults)
      out.push_back(yield.getOperand(cast<OpResult>(res).getResultNumber()));
    return out;
  };
  for (Value res : scalarResults) {
    FailureOr<std::string> type = scalarType(res.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("sel");
    line() << *type << " " << var << ";\n";
    names[res] = var;
    vars.push_back(var);
  }
  // The then branch's accumulator arrays are declared here, before the if
  // (inserted at `mark` once the branch is written), for the else branch.
  size_t mark = bodyStorage.size();
  SmallVector<Acc> hoisted;
  SmallVector<Acc> *outerHoisted = hoistedAccs;
  SmallVector<Acc> outerReusable = std::move(reusableAccs);
  reusableAccs.clear();
  llvm::scope_exit restore([&] {
    hoistedAccs = outerHoisted;
    reusableAccs = std::move(outerReusable);
  });
  line() << "if (" << lookup(op.getCondition()) << ") {\n";
  ++indent;
  hoistedAccs = &hoisted;
  if (failed(emitBlock(*op.thenBlock())) ||
      failed(fillTensorResults(op.thenYield())) ||
      failed(
          assignYield(scalarYields(op.thenYield()), vars, scalarResults, op)))
    return failure();
  hoistedAccs = nullptr;
  --indent;
  std::string declarations;
  for (const Acc &acc : hoisted)
    declarations += std::string(2 * indent, ' ') + "float " + acc.name + "[" +
                    std::to_string(acc.frags) + "][" +
                    std::to_string(acc.cols / 2) + "];\n";
  bodyStorage.insert(mark, declarations);
  if (!op.getElseRegion().empty()) {
    line() << "} else {\n";
    ++indent;
    reusableAccs = hoisted;
    if (failed(emitBlock(*op.elseBlock())) ||
        failed(fillTensorResults(op.elseYield())) ||
        failed(
            assignYield(scalarYields(op.elseYield()), vars, scalarResults, op)))
      return failure();
    --indent;
  }
  line() << "}\n";
  for (auto &[res, acc] : accResults)
    accs[res] = acc;
  for (auto &[res, r] : tensorResults)
    regs[res] = r;
  return success();
}

LogicalResult Emitter::emitWhile(scf::WhileOp op) {
  // while (true) { before; if (!cond) break; after; } with the before
  // arguments as variables; results are the condition's forwarded values.
  SmallVector<std::string> vars, outs;
  for (auto [init, arg] : llvm::zip(op.getInits(), op.getBeforeArguments())) {
    if (isa<RankedTensorType>(arg.getType()))
      return error(op) << "tensor values in scf.while are not supported";
    FailureOr<std::string> type = scalarType(arg.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("w");
    line() << *type << " " << var << " = " << lookup(init) << ";\n";
    names[arg] = var;
    vars.push_back(var);
  }
  for (Value res : op.getResults()) {
    FailureOr<std::string> type = scalarType(res.getType(), op.getLoc());
    if (failed(type))
      return failure();
    std::string var = fresh("wout");
    line() << *type << " " << var << ";\n";
    names[res] = var;
    outs.push_back(var);
  }
  line() << "while (true) {\n";
  ++indent;
  if (failed(emitBlock(op.getBefore().front())))
    return failure();
  scf::ConditionOp cond = op.getConditionOp();
  for (auto [v, out] : llvm::zip(cond.getArgs(), outs))
    line() << out << " = " << lookup(v) << ";\n";
  line() << "if (!" << lookup(cond.getCondition()) << ")\n";
  line() << "  break;\n";
  for (auto [arg, out] : llvm::zip(op.getAfterArguments(), outs))
    names[arg] = out;
  if (failed(emitBlock(op.getAfter().front())))
    return failure();
  auto yield = cast<scf::YieldOp>(op.getAfter().front().getTerminator());
  if (failed(assignYield(yield.getOperands(), vars, op.getBeforeArguments(),
                         yield)))
    return failure();
  --indent;
  line() << "}\n";
  return success();
}

} // namespace cuda
} // namespace tawa
