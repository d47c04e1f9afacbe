//===- TTTypes.td - types of the tt dialect ------------------*- tablegen -*-===//

#ifndef TAWA_DIALECT_TT_TTTYPES_TD
#define TAWA_DIALECT_TT_TTTYPES_TD

include "tawa/Dialect/TT/TTDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class TT_TypeDef<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<TT_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def TT_PtrType : TT_TypeDef<"Pointer", "ptr"> {
  let summary = "pointer to global (address space 1) or other memory";
  let description = [{
    `!tt.ptr<f16>` is a pointer to f16 in global memory; a non-default address
    space is printed after the pointee, `!tt.ptr<f16, 3>`. Tensors of pointers
    (`tensor<128x!tt.ptr<f16>>`) are builtin tensors of this type.
  }];
  let parameters = (ins "::mlir::Type":$pointeeType, "int":$addressSpace);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$pointeeType,
                                        "int":$addressSpace), [{
      return $_get(pointeeType.getContext(), pointeeType, addressSpace);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let skipDefaultBuilders = 1;
}

def TT_TensorDescType : TT_TypeDef<"TensorDesc", "tensordesc"> {
  let summary = "TMA tensor descriptor with a fixed block (box) shape";
  let description = [{
    `!tt.tensordesc<tensor<128x64xf16>>` describes a global tensor that is read
    and written in blocks of the given shape and element type through the
    Tensor Memory Accelerator.
  }];
  let parameters = (ins "::mlir::RankedTensorType":$blockType);
  let assemblyFormat = "`<` $blockType `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def TT_Float : AnyTypeOf<[F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F16, BF16, F32, F64]>;
def TT_FloatTensor : RankedTensorOf<[TT_Float]>;
def TT_FloatLike : AnyTypeOf<[TT_Float, TT_FloatTensor]>;

def TT_Int : AnyTypeOf<[I1, I8, I16, I32, I64]>;
def TT_IntTensor : RankedTensorOf<[TT_Int]>;
def TT_IntLike : AnyTypeOf<[TT_Int, TT_IntTensor]>;

def TT_BoolTensor : RankedTensorOf<[I1]>;
def TT_BoolLike : AnyTypeOf<[I1, TT_BoolTensor]>;

def TT_I32Like : AnyTypeOf<[I32, RankedTensorOf<[I32]>]>;

def TT_PtrTensor : RankedTensorOf<[TT_PtrType]>;
def TT_PtrLike : AnyTypeOf<[TT_PtrType, TT_PtrTensor]>;

def TT_Type : AnyTypeOf<[TT_FloatLike, TT_IntLike, TT_PtrLike, Index]>;
def TT_Tensor : RankedTensorOf<[TT_Float, TT_Int, TT_PtrType]>;
def TT_ScalarOrTensor : AnyTypeOf<[TT_Float, TT_Int, TT_PtrType, TT_Tensor]>;


#endif // TAWA_DIALECT_TT_TTTYPES_TD
