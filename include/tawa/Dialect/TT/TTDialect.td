//===- TTDialect.td - tawa's definition of Triton's tt dialect -*- tablegen -*-===//
//
// tawa reads the TTIR that Triton 3.6 prints. These definitions are written from
// the printed text format and Triton's documentation; they parse exactly that
// text and print it back.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_DIALECT_TT_TTDIALECT_TD
#define TAWA_DIALECT_TT_TTDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def TT_Dialect : Dialect {
  let name = "tt";
  let cppNamespace = "::tawa::tt";
  let summary = "Triton's tile IR (TTIR), as tawa reads it";
  let description = [{
    The input dialect of tawa: Triton's `tt` operations, types and attributes
    as Triton 3.6 prints them. The dialect accepts unknown operations written
    in MLIR's generic form so that constructs tawa has no definition for still
    parse and reach the supported-subset check, which reports them at the
    user's source location.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 0;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class TT_Op<string mnemonic, list<Trait> traits = []>
    : Op<TT_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enumerations (printed as bare keywords, as Triton prints them)
//===----------------------------------------------------------------------===//

def TT_ProgramDim : I32EnumAttr<"ProgramIDDim", "program id dimension", [
    I32EnumAttrCase<"X", 0, "x">,
    I32EnumAttrCase<"Y", 1, "y">,
    I32EnumAttrCase<"Z", 2, "z">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_InputPrecision : I32EnumAttr<"InputPrecision", "tt.dot input precision", [
    I32EnumAttrCase<"TF32", 0, "tf32">,
    I32EnumAttrCase<"TF32x3", 1, "tf32x3">,
    I32EnumAttrCase<"IEEE", 2, "ieee">,
    I32EnumAttrCase<"BF16x3", 3, "bf16x3">,
    I32EnumAttrCase<"BF16x6", 4, "bf16x6">,
    I32EnumAttrCase<"BF16", 5, "bf16">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_RoundingMode : I32EnumAttr<"RoundingMode", "floating-point rounding mode", [
    I32EnumAttrCase<"RTZ", 0, "rtz">,
    I32EnumAttrCase<"RTNE", 1, "rtne">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_CacheModifier : I32EnumAttr<"CacheModifier", "cache modifier", [
    I32EnumAttrCase<"NONE", 1, "none">,
    I32EnumAttrCase<"CA", 2, "ca">,
    I32EnumAttrCase<"CG", 3, "cg">,
    I32EnumAttrCase<"WB", 4, "wb">,
    I32EnumAttrCase<"CS", 5, "cs">,
    I32EnumAttrCase<"WT", 6, "wt">,
    I32EnumAttrCase<"CV", 7, "cv">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_EvictionPolicy : I32EnumAttr<"EvictionPolicy", "eviction policy", [
    I32EnumAttrCase<"NORMAL", 1, "evict_normal">,
    I32EnumAttrCase<"EVICT_FIRST", 2, "evict_first">,
    I32EnumAttrCase<"EVICT_LAST", 3, "evict_last">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_PaddingOption : I32EnumAttr<"PaddingOption", "padding for out-of-bounds loads", [
    I32EnumAttrCase<"PAD_ZERO", 1, "zero">,
    I32EnumAttrCase<"PAD_NAN", 2, "nan">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_RMWOp : I32EnumAttr<"RMWOp", "atomic read-modify-write kind", [
    I32EnumAttrCase<"AND", 1, "and">,
    I32EnumAttrCase<"OR", 2, "or">,
    I32EnumAttrCase<"XOR", 3, "xor">,
    I32EnumAttrCase<"ADD", 4, "add">,
    I32EnumAttrCase<"FADD", 5, "fadd">,
    I32EnumAttrCase<"MAX", 6, "max">,
    I32EnumAttrCase<"MIN", 7, "min">,
    I32EnumAttrCase<"UMAX", 8, "umax">,
    I32EnumAttrCase<"UMIN", 9, "umin">,
    I32EnumAttrCase<"XCHG", 10, "exch">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_MemSemantic : I32EnumAttr<"MemSemantic", "memory ordering", [
    I32EnumAttrCase<"RELAXED", 1, "relaxed">,
    I32EnumAttrCase<"ACQUIRE", 2, "acquire">,
    I32EnumAttrCase<"RELEASE", 3, "release">,
    I32EnumAttrCase<"ACQUIRE_RELEASE", 4, "acq_rel">]> {
  let cppNamespace = "::tawa::tt";
}

def TT_MemSyncScope : I32EnumAttr<"MemSyncScope", "memory scope", [
    I32EnumAttrCase<"GPU", 1, "gpu">,
    I32EnumAttrCase<"CTA", 2, "cta">,
    I32EnumAttrCase<"SYSTEM", 3, "sys">]> {
  let cppNamespace = "::tawa::tt";
}

#endif // TAWA_DIALECT_TT_TTDIALECT_TD
