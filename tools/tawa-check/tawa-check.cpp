//===- tawa-check.cpp - tawa's checkers -----------------------------------===//
//
// `tawa-check COMMAND [options]`. Each command is one checker; `protocol`
// model-checks the lowered aref protocol (lib/Protocol) over a sweep of ring
// depths, MMA lags, consumer groups, tiles and trip counts; `interp` runs a
// kernel and its warp-specialized IR on the CPU interpreter (lib/Interpreter)
// and compares them. `interp` needs MLIR: it is built with the compiler.
//
//===----------------------------------------------------------------------===//

#include "AttentionModel.h"
#include "ProtocolModel.h"

#include "tawa/Protocol/ArefProtocol.h"

#ifdef TAWA_CHECK_WITH_INTERP
#include "InterpCommand.h"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace tawa::protocol;

namespace {

const char *kUsage =
    R"(usage: tawa-check COMMAND [options]

tawa's checkers.

Commands:
  protocol    model-check the lowered aref protocol (full/empty mbarriers,
              parity waits, TMA and wgmma asynchrony) over a sweep of
              configurations; 'tawa-check protocol --help' for its options
)"
#ifdef TAWA_CHECK_WITH_INTERP
    R"(  interp      run a kernel's TTIR and its warp-specialized IR on the CPU
              interpreter with interleaved partitions and aref semantics,
              and compare the results; reports mismatches, deadlocks and
              protocol violations; 'tawa-check interp --help' for options
)"
#else
    R"(  interp      not available: this tawa-check was built without the
              compiler (TAWA_ENABLE_COMPILER=OFF), which it needs
)"
#endif
    R"(
Exit status: 0 no violation, 1 violation found, 2 usage error (interp: 3
when the compiler rejects the kernel).
)";

const char *kProtocolUsage = R"(usage: tawa-check protocol [options]

Explores every interleaving of the lowered aref protocol (DESIGN.md 2.2): one
producer thread (wait empty[] with parity, arrive.expect_tx on full[], issue
TMA), asynchronous TMA completions, consumer warp groups (wait full[] with
parity, issue wgmma, wgmma.wait_group<P>, release slot k-P with one arrival
per warp, drain after each tile) and asynchronous in-order wgmma retirement,
over a ring carried across the tiles of a persistent kernel. Checks: no
deadlock, no TMA into a slot still read or owned, no read of an unfilled or
stale slot, no arrival beyond a barrier's count within a phase.

Sweeps every ring depth D in 1..--max-depth, MMA lag P in 0..--max-lag,
consumer groups C in 1..--consumers, tiles T in 1..--tiles and trip count per
tile n in 1..--max-trips (all tiles run n iterations). Configurations with
P < D are the valid space; P >= D (which the compiler rejects) is reported
apart as the deadlock it causes whenever n > D.

