//===- Simulator.h - CPU simulation of the event-driven runtime -*- C++ -*-===//
//
// Runs a tGraph under the runtime protocol of MPK §5 (docs/MEGAKERNEL.md,
// "CPU simulation") in many seeded random orders: workers take launched
// tasks, a task's completion increments its trigger events, an event reaching
// its trigger count launches its tasks (its id range in the linear form).
// Checks, independently of the passes: every event triggers exactly once,
// every task runs exactly once, no task starts before every task whose
// written box intersects a box it reads has completed (the un-fused
// tile-level dependencies, recomputed from the boxes), and the graph drains.
// A symbolic data check runs alongside: a task's value hashes the values of
// the tiles it reads at the moment it starts, so a legal order reproduces the
// values of a reference topological order.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_SIMULATOR_H
#define TAWA_MEGA_SIMULATOR_H

#include "tawa/Mega/TGraph.h"

#include <cstdint>
#include <string>

namespace tawa::mega {

enum class SimMode {
  Auto,   ///< Hybrid for a linear graph, Jit otherwise
  Jit,    ///< every launched task goes to a shared pool any idle worker takes
  Aot,    ///< every task is queued round-robin (by id) before the run; a
          ///< worker runs its queue in order, waiting on each head's event
  Hybrid, ///< operators marked launch=jit (and empty tasks) as Jit, the
          ///< rest as Aot (MPK §5.2)
};

const char *simModeName(SimMode mode);
bool parseSimMode(const std::string &name, SimMode &mode);

struct SimOptions {
  unsigned orders = 8;   ///< random orders to run
  uint64_t seed = 1;     ///< order i uses seed + i
  unsigned workers = 16; ///< concurrent workers (tasks in flight)
  SimMode mode = SimMode::Auto;
  /// Off only to test that the data check alone catches a bad order.
  bool checkProducerOrder = true;
};

struct SimResult {
  bool ok = false;
  /// The first violation (with the seed that found it), or a summary.
  std::string message;
  unsigned ordersRun = 0;
  SimMode mode = SimMode::Auto;
  /// Hash of every task's final value, keyed by (op, tile): equal for every
  /// legal order and for every form of the same graph.
  uint64_t digest = 0;
};

SimResult simulate(const TGraph &g, const SimOptions &options);

} // namespace tawa::mega

#endif // TAWA_MEGA_SIMULATOR_H
