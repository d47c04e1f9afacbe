//===- Scheduler.h - the seeded random task scheduler -----------*- C++ -*-===//
//
// The partitions of a warp-specialized program run as tasks; at every
// scheduling point the scheduler picks one of the tasks that can make
// progress and lets it run a burst of operations. Everything follows from the
// seed (SplitMix64, no std:: distributions, whose results differ between
// standard libraries), so a seed names one interleaving on every machine.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_SCHEDULER_H
#define TAWA_INTERPRETER_SCHEDULER_H

#include <cstddef>
#include <cstdint>

namespace tawa::interp {

/// SplitMix64 (Steele, Lea, Flood 2014): the interpreter's one source of
/// randomness, for schedules and for input data.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state;
};

class SeededScheduler {
public:
  explicit SeededScheduler(uint64_t seed);

  /// Index of the task to run among `runnable` (> 0) candidates.
  size_t pick(size_t runnable);
  /// How many operations the picked task may run before the next pick. The
  /// seed also chooses the longest burst (1, 4, 32 or 1024 operations), so
  /// that some seeds switch tasks at every operation and others let one
  /// partition run far ahead of the rest.
  unsigned burst();
  unsigned maxBurst() const { return burstLimit; }

  /// The next raw 64-bit draw.
  uint64_t next();

private:
  SplitMix64 rng;
  unsigned burstLimit;
};

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_SCHEDULER_H
