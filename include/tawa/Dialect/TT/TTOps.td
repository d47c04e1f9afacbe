//===- TTOps.td - operations of the tt dialect ---------------*- tablegen -*-===//
//
// Assembly formats reproduce what Triton 3.6 prints. Operations Triton prints in
// generic form (tt.reduce, tt.scan) have no custom format here either.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_DIALECT_TT_TTOPS_TD
#define TAWA_DIALECT_TT_TTOPS_TD

include "tawa/Dialect/TT/TTDialect.td"
include "tawa/Dialect/TT/TTTypes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"


//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

def TT_FuncOp : TT_Op<"func", [AffineScope, AutomaticAllocationScope,
    FunctionOpInterface, IsolatedFromAbove, CallableOpInterface]> {
  let summary = "a Triton kernel or device function";
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// FunctionOpInterface.
    ::mlir::Region *getCallableRegion() { return isExternal() ? nullptr : &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
    /// SymbolOpInterface.
    bool isDeclaration() { return isExternal(); }
  }];
}

def TT_ReturnOp : TT_Op<"return", [Pure, HasParent<"FuncOp">, ReturnLike,
    Terminator]> {
  let summary = "return from a tt.func";
  let arguments = (ins Variadic<AnyType>:$srcs);
  let assemblyFormat = "attr-dict ($srcs^ `:` type($srcs))?";
  let hasVerifier = 1;
}

