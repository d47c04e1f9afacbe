//===- Verifier.h - the tGraph's invariants ---------------------*- C++ -*-===//
//
// Checks a tGraph against the invariants of its form (docs/MEGAKERNEL.md,
// "Verifier"); every pass's output is verified. Messages name the entity and,
// for a parsed graph, its line: "line 12: task 3: waits on event 9, which
// does not exist".
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_VERIFIER_H
#define TAWA_MEGA_VERIFIER_H

#include "tawa/Mega/TGraph.h"

#include <string>
#include <vector>

namespace tawa::mega {

/// Returns the violations found (empty when the graph is well formed), at
/// most `maxErrors`. Later checks that depend on earlier ones (cycles need
/// valid ids) are skipped when those fail.
std::vector<std::string> verifyGraph(const TGraph &g, size_t maxErrors = 20);

} // namespace tawa::mega

#endif // TAWA_MEGA_VERIFIER_H
