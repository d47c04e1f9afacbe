//===- Scheduler.cpp - the seeded random task scheduler -------------------===//

#include "tawa/Interpreter/Scheduler.h"

namespace tawa::interp {

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SeededScheduler::SeededScheduler(uint64_t seed) : rng(seed) {
  // Seeds 1, 2, 3, 4 (the first schedules tawa-check tries) take each
  // longest burst in turn, lock step first.
  static constexpr unsigned kBursts[] = {1, 4, 32, 1024};
  burstLimit = kBursts[(seed + 3) % 4];
}

uint64_t SeededScheduler::next() { return rng.next(); }

size_t SeededScheduler::pick(size_t runnable) {
  return runnable <= 1 ? 0 : static_cast<size_t>(next() % runnable);
}

unsigned SeededScheduler::burst() {
  return burstLimit == 1 ? 1 : 1 + static_cast<unsigned>(next() % burstLimit);
}

} // namespace tawa::interp