def TT_CallOp : TT_Op<"call", [CallOpInterface,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "call a tt.func";
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$operands,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let results = (outs Variadic<AnyType>);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
  let extraClassDeclaration = [{
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return (*this)->getAttrOfType<::mlir::SymbolRefAttr>("callee");
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr("callee", ::llvm::cast<::mlir::SymbolRefAttr>(callee));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getOperands(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() { return getOperandsMutable(); }
  }];
}

//===----------------------------------------------------------------------===//
// Program ids
//===----------------------------------------------------------------------===//

def TT_GetProgramIdOp : TT_Op<"get_program_id", [Pure]> {
  let summary = "index of this program along a grid dimension";
  let arguments = (ins TT_ProgramDim:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def TT_GetNumProgramsOp : TT_Op<"get_num_programs", [Pure]> {
  let summary = "number of programs along a grid dimension";
  let arguments = (ins TT_ProgramDim:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def TT_MakeRangeOp : TT_Op<"make_range", [Pure]> {
  let summary = "the 1-D tensor [start, end)";
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TT_SplatOp : TT_Op<"splat", [Pure]> {
  let summary = "a tensor whose every element is the scalar operand";
  let arguments = (ins AnyTypeOf<[TT_Float, TT_Int, TT_PtrType]>:$src);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def TT_UnsplatOp : TT_Op<"unsplat", [Pure]> {
  let summary = "the single element of a one-element tensor";
  let arguments = (ins TT_Tensor:$src);
  let results = (outs AnyTypeOf<[TT_Float, TT_Int, TT_PtrType]>:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def TT_BroadcastOp : TT_Op<"broadcast", [Pure]> {
  let summary = "broadcast size-1 dimensions to a larger shape";
  let arguments = (ins TT_Tensor:$src);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def TT_ExpandDimsOp : TT_Op<"expand_dims", [Pure]> {
  let summary = "insert a size-1 dimension at `axis`";
  let arguments = (ins TT_Tensor:$src, I32Attr:$axis);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def TT_TransOp : TT_Op<"trans", [Pure]> {
  let summary = "permute the dimensions of a tensor";
  let arguments = (ins TT_Tensor:$src, DenseI32ArrayAttr:$order);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def TT_ReshapeOp : TT_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tensor with another shape of equal size";
  let arguments = (ins TT_Tensor:$src, UnitAttr:$allow_reorder,
                       UnitAttr:$efficient_layout);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = [{
    $src (`allow_reorder` $allow_reorder^)? (`efficient_layout` $efficient_layout^)?
    attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TT_CatOp : TT_Op<"cat", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "concatenate two tensors";
  let arguments = (ins TT_Tensor:$lhs, TT_Tensor:$rhs);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
}

def TT_JoinOp : TT_Op<"join", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "stack two tensors along a new minor dimension of size 2";
  let arguments = (ins TT_Tensor:$lhs, TT_Tensor:$rhs);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
}

def TT_SplitOp : TT_Op<"split", [Pure, AllTypesMatch<["outLHS", "outRHS"]>]> {
  let summary = "split the minor dimension of size 2 into two tensors";
  let arguments = (ins TT_Tensor:$src);
  let results = (outs TT_Tensor:$outLHS, TT_Tensor:$outRHS);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($outLHS)";
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

def TT_DotOp : TT_Op<"dot", [Pure, AllTypesMatch<["c", "d"]>]> {
  let summary = "matrix product d = a * b + c";
  let description = [{
    `a` is MxK, `b` is KxN, `c` and `d` are MxN (an optional leading batch
    dimension is allowed on all four).
  }];
  let arguments = (ins TT_Tensor:$a, TT_Tensor:$b, TT_Tensor:$c,
      DefaultValuedAttr<TT_InputPrecision,
                        "::tawa::tt::InputPrecision::IEEE">:$inputPrecision,
      DefaultValuedAttr<I32Attr, "0">:$maxNumImpreciseAcc);
  let results = (outs TT_Tensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`,` `inputPrecision` `=` $inputPrecision^)? attr-dict `:`
    type($a) `*` type($b) `->` type($d)
  }];
  let hasVerifier = 1;
}

def TT_ReduceOp : TT_Op<"reduce", [Pure, SingleBlock]> {
  let summary = "reduce tensors along an axis with a combiner region";
  let arguments = (ins Variadic<TT_Tensor>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<TT_Type>:$result);
  let regions = (region SizedRegion<1>:$combineOp);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def TT_ReduceReturnOp : TT_Op<"reduce.return", [HasParent<"ReduceOp">, Pure,
    Terminator, ReturnLike]> {
  let summary = "terminator of a tt.reduce combiner";
  let arguments = (ins Variadic<AnyType>:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

def TT_ScanOp : TT_Op<"scan", [Pure, SingleBlock]> {
  let summary = "inclusive scan along an axis with a combiner region";
  let arguments = (ins Variadic<TT_Tensor>:$srcs, I32Attr:$axis, BoolAttr:$reverse);
  let results = (outs Variadic<TT_Tensor>:$result);
  let regions = (region SizedRegion<1>:$combineOp);
}

def TT_ScanReturnOp : TT_Op<"scan.return", [HasParent<"ScanOp">, Pure,
    Terminator, ReturnLike]> {
  let summary = "terminator of a tt.scan combiner";
  let arguments = (ins Variadic<AnyType>:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

def TT_FpToFpOp : TT_Op<"fp_to_fp", [Pure]> {
  let summary = "floating-point conversion, including fp8 types";
  let arguments = (ins TT_FloatLike:$src, OptionalAttr<TT_RoundingMode>:$rounding);
  let results = (outs TT_FloatLike:$result);
  let assemblyFormat = [{
    $src attr-dict (`,` `rounding` `=` $rounding^)? `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TT_PreciseSqrtOp : TT_Op<"precise_sqrt", [Pure, SameOperandsAndResultType]> {
  let summary = "correctly rounded square root";
  let arguments = (ins TT_FloatLike:$x);
  let results = (outs TT_FloatLike:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def TT_PreciseDivFOp : TT_Op<"precise_divf", [Pure, SameOperandsAndResultType]> {
  let summary = "correctly rounded division";
  let arguments = (ins TT_FloatLike:$x, TT_FloatLike:$y);
  let results = (outs TT_FloatLike:$result);
  let assemblyFormat = "$x `,` $y attr-dict `:` type($x)";
}

def TT_MulhiUIOp : TT_Op<"mulhiui", [Pure, SameOperandsAndResultType]> {
  let summary = "high half of an unsigned integer product";
  let arguments = (ins TT_IntLike:$x, TT_IntLike:$y);
  let results = (outs TT_IntLike:$result);
  let assemblyFormat = "$x `,` $y attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

def TT_AddPtrOp : TT_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "advance pointers by element offsets";
  let arguments = (ins TT_PtrLike:$ptr, TT_IntLike:$offset);
  let results = (outs TT_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)";
  let hasVerifier = 1;
}

def TT_IntToPtrOp : TT_Op<"int_to_ptr", [Pure]> {
  let summary = "reinterpret a 64-bit integer as a pointer";
  let arguments = (ins AnyTypeOf<[I64, RankedTensorOf<[I64]>]>:$src);
  let results = (outs TT_PtrLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def TT_PtrToIntOp : TT_Op<"ptr_to_int", [Pure]> {
  let summary = "reinterpret a pointer as a 64-bit integer";
  let arguments = (ins TT_PtrLike:$src);
  let results = (outs AnyTypeOf<[I64, RankedTensorOf<[I64]>]>:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def TT_BitcastOp : TT_Op<"bitcast", [Pure]> {
  let summary = "reinterpret bits as another type of the same width";
  let arguments = (ins TT_Type:$src);
  let results = (outs TT_Type:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def TT_LoadOp : TT_Op<"load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead<DefaultResource>]>,
    TypesMatchWith<"result matches the pointee of ptr", "ptr", "result",
                   "::tawa::tt::getPointeeTypeOf($_self)">,
    TypesMatchWith<"mask is i1 of the shape of ptr", "ptr", "mask",
                   "::tawa::tt::getI1SameShape($_self)",
                   "($_op.getOperands().size() <= 1) || std::equal_to<>()">,
    TypesMatchWith<"other matches the pointee of ptr", "ptr", "other",
                   "::tawa::tt::getPointeeTypeOf($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let summary = "load through a pointer or a tensor of pointers";
  let arguments = (ins TT_PtrLike:$ptr, Optional<TT_BoolLike>:$mask,
      Optional<TT_Type>:$other,
      DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundaryCheck,
      OptionalAttr<TT_PaddingOption>:$padding,
      DefaultValuedAttr<TT_CacheModifier, "::tawa::tt::CacheModifier::NONE">:$cache,
      DefaultValuedAttr<TT_EvictionPolicy, "::tawa::tt::EvictionPolicy::NORMAL">:$evict,
      DefaultValuedAttr<BoolAttr, "false">:$isVolatile);
  let results = (outs TT_Type:$result);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? (`,` $other^)?
    oilist(`cacheModifier` `=` $cache | `evictionPolicy` `=` $evict)
    attr-dict `:` type($ptr)
  }];
}

def TT_StoreOp : TT_Op<"store", [
    MemoryEffects<[MemWrite<DefaultResource>]>,
    TypesMatchWith<"value matches the pointee of ptr", "ptr", "value",
                   "::tawa::tt::getPointeeTypeOf($_self)">,
    TypesMatchWith<"mask is i1 of the shape of ptr", "ptr", "mask",
                   "::tawa::tt::getI1SameShape($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let summary = "store through a pointer or a tensor of pointers";
  let arguments = (ins TT_PtrLike:$ptr, TT_Type:$value, Optional<TT_BoolLike>:$mask,
      DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundaryCheck,
      DefaultValuedAttr<TT_CacheModifier, "::tawa::tt::CacheModifier::NONE">:$cache,
      DefaultValuedAttr<TT_EvictionPolicy, "::tawa::tt::EvictionPolicy::NORMAL">:$evict);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)?
    oilist(`cacheModifier` `=` $cache | `evictionPolicy` `=` $evict)
    attr-dict `:` type($ptr)
  }];
}

def TT_AtomicRMWOp : TT_Op<"atomic_rmw", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "atomic read-modify-write";
  let arguments = (ins TT_RMWOp:$atomic_rmw_op, TT_MemSemantic:$sem,
      TT_MemSyncScope:$scope, TT_PtrLike:$ptr, TT_Type:$val,
      Optional<TT_BoolLike>:$mask);
  let results = (outs TT_Type:$result);
  let assemblyFormat = [{
    $atomic_rmw_op `,` $sem `,` $scope `,` $ptr `,` $val (`,` $mask^)? attr-dict `:`
    functional-type(operands, $result)
  }];
}

def TT_AtomicCASOp : TT_Op<"atomic_cas", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "atomic compare-and-swap";
  let arguments = (ins TT_MemSemantic:$sem, TT_MemSyncScope:$scope,
      TT_PtrLike:$ptr, TT_Type:$cmp, TT_Type:$val);
  let results = (outs TT_Type:$result);
  let assemblyFormat = [{
    $sem `,` $scope `,` $ptr `,` $cmp `,` $val attr-dict `:`
    functional-type(operands, $result)
  }];
}

//===----------------------------------------------------------------------===//
// TMA tensor descriptors
//===----------------------------------------------------------------------===//

def TT_MakeTensorDescOp : TT_Op<"make_tensor_descriptor", [Pure, AttrSizedOperandSegments]> {
  let summary = "build a TMA descriptor on the device";
  let arguments = (ins TT_PtrType:$base, Variadic<I32>:$shape, Variadic<I64>:$strides,
                       OptionalAttr<TT_PaddingOption>:$padding);
  let results = (outs TT_TensorDescType:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` attr-dict `:` type($base) `,` type($result)
  }];
  let hasVerifier = 1;
}

def TT_DescriptorLoadOp : TT_Op<"descriptor_load", [
    MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "TMA load of one block at the given coordinates";
  let arguments = (ins TT_TensorDescType:$desc, Variadic<I32>:$indices,
      DefaultValuedAttr<TT_CacheModifier, "::tawa::tt::CacheModifier::NONE">:$cache,
      DefaultValuedAttr<TT_EvictionPolicy, "::tawa::tt::EvictionPolicy::NORMAL">:$evict);
  let results = (outs TT_Tensor:$result);
  let assemblyFormat = [{
    $desc `[` $indices `]`
    oilist(`cacheModifier` `=` $cache | `evictionPolicy` `=` $evict)
    attr-dict `:` qualified(type($desc)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TT_DescriptorStoreOp : TT_Op<"descriptor_store", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "TMA store of one block at the given coordinates";
  let arguments = (ins TT_TensorDescType:$desc, TT_Tensor:$src, Variadic<I32>:$indices);
  let assemblyFormat = [{
    $desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,` type($src)
  }];
  let hasVerifier = 1;
}

#endif // TAWA_DIALECT_TT_TTOPS_TD
