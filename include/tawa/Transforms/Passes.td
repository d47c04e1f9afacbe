//===- Passes.td - tawa passes --------------------------------*- tablegen -*-===//

#ifndef TAWA_TRANSFORMS_PASSES_TD
#define TAWA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // TAWA_TRANSFORMS_PASSES_TD