Options:
  --max-depth D    largest ring depth, 1..8 (default 4)
  --max-lag P      largest MMA lag, 0..7 (default 3)
  --consumers N    largest number of consumer warp groups, 1..4 (default 2)
  --tiles T        largest number of tiles, 1.. (default 2)
  --max-trips K    largest trip count per tile (default 2D+3 for each D)
  --warps W        empty[] arrivals per consumer group and slot, one per
                   warp, 1..4 (default 1; the kernels use 4)
  --ctas N         CTAs per cluster, 1 or 2 (default 1). 2: 2-CTA clusters
                   sharing blocks by TMA multicast (--cluster=2): two
                   producers, rings and sets of consumer groups; each ring
                   position is shared (CTA r copies half r into both CTAs'
                   slots) or not (each CTA copies both halves), both
                   explored; consumers release a slot in both CTAs. Lowers
                   the defaults to --max-depth 2 --max-lag 2 --max-trips 3
  --variant NAME   check a deliberately broken lowering over the valid space
                   instead; stops at and prints the first violation. NAME is
                   one of: consumer-parity-1 (consumer waits full[] starting
                   at parity 1), consumed-before-wait (releases k-P before
                   wgmma.wait_group<P>), empty-count-high / empty-count-low
                   (empty[] count one above / below the arrivals made),
                   producer-parity-0 (producer waits empty[] starting at
                   parity 0); with --ctas 2 also cluster-local-release
                   (consumers release a slot only in their own CTA and
                   empty[] counts one CTA's arrivals) and
                   cluster-expect-half (each producer announces only its
                   own half's bytes on full[])
  --max-states N   give up a configuration after N states (in a sweep of
                   the valid space that is a failure: the proof is incomplete)
  --pipeline NAME  gemm (default: the ring above) or attention: the
                   attention pipeline with its cooperative groups' issue
                   turns ('tawa-check protocol --pipeline attention --help')
  --verbose        one line per configuration instead of per (D, P, C, T)
  -j, --jobs N     check N configurations at a time on N threads (default:
                   the number of hardware threads); the output is the same
  -h, --help       this text

Output: a table of states explored and violations per row, the totals and
'result: OK' or 'result: FAILED'; the first violation of the valid space (or
of the variant) is printed with its trace of actor steps.
Exit status: 0 no violation in the valid space and P >= D as expected, 1
otherwise (always 1 for a variant that is caught), 2 usage error.
)";

const char *kAttentionUsage = R"(usage: tawa-check protocol --pipeline attention [options]

Explores every interleaving of the attention forward pipeline as tawa emits
it: one producer thread putting each tile's Q block and each key block's K
and V into three rings (D slots each, full/empty mbarriers with parity
waits, TMA completing asynchronously), and C cooperative consumer warp
groups running the coarse-grained pipeline (S_0 issued and waited before
the loop; iteration j issues S_j = Q K_j^T, then O += P_{j-1} V_{j-1},
wgmma.wait_group<1>, releases K_j, wgmma.wait_group<0>, releases V_{j-1};
the last update after the loop; Q released after the tile), wgmma groups
retiring in order at any time. Two groups take turns issuing their products
through two named barriers (tawa/Protocol/IssueTurnProtocol.h: group 1
passes the first turn, bar.sync on its own barrier before a run, bar.arrive
on the other's after it, group 0 takes the last turn). Checks: no deadlock,
no TMA into a slot still read or owned, no read of an unfilled or stale
slot, no wait passing in a wrong phase, no arrival beyond a barrier's
count; named barriers: no second arrival of a group in one phase, none left
half-arrived at the end, no group taking its turn while the other holds it,
no turn product issued outside a turn.

Sweeps every ring depth D in 1..--max-depth, groups C in 1..--consumers
(C = 2 and 3 with and without issue turns, round robin among three),
tiles T in 1..--tiles and every
assignment of 0..--max-trips key blocks to the tiles.

Options:
  --max-depth D    largest ring depth, 1..4 (default 2)
  --consumers N    largest number of cooperative groups, 1..3 (default 2;
                   3 is the widened row block, -tawa-row-block-widening)
  --tiles T        largest number of tiles (default 2)
  --max-trips K    largest number of key blocks per tile (default 3)
  --warps W        empty[] arrivals per group and release (default 1)
  --no-issue-turns only configurations without issue turns
  --variant NAME   check a deliberately broken protocol instead; stops at
                   and prints the first violation. Issue turns:
                   turn-no-first-pass, turn-no-last-take, turn-no-hand-over,
                   turn-last-take-by-group-1 (off by one at the end),
                   turn-wrong-barrier (group 0 waits on the barrier it hands
                   over on), turn-early-hand-over (after the first product of
                   a run), turn-double-first-pass; rings:
                   attn-release-k-before-wait, attn-release-v-after-wait-1,
                   attn-release-q-early
  --print-program  print each group's consumer program for the largest
                   configuration and exit
  --max-states N, --verbose, -j N   as for the GEMM ring
  -h, --help       this text

Exit status: 0 no violation, 1 otherwise (always 1 for a variant that is
caught), 2 usage error.
)";

[[noreturn]] void usageError(const std::string &message) {
  std::fprintf(stderr, "tawa-check: error: %s\n", message.c_str());
  std::exit(2);
}

unsigned parseCount(const char *option, const char *text, unsigned lo,
                    unsigned hi) {
  char *end = nullptr;
  unsigned long value = std::strtoul(text, &end, 10);
  if (!*text || *end || text[0] == '-' || value < lo || value > hi)
    usageError(std::string("option '") + option + "' needs an integer in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
               text + "'");
  return static_cast<unsigned>(value);
}

struct ProtocolOptions {
  unsigned maxDepth = 4;
  unsigned maxLag = 3;
  unsigned consumers = 2;
  unsigned tiles = 2;
  unsigned maxTrips = 0; // 0: 2D+3 for each D
  unsigned warps = 1;
  unsigned ctas = 1;
  uint64_t maxStates = 0;
  bool verbose = false;
  unsigned jobs = 1;
  Variant variant = Variant::Correct;
};

ModelConfig makeConfig(const ProtocolOptions &opts, unsigned d, unsigned p,
                       unsigned c, unsigned t, unsigned n) {
  ModelConfig config;
  config.depth = d;
  config.lag = p;
  config.consumers = c;
  config.warpsPerGroup = opts.warps;
  config.ctas = opts.ctas;
  config.trips.assign(t, n);
  config.variant = opts.variant;
  config.maxStates = opts.maxStates;
  config.stopAtFirst = opts.variant != Variant::Correct;
  return config;
}

std::string describe(const ModelConfig &config) {
  return "D=" + std::to_string(config.depth) +
         " P=" + std::to_string(config.lag) +
         " C=" + std::to_string(config.consumers) +
         " T=" + std::to_string(config.trips.size()) +
         " trips=" + std::to_string(config.trips.front()) +
         " W=" + std::to_string(config.warpsPerGroup) +
         (config.ctas == 2 ? " CTAs=2" : "");
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// A seeded bug's report: where the sweep caught it and the first violation.
int reportCaught(const std::string &where, const CheckResult &r,
                 uint64_t configs, uint64_t skipped,
                 std::chrono::steady_clock::time_point start) {
  std::printf("caught at %s (%llu states; %llu earlier configurations "
              "passed, %llu not applicable):\n",
              where.c_str(), static_cast<unsigned long long>(r.states),
              static_cast<unsigned long long>(configs - 1),
              static_cast<unsigned long long>(skipped));
  std::printf("%s", formatViolation(r.violations.front()).c_str());
  std::printf("result: CAUGHT (%s, %.2f s)\n",
              violationKindName(r.violations.front().kind),
              secondsSince(start));
  return 1;
}

/// A seeded bug no configuration of the sweep caught.
int reportNotCaught(const std::string &variant, uint64_t configs,
                    uint64_t states,
                    std::chrono::steady_clock::time_point start) {
  std::printf("variant %s: no violation in %llu configurations (%llu "
              "states)\nresult: NOT CAUGHT (%.2f s)\n",
              variant.c_str(), static_cast<unsigned long long>(configs),
              static_cast<unsigned long long>(states), secondsSince(start));
  return 0;
}

/// A P >= D configuration deadlocks exactly when a tile runs more than D
/// iterations; otherwise each tile's drain frees the ring in time.
bool expectsLagDeadlock(const ModelConfig &config) {
  if (lagFitsRing(config.lag, config.depth))
    return false;
  for (unsigned n : config.trips)
    if (n > config.depth)
      return true;
  return false;
}

/// Only deadlocks, and a deadlock exactly when expected.
bool lagOutcomeAsExpected(const ModelConfig &config, const CheckResult &r) {
  bool onlyDeadlock = true;
  for (const Violation &v : r.violations)
    if (v.kind != ViolationKind::Deadlock)
      onlyDeadlock = false;
  return r.complete && onlyDeadlock &&
         r.has(ViolationKind::Deadlock) == expectsLagDeadlock(config);
}

int runVariant(const ProtocolOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  std::printf("tawa-check protocol: variant %s, D<=%u, P<D and P<=%u, "
              "C<=%u, T<=%u, W=%u%s\n",
              variantName(opts.variant), opts.maxDepth, opts.maxLag,
              opts.consumers, opts.tiles, opts.warps,
              opts.ctas == 2 ? ", CTAs=2" : "");
  uint64_t states = 0, configs = 0, skipped = 0;
  for (unsigned d = 1; d <= opts.maxDepth; ++d) {
    unsigned maxTrips = opts.maxTrips ? opts.maxTrips : 2 * d + 3;
    for (unsigned p = 0; p <= opts.maxLag && p < d; ++p)
      for (unsigned c = 1; c <= opts.consumers; ++c)
        for (unsigned t = 1; t <= opts.tiles; ++t)
          for (unsigned n = 1; n <= maxTrips; ++n) {
            ModelConfig config = makeConfig(opts, d, p, c, t, n);
            if (!validateConfig(config).empty()) {
              ++skipped;
              continue;
            }
            CheckResult r = checkProtocol(config);
            ++configs;
            states += r.states;
            if (r.violations.empty())
              continue;
            return reportCaught(describe(config), r, configs, skipped, start);
          }
  }
  return reportNotCaught(variantName(opts.variant), configs, states, start);
}

/// The sweep's configurations, in the order they are printed: the valid space
/// first, then P >= D; within each, by D, P, C, T and trip count.
std::vector<ModelConfig> sweepConfigs(const ProtocolOptions &opts) {
  std::vector<ModelConfig> configs;
  for (int section = 0; section < 2; ++section)
    for (unsigned d = 1; d <= opts.maxDepth; ++d) {
      unsigned maxTrips = opts.maxTrips ? opts.maxTrips : 2 * d + 3;
      for (unsigned p = 0; p <= opts.maxLag; ++p) {
        if (lagFitsRing(p, d) != (section == 0))
          continue;
        for (unsigned c = 1; c <= opts.consumers; ++c)
          for (unsigned t = 1; t <= opts.tiles; ++t)
            for (unsigned n = 1; n <= maxTrips; ++n) {
              configs.push_back(makeConfig(opts, d, p, c, t, n));
              std::string invalid = validateConfig(configs.back());
              if (!invalid.empty())
                usageError(describe(configs.back()) + ": " + invalid);
            }
      }
    }
  return configs;
}

/// Checks the configurations on `jobs` threads; the configurations are
/// independent, and results come back in order.
std::vector<CheckResult> checkAll(const std::vector<ModelConfig> &configs,
                                  unsigned jobs) {
  std::vector<CheckResult> results(configs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < configs.size();)
      results[i] = checkProtocol(configs[i]);
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();
  return results;
}

int runSweep(const ProtocolOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  std::vector<ModelConfig> configs = sweepConfigs(opts);
  std::vector<CheckResult> results = checkAll(configs, opts.jobs);
  size_t nextResult = 0;
  std::string trips = opts.maxTrips ? std::to_string(opts.maxTrips) : "2D+3";
  std::printf("tawa-check protocol: D<=%u, P<=%u, C<=%u, T<=%u, trips 1..%s, "
              "W=%u%s\n",
              opts.maxDepth, opts.maxLag, opts.consumers, opts.tiles,
              trips.c_str(), opts.warps, opts.ctas == 2 ? ", CTAs=2" : "");

  struct Totals {
    uint64_t configs = 0, states = 0, violations = 0, failed = 0;
  } valid, lag;
  std::optional<std::pair<ModelConfig, Violation>> firstFailure;
  std::optional<std::pair<ModelConfig, Violation>> exampleDeadlock;

  for (int section = 0; section < 2; ++section) {
    bool validSpace = section == 0;
    if (validSpace)
      std::printf("\nvalid space (P < D):\n");
    else
      std::printf("\nlag >= depth (P >= D, rejected by the compiler; "
                  "deadlock expected exactly when trips > D):\n");
    if (opts.verbose)
      std::printf("  %-36s %10s %s\n", "configuration", "states",
                  validSpace ? "violations" : "outcome");
    else if (validSpace)
      std::printf("  %2s %2s %2s %2s %6s %12s %10s %10s\n", "D", "P", "C", "T",
                  "trips", "states", "max", "violations");
    else
      std::printf("  %2s %2s %2s %2s %6s %12s %10s %10s %10s\n", "D", "P", "C",
                  "T", "trips", "states", "ok", "deadlocks", "unexpected");
    Totals &tot = validSpace ? valid : lag;
    for (unsigned d = 1; d <= opts.maxDepth; ++d) {
      unsigned maxTrips = opts.maxTrips ? opts.maxTrips : 2 * d + 3;
      for (unsigned p = 0; p <= opts.maxLag; ++p) {
        if (lagFitsRing(p, d) != validSpace)
          continue;
        for (unsigned c = 1; c <= opts.consumers; ++c)
          for (unsigned t = 1; t <= opts.tiles; ++t) {
            uint64_t rowStates = 0, rowMax = 0, rowViolations = 0;
            uint64_t rowOk = 0, rowDeadlocks = 0, rowUnexpected = 0;
            for (unsigned n = 1; n <= maxTrips; ++n) {
              const ModelConfig &config = configs[nextResult];
              const CheckResult &r = results[nextResult++];
              ++tot.configs;
              tot.states += r.states;
              rowStates += r.states;
              rowMax = std::max<uint64_t>(rowMax, r.states);
              bool bad;
              std::string outcome;
              if (validSpace) {
                bad = !r.violations.empty() || !r.complete;
                rowViolations += r.violationCount;
                tot.violations += r.violationCount;
                outcome = std::to_string(r.violationCount);
                if (!r.complete)
                  outcome += " (incomplete: --max-states reached)";
              } else {
                bad = !lagOutcomeAsExpected(config, r);
                bool dead = r.has(ViolationKind::Deadlock);
                rowDeadlocks += dead;
                rowOk += !dead;
                rowUnexpected += bad;
                tot.violations += dead;
                outcome = dead ? "deadlock" : "no deadlock";
                outcome += bad ? " (UNEXPECTED)" : " (expected)";
                if (dead && !bad && !exampleDeadlock)
                  exampleDeadlock.emplace(config, r.violations.front());
              }
              tot.failed += bad;
              if (bad && !firstFailure && !r.violations.empty())
                firstFailure.emplace(config, r.violations.front());
              if (opts.verbose)
                std::printf("  %-36s %10llu %s\n", describe(config).c_str(),
                            static_cast<unsigned long long>(r.states),
                            outcome.c_str());
            }
            if (opts.verbose)
              continue;
            std::string range = "1-" + std::to_string(maxTrips);
            if (validSpace)
              std::printf("  %2u %2u %2u %2u %6s %12llu %10llu %10llu\n", d, p,
                          c, t, range.c_str(),
                          static_cast<unsigned long long>(rowStates),
                          static_cast<unsigned long long>(rowMax),
                          static_cast<unsigned long long>(rowViolations));
            else
              std::printf("  %2u %2u %2u %2u %6s %12llu %10llu %10llu %10llu\n",
                          d, p, c, t, range.c_str(),
                          static_cast<unsigned long long>(rowStates),
                          static_cast<unsigned long long>(rowOk),
                          static_cast<unsigned long long>(rowDeadlocks),
                          static_cast<unsigned long long>(rowUnexpected));
          }
      }
    }
  }

  std::printf("\ntotal (P < D): %llu configurations, %llu states, %llu "
              "violations\n",
              static_cast<unsigned long long>(valid.configs),
              static_cast<unsigned long long>(valid.states),
              static_cast<unsigned long long>(valid.violations));
  std::printf("total (P >= D): %llu configurations, %llu states, %llu "
              "deadlocks (expected), %llu unexpected outcomes\n",
              static_cast<unsigned long long>(lag.configs),
              static_cast<unsigned long long>(lag.states),
              static_cast<unsigned long long>(lag.violations),
              static_cast<unsigned long long>(lag.failed));
  if (exampleDeadlock) {
    std::printf("\nexample of the P >= D deadlock (%s):\n%s",
                describe(exampleDeadlock->first).c_str(),
                formatViolation(exampleDeadlock->second).c_str());
  }
  if (firstFailure) {
    std::printf("\nfirst failure (%s):\n%s",
                describe(firstFailure->first).c_str(),
                formatViolation(firstFailure->second).c_str());
  }
  bool ok = valid.failed == 0 && lag.failed == 0;
  std::printf("\nresult: %s (%.2f s)\n", ok ? "OK" : "FAILED",
              secondsSince(start));
  return ok ? 0 : 1;
}

struct AttentionOptions {
  unsigned maxDepth = 2;
  unsigned consumers = 2;
  unsigned tiles = 2;
  unsigned maxTrips = 3;
  unsigned warps = 1;
  bool turnsOnly = false, noTurns = false;
  bool printProgram = false;
  uint64_t maxStates = 0;
  bool verbose = false;
  unsigned jobs = 1;
  IssueTurnVariant turnVariant = IssueTurnVariant::Correct;
  AttentionRingVariant ringVariant = AttentionRingVariant::Correct;
  bool variant() const {
    return turnVariant != IssueTurnVariant::Correct ||
           ringVariant != AttentionRingVariant::Correct;
  }
};

std::string describe(const AttentionConfig &c) {
  std::string trips;
  for (unsigned n : c.trips)
    trips += (trips.empty() ? "" : ",") + std::to_string(n);
  return "D=" + std::to_string(c.depth) + " C=" + std::to_string(c.groups) +
         (c.groups >= 2 ? (c.issueTurns ? " turns" : " no-turns") : "") +
         " trips=" + trips + " W=" + std::to_string(c.warpsPerGroup);
}

/// Rows of the sweep: (D, C, turns, T), each with every assignment of key
/// blocks to the T tiles.
struct AttentionRow {
  unsigned depth, groups, tiles;
  bool turns;
  std::vector<AttentionConfig> configs;
};

std::vector<AttentionRow> attentionRows(const AttentionOptions &opts) {
  std::vector<AttentionRow> rows;
  for (unsigned d = 1; d <= opts.maxDepth; ++d)
    for (unsigned c = 1; c <= opts.consumers; ++c)
      for (int turns = 0; turns <= 1; ++turns) {
        if (turns && c < 2)
          continue;
        if ((turns && opts.noTurns) || (!turns && opts.turnsOnly))
          continue;
        for (unsigned t = 1; t <= opts.tiles; ++t) {
          AttentionRow row{d, c, t, turns == 1, {}};
          std::vector<unsigned> trips(t, 0);
          while (true) {
            AttentionConfig config;
            config.depth = d;
            config.groups = c;
            config.issueTurns = turns == 1;
            config.warpsPerGroup = opts.warps;
            config.trips = trips;
            config.turnVariant = opts.turnVariant;
            config.ringVariant = opts.ringVariant;
            config.maxStates = opts.maxStates;
            config.stopAtFirst = opts.variant();
            row.configs.push_back(config);
            unsigned i = 0;
            while (i < t && trips[i] == opts.maxTrips)
              trips[i++] = 0;
            if (i == t)
              break;
            ++trips[i];
          }
          rows.push_back(std::move(row));
        }
      }
  return rows;
}

int runAttentionVariant(const AttentionOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  std::string name = opts.turnVariant != IssueTurnVariant::Correct
                         ? issueTurnVariantName(opts.turnVariant)
                         : attentionRingVariantName(opts.ringVariant);
  std::printf("tawa-check protocol --pipeline attention: variant %s, D<=%u, "
              "C<=%u, T<=%u, trips 0..%u, W=%u\n",
              name.c_str(), opts.maxDepth, opts.consumers, opts.tiles,
              opts.maxTrips, opts.warps);
  uint64_t states = 0, configs = 0, skipped = 0;
  for (const AttentionRow &row : attentionRows(opts))
    for (const AttentionConfig &config : row.configs) {
      if (!validateAttentionConfig(config).empty()) {
        ++skipped;
        continue;
      }
      CheckResult r = checkAttentionProtocol(config);
      ++configs;
      states += r.states;
      if (r.violations.empty())
        continue;
      return reportCaught(describe(config), r, configs, skipped, start);
    }
  return reportNotCaught(name, configs, states, start);
}

int runAttentionSweep(const AttentionOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  std::vector<AttentionRow> rows = attentionRows(opts);
  std::vector<AttentionConfig> configs;
  for (const AttentionRow &row : rows)
    for (const AttentionConfig &c : row.configs) {
      std::string invalid = validateAttentionConfig(c);
      if (!invalid.empty())
        usageError(describe(c) + ": " + invalid);
      configs.push_back(c);
    }
  std::vector<CheckResult> results(configs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < configs.size();)
      results[i] = checkAttentionProtocol(configs[i]);
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < opts.jobs; ++j)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();

  std::printf("tawa-check protocol --pipeline attention: D<=%u, C<=%u, T<=%u, "
              "trips 0..%u per tile, W=%u\n\n",
              opts.maxDepth, opts.consumers, opts.tiles, opts.maxTrips,
              opts.warps);
  if (opts.verbose)
    std::printf("  %-40s %10s %s\n", "configuration", "states", "violations");
  else
    std::printf("  %2s %2s %8s %2s %7s %12s %10s %10s\n", "D", "C", "turns",
                "T", "configs", "states", "max", "violations");
  uint64_t totalStates = 0, totalViolations = 0, failed = 0;
  std::optional<std::pair<AttentionConfig, Violation>> firstFailure;
  size_t index = 0;
  for (const AttentionRow &row : rows) {
    uint64_t rowStates = 0, rowMax = 0, rowViolations = 0;
    for (size_t i = 0; i < row.configs.size(); ++i, ++index) {
      const CheckResult &r = results[index];
      rowStates += r.states;
      rowMax = std::max<uint64_t>(rowMax, r.states);
      rowViolations += r.violationCount;
      bool bad = !r.violations.empty() || !r.complete;
      failed += bad;
      if (bad && !firstFailure && !r.violations.empty())
        firstFailure.emplace(configs[index], r.violations.front());
      if (opts.verbose)
        std::printf("  %-40s %10llu %llu%s\n", describe(configs[index]).c_str(),
                    static_cast<unsigned long long>(r.states),
                    static_cast<unsigned long long>(r.violationCount),
                    r.complete ? "" : " (incomplete: --max-states reached)");
    }
    totalStates += rowStates;
    totalViolations += rowViolations;
    if (!opts.verbose)
      std::printf("  %2u %2u %8s %2u %7zu %12llu %10llu %10llu\n", row.depth,
                  row.groups,
                  row.groups >= 2 ? (row.turns ? "on" : "off") : "-",
                  row.tiles, row.configs.size(),
                  static_cast<unsigned long long>(rowStates),
                  static_cast<unsigned long long>(rowMax),
                  static_cast<unsigned long long>(rowViolations));
  }
  std::printf("\ntotal: %zu configurations, %llu states, %llu violations\n",
              configs.size(), static_cast<unsigned long long>(totalStates),
              static_cast<unsigned long long>(totalViolations));
  if (firstFailure)
    std::printf("\nfirst failure (%s):\n%s",
                describe(firstFailure->first).c_str(),
                formatViolation(firstFailure->second).c_str());
  bool ok = failed == 0;
  std::printf("\nresult: %s (%.2f s)\n", ok ? "OK" : "FAILED",
              secondsSince(start));
  return ok ? 0 : 1;
}

int attentionCommand(int argc, char **argv) {
  AttentionOptions opts;
  opts.jobs = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        usageError("option '" + arg + "' needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kAttentionUsage, stdout);
      std::exit(0);
    } else if (arg == "--pipeline") {
      value();
    } else if (arg == "--max-depth") {
      opts.maxDepth = parseCount("--max-depth", value(), 1, 4);
    } else if (arg == "--consumers") {
      opts.consumers = parseCount("--consumers", value(), 1, 3);
    } else if (arg == "--tiles") {
      opts.tiles = parseCount("--tiles", value(), 1, 8);
    } else if (arg == "--max-trips") {
      opts.maxTrips = parseCount("--max-trips", value(), 0, 32);
    } else if (arg == "--warps") {
      opts.warps = parseCount("--warps", value(), 1, 4);
    } else if (arg == "--no-issue-turns") {
      opts.noTurns = true;
    } else if (arg == "--print-program") {
      opts.printProgram = true;
    } else if (arg == "--max-states") {
      opts.maxStates = parseCount("--max-states", value(), 1, 4000000000u);
    } else if (arg == "-j" || arg == "--jobs") {
      opts.jobs = parseCount("--jobs", value(), 1, 256);
    } else if (arg == "--verbose") {
      opts.verbose = true;
    } else if (arg == "--variant") {
      std::string name = value();
      std::optional<IssueTurnVariant> turn = parseIssueTurnVariant(name);
      bool found = turn && *turn != IssueTurnVariant::Correct;
      if (found)
        opts.turnVariant = *turn;
      for (AttentionRingVariant v : allAttentionRingVariants())
        if (v != AttentionRingVariant::Correct &&
            name == attentionRingVariantName(v)) {
          opts.ringVariant = v;
          found = true;
        }
      if (!found) {
        std::string names;
        for (IssueTurnVariant v : allIssueTurnVariants())
          if (v != IssueTurnVariant::Correct)
            names += std::string(names.empty() ? "" : ", ") +
                     issueTurnVariantName(v);
        for (AttentionRingVariant v : allAttentionRingVariants())
          if (v != AttentionRingVariant::Correct)
            names += std::string(", ") + attentionRingVariantName(v);
        usageError("unknown attention variant '" + name + "' (one of: " +
                   names + ")");
      }
    } else {
      usageError("unknown option '" + arg + "' for --pipeline attention");
    }
  }
  if (opts.turnVariant != IssueTurnVariant::Correct) {
    // Turn variants need two or three groups taking turns.
    if (opts.consumers < 2 || opts.noTurns)
      usageError("a turn variant needs --consumers 2 or 3 and issue turns");
    opts.turnsOnly = true;
  }
  if (opts.printProgram) {
    AttentionConfig config;
    config.depth = opts.maxDepth;
    config.groups = opts.consumers;
    config.issueTurns = !opts.noTurns;
    config.warpsPerGroup = opts.warps;
    config.trips.assign(opts.tiles, opts.maxTrips);
    config.turnVariant = opts.turnVariant;
    config.ringVariant = opts.ringVariant;
    std::string invalid = validateAttentionConfig(config);
    if (!invalid.empty())
      usageError(describe(config) + ": " + invalid);
    std::printf("consumer programs of %s:\n", describe(config).c_str());
    for (unsigned g = 0; g < config.groups; ++g) {
      std::printf("group %u:\n", g);
      std::vector<std::string> lines = attentionConsumerProgram(config, g);
      for (size_t i = 0; i < lines.size(); ++i)
        std::printf("  %3zu  %s\n", i, lines[i].c_str());
    }
    return 0;
  }
  return opts.variant() ? runAttentionVariant(opts) : runAttentionSweep(opts);
}

int protocolCommand(int argc, char **argv) {
  for (int i = 0; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--pipeline") {
      std::string which = argv[i + 1];
      if (which == "attention")
        return attentionCommand(argc, argv);
      if (which != "gemm")
        usageError("option '--pipeline' takes 'gemm' or 'attention', got '" +
                   which + "'");
    }
  ProtocolOptions opts;
  // Bounds given on the command line; --ctas 2 lowers the others' defaults.
  bool depthSet = false, lagSet = false, tripsSet = false;
  opts.jobs = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        usageError("option '" + arg + "' needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kProtocolUsage, stdout);
      std::exit(0);
    } else if (arg == "--max-depth") {
      opts.maxDepth = parseCount("--max-depth", value(), 1, 8);
      depthSet = true;
    } else if (arg == "--max-lag") {
      opts.maxLag = parseCount("--max-lag", value(), 0, 7);
      lagSet = true;
    } else if (arg == "--consumers") {
      opts.consumers = parseCount("--consumers", value(), 1, 4);
    } else if (arg == "--tiles") {
      opts.tiles = parseCount("--tiles", value(), 1, 250);
    } else if (arg == "--max-trips") {
      opts.maxTrips = parseCount("--max-trips", value(), 1, 250);
      tripsSet = true;
    } else if (arg == "--warps") {
      opts.warps = parseCount("--warps", value(), 1, 4);
    } else if (arg == "--ctas") {
      opts.ctas = parseCount("--ctas", value(), 1, 2);
    } else if (arg == "--max-states") {
      opts.maxStates = parseCount("--max-states", value(), 1, 4000000000u);
    } else if (arg == "-j" || arg == "--jobs") {
      opts.jobs = parseCount("--jobs", value(), 1, 256);
    } else if (arg == "--verbose") {
      opts.verbose = true;
    } else if (arg == "--pipeline") {
      value(); // gemm
    } else if (arg == "--variant") {
      std::string name = value();
      std::optional<Variant> v = parseVariant(name);
      if (!v || *v == Variant::Correct) {
        std::string names;
        for (Variant w : allVariants())
          if (w != Variant::Correct)
            names += std::string(names.empty() ? "" : ", ") + variantName(w);
        usageError("unknown variant '" + name + "' (one of: " + names + ")");
      }
      opts.variant = *v;
    } else {
      usageError("unknown option '" + arg + "'");
    }
  }
  if (opts.ctas == 2) {
    // Two CTAs square the state space: a smaller default sweep.
    if (!depthSet)
      opts.maxDepth = 2;
    if (!lagSet)
      opts.maxLag = 2;
    if (!tripsSet)
      opts.maxTrips = 3;
  }
  if (opts.ctas == 1 && (opts.variant == Variant::ClusterLocalRelease ||
                         opts.variant == Variant::ClusterExpectHalf))
    usageError(std::string("variant '") + variantName(opts.variant) +
               "' needs --ctas 2");
  return opts.variant == Variant::Correct ? runSweep(opts) : runVariant(opts);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    usageError("no command (try 'tawa-check --help')");
  std::string command = argv[1];
  if (command == "-h" || command == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "protocol")
    return protocolCommand(argc - 2, argv + 2);
  if (command == "interp") {
#ifdef TAWA_CHECK_WITH_INTERP
    return interpCommand(argc - 2, argv + 2);
#else
    usageError("'interp' needs the compiler: this tawa-check was built "
               "without TAWA_ENABLE_COMPILER");
#endif
  }
  usageError("unknown command '" + command + "' (try 'tawa-check --help')");
}
