//===- ProtocolModel.cpp - explicit-state model of the lowered aref ring --===//
//
// Breadth-first exploration of every interleaving of the lowered aref
// protocol. Actors and their atomic steps (one step = one instruction whose
// effect other actors can observe, so no interleaving is lost):
//
//   producer (elected thread), per ring position k:
//     wait empty[k%D] parity producerEmptyParity(k)   (blocks until it passes)
//     arrive.expect_tx full[k%D]                        (adds one transaction)
//     issue TMA k into slot k%D                        (slot contents in flux)
//   TMA engine, per issued load:     write slot, complete_tx on full[k%D]
//   consumer group c, per tile, per loop index i (ring position k):
//     wait full[k%D] parity consumerFullParity(k)      (acquires the slot)
//     issue wgmma reading slot k%D                    (one more group in
//     flight) wgmma.wait_group<P>                               (blocks while >
//     P in flight) releasedAfterIssue(i, P): W arrivals on empty[], one per
//     warp
//   then the drain: wgmma.wait_group<0> and drainedSlots() releases.
//   wgmma engine of group c: retires the oldest in-flight group, any time.
//
// Consumer groups are interchangeable, so a state is stored with its
// consumers sorted (symmetry reduction); traces are replayed from the initial
// state so that the group numbers in one trace stay consistent.
//
// 2-CTA clusters (ModelConfig::ctas = 2): two copies of the actors above,
// one per CTA, each with its own ring. A slot has two halves; the first
// producer to issue a ring position decides whether it is shared (then CTA r
// copies half r into both CTAs' slots, each copy landing as its own TMA
// step) or not (each CTA copies both halves); the producer announces both
// halves' bytes; each consumer warp's release is an arrival on empty[] of
// rank 0, then of rank 1. With one CTA the model is the single-CTA one,
// step for step.
//
//===----------------------------------------------------------------------===//

#include "ProtocolModel.h"

#include "Explorer.h"

#include "tawa/Protocol/ArefProtocol.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_set>

using namespace tawa::protocol;
using tawa::protocol::detail::Failure;
using tawa::protocol::detail::format;
using tawa::protocol::detail::Barrier;
using tawa::protocol::detail::arrive;
using tawa::protocol::detail::checkArrival;

namespace {

// Model limits: every counter of a state fits a byte.
constexpr unsigned kMaxDepth = 8;
constexpr unsigned kMaxConsumers = 4;
constexpr unsigned kMaxWarps = 4;
constexpr unsigned kMaxPositions = 250;
constexpr unsigned kMaxCtas = 2;

// Slot contents other than a ring position.
constexpr uint8_t kNoData = 255;  // never written
constexpr uint8_t kFilling = 254; // a TMA is writing it

// Sharing mode of a cluster's ring position, decided by the first producer
// that issues it (State::shared).
constexpr uint8_t kUndecided = 0;
constexpr uint8_t kNotShared = 1;
constexpr uint8_t kShared = 2;

enum ProducerPc : uint8_t { PWaitEmpty, PArrive, PIssue, PDone };
enum ConsumerPc : uint8_t {
  CWaitFull,
  CIssue,
  CWaitMma,
  CRelease,
  CDrainWait,
  CDrain,
  CDone
};
enum ActorKind : uint8_t { AProducer, ATma, AConsumer, ARetire };

// Every struct below holds only uint8_t fields: no padding, so states can be
// compared and hashed as bytes.
struct Slot {
  // Per half of the tile (a single CTA uses half 0 only): the ring position
  // whose payload it holds, or kNoData/kFilling.
  uint8_t data[2];
  uint8_t tma[2]; // 1 + ring position of the TMA in flight into the half, or 0
  Barrier full;
  Barrier empty;
};

struct Producer {
  uint8_t pc;
  uint8_t next; // ring position of the put in progress
};

struct Consumer {
  uint8_t pc;
  uint8_t tile;
  uint8_t iter;     // loop index within the tile
  uint8_t acquired; // ring positions whose full[] wait passed
  uint8_t issued;   // wgmma groups issued (one per ring position)
  uint8_t inflight; // of which not yet retired: the newest `inflight`
  uint8_t released; // ring positions released by all arrivals
  uint8_t warp;     // arrivals of the release in progress
  uint8_t drain;    // drain releases done in this tile
};

/// One CTA: its producer, its ring (slots with their barriers) and its
/// consumer groups.
struct Cta {
  Producer producer;
  std::array<Slot, kMaxDepth> slots;
  std::array<Consumer, kMaxConsumers> consumers;
};

struct State {
  std::array<Cta, kMaxCtas> ctas;
  /// Clusters: the sharing mode of the position in flight in each slot,
  /// between the issues of the two producers (kUndecided otherwise).
  std::array<uint8_t, kMaxDepth> shared;
};

struct Step {
  uint8_t actor;
  uint8_t index; // slot (TMA) or consumer group (consumer, retire)
  uint8_t cta;   // the actor's CTA (TMA: the destination CTA)
  uint8_t arg;   // TMA: the half; producer issue: 1 to multicast
};


using Perm = std::array<std::array<uint8_t, kMaxConsumers>, kMaxCtas>;

class Model {
public:
  using State = ::State;
  using Step = ::Step;
  using Perm = ::Perm;

  explicit Model(const ModelConfig &config)
      : cfg(config), ctas(config.ctas), cluster(config.ctas == 2) {
    Iter base = 0;
    for (unsigned n : cfg.trips) {
      tileBase.push_back(base);
      base += n;
    }
    total = base;
    unsigned count = emptyArrivalCount(cfg.consumers, cfg.warpsPerGroup);
    // A cluster's consumers release every slot in both CTAs.
    if (cluster && cfg.variant != Variant::ClusterLocalRelease)
      count *= 2;
    if (cfg.variant == Variant::EmptyCountTooHigh)
      ++count;
    if (cfg.variant == Variant::EmptyCountTooLow)
      --count;
    emptyCount = static_cast<uint8_t>(count);
    releaseRanks =
        cluster && cfg.variant != Variant::ClusterLocalRelease ? 2 : 1;
    halves = cluster ? 2 : 1;
    ctaSize = sizeof(Producer) + cfg.depth * sizeof(Slot) +
              cfg.consumers * sizeof(Consumer);
    stateSize = ctas * ctaSize + (cluster ? cfg.depth : 0);
  }

  size_t size() const { return stateSize; }

  State initial() const {
    State x;
    std::memset(&x, 0, sizeof x);
    for (unsigned r = 0; r < ctas; ++r) {
      Cta &a = x.ctas[r];
      a.producer.pc = total == 0 ? PDone : PWaitEmpty;
      for (unsigned s = 0; s < cfg.depth; ++s) {
        Slot &slot = a.slots[s];
        slot.data[0] = slot.data[1] = kNoData;
        slot.full = {0, static_cast<uint8_t>(fullArrivalCount()), 0};
        slot.empty = {0, emptyCount, 0};
      }
      for (unsigned c = 0; c < cfg.consumers; ++c)
        enterTile(a.consumers[c]);
    }
    return x;
  }

  void encode(const State &x, uint8_t *out) const {
    for (unsigned r = 0; r < ctas; ++r) {
      const Cta &a = x.ctas[r];
      std::memcpy(out, &a.producer, sizeof(Producer));
      out += sizeof(Producer);
      std::memcpy(out, a.slots.data(), cfg.depth * sizeof(Slot));
      out += cfg.depth * sizeof(Slot);
      std::memcpy(out, a.consumers.data(), cfg.consumers * sizeof(Consumer));
      out += cfg.consumers * sizeof(Consumer);
    }
    if (cluster)
      std::memcpy(out, x.shared.data(), cfg.depth);
  }

  State decode(const uint8_t *in) const {
    State x;
    std::memset(&x, 0, sizeof x);
    for (unsigned r = 0; r < ctas; ++r) {
      Cta &a = x.ctas[r];
      std::memcpy(&a.producer, in, sizeof(Producer));
      in += sizeof(Producer);
      std::memcpy(a.slots.data(), in, cfg.depth * sizeof(Slot));
      in += cfg.depth * sizeof(Slot);
      std::memcpy(a.consumers.data(), in, cfg.consumers * sizeof(Consumer));
      in += cfg.consumers * sizeof(Consumer);
    }
    if (cluster)
      std::memcpy(x.shared.data(), in, cfg.depth);
    return x;
  }

  /// perm[r][j] is the group of CTA r of `x` that sits at position j once
  /// the groups are sorted (groups are interchangeable within a CTA).
  Perm canonicalOrder(const State &x) const {
    Perm perm{};
    for (unsigned r = 0; r < ctas; ++r) {
      auto &order = perm[r];
      const Cta &a = x.ctas[r];
      for (unsigned c = 0; c < cfg.consumers; ++c)
        order[c] = static_cast<uint8_t>(c);
      std::stable_sort(order.begin(), order.begin() + cfg.consumers,
                       [&](uint8_t u, uint8_t v) {
                         return std::memcmp(&a.consumers[u], &a.consumers[v],
                                            sizeof(Consumer)) < 0;
                       });
    }
    return perm;
  }

  State canonical(const State &x) const {
    Perm perm = canonicalOrder(x);
    State y = x;
    for (unsigned r = 0; r < ctas; ++r)
      for (unsigned c = 0; c < cfg.consumers; ++c)
        y.ctas[r].consumers[c] = x.ctas[r].consumers[perm[r][c]];
    return y;
  }

  bool finished(const State &x) const {
    for (unsigned r = 0; r < ctas; ++r) {
      const Cta &a = x.ctas[r];
      if (a.producer.pc != PDone)
        return false;
      for (unsigned c = 0; c < cfg.consumers; ++c)
        if (a.consumers[c].pc != CDone)
          return false;
    }
    return true;
  }

  void enabled(const State &x, std::vector<Step> &steps) const {
    steps.clear();
    // Partial-order reduction: a returning wgmma.wait_group changes only its
    // group's program counter, which no other actor reads, and once enabled
    // it stays enabled (only the group's own issue adds groups in flight).
    // Taking it at once loses no interleaving that another actor could tell
    // apart, so when one is enabled it is the only step explored.
    for (unsigned r = 0; r < ctas; ++r)
      for (unsigned c = 0; c < cfg.consumers; ++c) {
        const Consumer &q = x.ctas[r].consumers[c];
        if ((q.pc == CWaitMma || q.pc == CDrainWait) &&
            consumerCanStep(x.ctas[r], q)) {
          steps.push_back(
              {AConsumer, static_cast<uint8_t>(c), static_cast<uint8_t>(r), 0});
          return;
        }
      }
    for (unsigned r = 0; r < ctas; ++r) {
      const Cta &a = x.ctas[r];
      uint8_t rank = static_cast<uint8_t>(r);
      const Producer &p = a.producer;
      if (p.pc == PIssue && cluster &&
          x.shared[slotOf(p.next, cfg.depth)] == kUndecided) {
        // The first producer to issue a position decides, for both CTAs,
        // whether its block is shared: both ways are explored.
        steps.push_back({AProducer, 0, rank, 0});
        steps.push_back({AProducer, 0, rank, 1});
      } else if (p.pc == PArrive || p.pc == PIssue ||
                 (p.pc == PWaitEmpty &&
                  parityWaitPasses(
                      a.slots[slotOf(p.next, cfg.depth)].empty.phase,
                      producerParity(p.next)))) {
        steps.push_back({AProducer, 0, rank, 0});
      }
      // A cluster lists its TMA completions after the consumers: of two
      // violations at the same depth, the read of a half-filled slot is the
      // one reported first (the order changes no reachable state).
      if (!cluster)
        tmaSteps(a, rank, steps);
      for (unsigned c = 0; c < cfg.consumers; ++c) {
        const Consumer &q = a.consumers[c];
        if (consumerCanStep(a, q))
          steps.push_back({AConsumer, static_cast<uint8_t>(c), rank, 0});
        if (q.inflight)
          steps.push_back({ARetire, static_cast<uint8_t>(c), rank, 0});
      }
      if (cluster)
        tmaSteps(a, rank, steps);
    }
  }

  /// Performs `step` on `x`. Returns the violation the step commits, if any
  /// (the caller does not explore past it). With `label`, also describes it.
  std::optional<Failure> apply(State &x, Step step, std::string *label) const {
    switch (step.actor) {
    case AProducer:
      return stepProducer(x, step.cta, step.arg, label);
    case ATma:
      return stepTma(x, step.cta, step.index, step.arg, label);
    case AConsumer:
      return stepConsumer(x, step.cta, step.index, label);
    case ARetire: {
      Consumer &q = x.ctas[step.cta].consumers[step.index];
      if (label)
        *label = format("%sconsumer %u: wgmma group reading k=%d retires",
                        who(step.cta), step.index, q.issued - q.inflight);
      --q.inflight;
      return std::nullopt;
    }
    }
    return std::nullopt;
  }

  static Step concrete(Step step, const Perm &perm) {
    if (step.actor == AConsumer || step.actor == ARetire)
      step.index = perm[step.cta][step.index];
    return step;
  }

  /// Nothing to check in a finished state beyond the steps that led there.
  std::optional<Failure> atExit(const State &) const { return std::nullopt; }

  /// One line per unfinished actor: what it waits for.
  std::vector<std::string> blocked(const State &x) const {
    std::vector<std::string> lines;
    for (unsigned r = 0; r < ctas; ++r) {
      const Cta &a = x.ctas[r];
      const Producer &p = a.producer;
      if (p.pc == PWaitEmpty) {
        unsigned s = slotOf(p.next, cfg.depth);
        lines.push_back(format(
            "%sproducer: waits on empty[%u] parity %u for k=%d; the barrier "
            "is in phase %d with %d of %d arrivals missing",
            who(r), s, producerParity(p.next), p.next, a.slots[s].empty.phase,
            a.slots[s].empty.pending, emptyCount));
      }
      for (unsigned c = 0; c < cfg.consumers; ++c) {
        const Consumer &q = a.consumers[c];
        if (q.pc == CDone)
          continue;
        Iter k = position(q);
        if (q.pc == CWaitFull) {
          unsigned s = slotOf(k, cfg.depth);
          lines.push_back(format(
              "%sconsumer %u: waits on full[%u] parity %u for k=%lld (tile "
              "%d, iteration %d); the barrier is in phase %d",
              who(r), c, s, consumerParity(k), static_cast<long long>(k),
              q.tile, q.iter, a.slots[s].full.phase));
        } else {
          lines.push_back(
              format("%sconsumer %u: blocked at step %d", who(r), c, q.pc));
        }
      }
    }
    return lines;
  }

private:
  void tmaSteps(const Cta &a, uint8_t rank, std::vector<Step> &steps) const {
    for (unsigned s = 0; s < cfg.depth; ++s)
      for (unsigned h = 0; h < halves; ++h)
        if (a.slots[s].tma[h])
          steps.push_back(
              {ATma, static_cast<uint8_t>(s), rank, static_cast<uint8_t>(h)});
  }

  /// Trace prefix naming the CTA of an actor: none for a single CTA.
  const char *who(unsigned r) const {
    if (!cluster)
      return "";
    return r == 0 ? "CTA0 " : "CTA1 ";
  }
  /// Names CTA r's copy of a barrier or slot: none for a single CTA.
  const char *of(unsigned r) const {
    if (!cluster)
      return "";
    return r == 0 ? " of CTA0" : " of CTA1";
  }

  unsigned producerParity(Iter k) const {
    unsigned parity = producerEmptyParity(k, cfg.depth);
    return cfg.variant == Variant::ProducerParityZero ? parity ^ 1u : parity;
  }
  unsigned consumerParity(Iter k) const {
    unsigned parity = consumerFullParity(k, cfg.depth);
    return cfg.variant == Variant::ConsumerParityOne ? parity ^ 1u : parity;
  }

  Iter trips(const Consumer &q) const { return cfg.trips[q.tile]; }
  Iter position(const Consumer &q) const { return tileBase[q.tile] + q.iter; }

  void enterTile(Consumer &q) const {
    // A tile without iterations touches the ring not at all.
    while (q.tile < cfg.trips.size() && cfg.trips[q.tile] == 0)
      ++q.tile;
    q.iter = 0;
    q.pc = q.tile == cfg.trips.size() ? CDone : CWaitFull;
  }

  void nextIteration(Consumer &q) const {
    ++q.iter;
    q.pc = q.iter == trips(q) ? CDrainWait : CWaitFull;
  }

  void nextTile(Consumer &q) const {
    ++q.tile;
    enterTile(q);
  }

  bool consumerCanStep(const Cta &a, const Consumer &q) const {
    switch (q.pc) {
    case CWaitFull: {
      Iter k = position(q);
      return parityWaitPasses(a.slots[slotOf(k, cfg.depth)].full.phase,
                              consumerParity(k));
    }
    case CIssue:
    case CRelease:
    case CDrain:
      return true;
    case CWaitMma:
      return q.inflight <= cfg.lag;
    case CDrainWait:
      return q.inflight == 0;
    default:
      return false;
    }
  }



  std::optional<Failure> stepProducer(State &x, unsigned r, unsigned multicast,
                                      std::string *label) const {
    Producer &p = x.ctas[r].producer;
    Iter k = p.next;
    unsigned s = slotOf(k, cfg.depth);
    Slot &slot = x.ctas[r].slots[s];
    switch (p.pc) {
    case PWaitEmpty: {
      if (label)
        *label = format("%sproducer: wait empty[%u] parity %u passes for "
                        "k=%lld (barrier in phase %d)",
                        who(r), s, producerParity(k), static_cast<long long>(k),
                        slot.empty.phase);
      p.pc = PArrive;
      // Lap L reuses the slot after phase L-1 of empty[] completed, so the
      // barrier must now be in phase L (on lap 0: still fresh, phase 0).
      if (slot.empty.phase != lapOf(k, cfg.depth))
        return Failure{ViolationKind::WrongPhase,
                       format("%sproducer's wait on empty[%u] for k=%lld "
                              "passed in phase %d, expected phase %lld",
                              who(r), s, static_cast<long long>(k),
                              slot.empty.phase,
                              static_cast<long long>(lapOf(k, cfg.depth)))};
      return std::nullopt;
    }
    case PArrive: {
      // A cluster's producer announces both halves of the block (whoever
      // copies them), unless the broken variant announces only its own.
      unsigned bytes =
          cluster && cfg.variant != Variant::ClusterExpectHalf ? 2 : 1;
      if (label)
        *label = format("%sproducer: arrive.expect_tx on full[%u] for "
                        "k=%lld%s",
                        who(r), s, static_cast<long long>(k),
                        cluster ? (bytes == 2 ? " (both halves' bytes)"
                                              : " (one half's bytes)")
                                : "");
      auto failure = checkArrival(
          slot.full, lapOf(k, cfg.depth),
          format("%sproducer's arrive.expect_tx on full[%u] for k=%lld", who(r),
                 s, static_cast<long long>(k)));
      slot.full.tx = static_cast<uint8_t>(slot.full.tx + bytes);
      arrive(slot.full, static_cast<uint8_t>(fullArrivalCount()));
      p.pc = PIssue;
      return failure;
    }
    case PIssue: {
      if (!cluster) {
        if (label)
          *label = format("producer: issue TMA load of k=%lld into slot %u",
                          static_cast<long long>(k), s);
        std::optional<Failure> failure = checkOverwrite(x, 0, k, s, 0);
        slot.data[0] = kFilling;
        slot.tma[0] = static_cast<uint8_t>(k + 1);
        ++p.next;
        p.pc = p.next == total ? PDone : PWaitEmpty;
        return failure;
      }
      // Both CTAs make the same positions in the same order; in the correct
      // protocol the partner's producer is less than a lap apart (its empty
      // wait for k needs this CTA's releases of k - D), so the slot's mode
      // is that of position k: set by the first issue of k (the step's
      // choice), taken and forgotten by the second.
      uint8_t &mode = x.shared[s];
      if (mode != kUndecided)
        multicast = mode == kShared;
      bool second = x.ctas[r ^ 1].producer.next > k;
      mode = second ? kUndecided : multicast ? kShared : kNotShared;
      if (label) {
        if (multicast)
          *label =
              format("%sproducer: issue TMA multicast of half %u of k=%lld "
                     "into slot %u of both CTAs",
                     who(r), r, static_cast<long long>(k), s);
        else
          *label = format("%sproducer: issue TMA loads of both halves of "
                          "k=%lld into slot %u of CTA%u (not shared)",
                          who(r), static_cast<long long>(k), s, r);
      }
      // Destinations (CTA, half).
      unsigned dest[2][2] = {{0, r}, {1, r}};
      if (!multicast) {
        dest[0][0] = dest[1][0] = r;
        dest[0][1] = 0;
        dest[1][1] = 1;
      }
      std::optional<Failure> failure;
      for (auto &d : dest) {
        if (!failure)
          failure = checkOverwrite(x, d[0], k, s, d[1]);
        Slot &target = x.ctas[d[0]].slots[s];
        target.data[d[1]] = kFilling;
        target.tma[d[1]] = static_cast<uint8_t>(k + 1);
      }
      ++p.next;
      p.pc = p.next == total ? PDone : PWaitEmpty;
      return failure;
    }
    }
    return std::nullopt;
  }

  /// Whether group q of a CTA is done with ring position `old`: it released
  /// it (releases are in order). In a cluster, a release made of arrivals in
  /// both CTAs counts from its first arrival: the group's reads of `old`
  /// retired before it, and the partner's producer may pass on its own
  /// barrier before the arrivals in this CTA are made.
  bool releasedPosition(const Consumer &q, Iter old) const {
    return q.released > old || (cluster && q.released == old && q.warp > 0);
  }

  /// Before a TMA writes (half h of) ring position k into slot s of CTA d,
  /// every consumer group of CTA d must have released every earlier position
  /// of that slot (releases are in order, so checking k - D suffices) and no
  /// TMA may still write it.
  std::optional<Failure> checkOverwrite(const State &x, unsigned d, Iter k,
                                        unsigned s, unsigned h) const {
    const Cta &a = x.ctas[d];
    std::string into = cluster
                           ? format("TMA of k=%lld (half %u) into slot %u%s",
                                    static_cast<long long>(k), h, s, of(d))
                           : format("TMA of k=%lld into slot %u",
                                    static_cast<long long>(k), s);
    if (a.slots[s].tma[h])
      return Failure{ViolationKind::OverwriteUnreleased,
                     format("%s while the TMA of k=%d is still writing it",
                            into.c_str(), a.slots[s].tma[h] - 1)};
    // An unretired wgmma reads its slot whatever the barriers say (a broken
    // lowering may have released it already).
    for (unsigned c = 0; c < cfg.consumers; ++c) {
      const Consumer &q = a.consumers[c];
      for (int p = q.issued - q.inflight; p < q.issued; ++p)
        if (p < k && slotOf(p, cfg.depth) == s)
          return Failure{ViolationKind::OverwriteInFlightMma,
                         format("%s while %sconsumer %u's unretired wgmma "
                                "still reads k=%d there",
                                into.c_str(), who(d), c, p)};
    }
    Iter old = k - cfg.depth;
    if (old < 0)
      return std::nullopt;
    std::optional<Failure> unreleased;
    for (unsigned c = 0; c < cfg.consumers; ++c) {
      const Consumer &q = a.consumers[c];
      if (releasedPosition(q, old))
        continue;
      if (!unreleased)
        unreleased = Failure{
            ViolationKind::OverwriteUnreleased,
            format("%s while %sconsumer %u %s k=%lld", into.c_str(), who(d), c,
                   old < q.acquired ? "still owns" : "has not yet read",
                   static_cast<long long>(old))};
    }
    return unreleased;
  }

  /// Half h of a TMA lands in slot s of CTA d: complete_tx on that CTA's
  /// full[s] (a multicast half lands in each destination separately).
  std::optional<Failure> stepTma(State &x, unsigned d, unsigned s, unsigned h,
                                 std::string *label) const {
    Slot &slot = x.ctas[d].slots[s];
    int k = slot.tma[h] - 1;
    slot.data[h] = static_cast<uint8_t>(k);
    slot.tma[h] = 0;
    // In a cluster the partner's half may come before the announcing
    // arrival, but it must come in the phase that publishes k.
    std::optional<Failure> failure;
    if (cluster && slot.full.phase != lapOf(k, cfg.depth))
      failure = Failure{
          ViolationKind::ArrivalOverflow,
          format("complete_tx of half %u of k=%d on full[%u]%s is meant for "
                 "phase %lld but the barrier is in phase %d",
                 h, k, s, of(d), static_cast<long long>(lapOf(k, cfg.depth)),
                 slot.full.phase)};
    slot.full.tx = static_cast<uint8_t>(slot.full.tx - 1);
    bool completes = slot.full.pending == 0 && slot.full.tx == 0;
    if (label) {
      std::string done =
          completes ? format(" (phase %d completes)", slot.full.phase) : "";
      if (cluster)
        *label = format("TMA: half %u of k=%d lands in slot %u of CTA%u, "
                        "complete_tx on full[%u]%s%s",
                        h, k, s, d, s, of(d), done.c_str());
      else
        *label = format("TMA: k=%d lands in slot %u, complete_tx on full[%u]%s",
                        k, s, s, done.c_str());
    }
    if (completes) {
      ++slot.full.phase;
      slot.full.pending = static_cast<uint8_t>(fullArrivalCount());
    }
    return failure;
  }

  /// The next of the arrivals on empty[] that release ring position `k` for
  /// group c of CTA r: one per warp (W), in a cluster one per warp and CTA
  /// (rank 0, then rank 1), made warp by warp.
  std::optional<Failure> releaseArrival(State &x, unsigned r, unsigned c,
                                        Iter k, std::string *label) const {
    Consumer &q = x.ctas[r].consumers[c];
    unsigned s = slotOf(k, cfg.depth);
    unsigned warp = q.warp / releaseRanks;
    unsigned target = releaseRanks == 2 ? q.warp % 2 : r;
    Barrier &e = x.ctas[target].slots[s].empty;
    bool completes = e.pending == 1;
    if (label)
      *label = format(
          "%sconsumer %u: warp %u arrives on empty[%u]%s releasing "
          "k=%lld%s",
          who(r), c, warp, s, of(target), static_cast<long long>(k),
          completes ? format(" (phase %d completes)", e.phase).c_str() : "");
    // Releases are in ring order; the lowering's arithmetic must agree.
    assert(q.released == k && "release out of order");
    // In a cluster, a partner's arrival for k + D may complete the phase of
    // k on this CTA's barrier before this CTA's own group has made its
    // arrival for k there (see releasedPosition): arrivals may meet the
    // phase before or after their own, so only an arrival more than one
    // phase away from its own is counted as a misplaced one.
    Iter lap = lapOf(k, cfg.depth);
    if (cluster && releaseRanks == 2 &&
        (e.phase == lap + 1 || e.phase + 1 == lap))
      lap = e.phase;
    auto failure = checkArrival(
        e, lap,
        format("%sconsumer %u's arrival on empty[%u]%s for k=%lld", who(r), c,
               s, of(target), static_cast<long long>(k)));
    arrive(e, emptyCount);
    if (++q.warp == cfg.warpsPerGroup * releaseRanks) {
      q.warp = 0;
      ++q.released;
    }
    return failure;
  }

  std::optional<Failure> stepConsumer(State &x, unsigned r, unsigned c,
                                      std::string *label) const {
    Consumer &q = x.ctas[r].consumers[c];
    Iter k = position(q);
    unsigned s = slotOf(k, cfg.depth);
    bool early = cfg.variant == Variant::ConsumedBeforeWait;
    switch (q.pc) {
    case CWaitFull: {
      const Slot &slot = x.ctas[r].slots[s];
      if (label)
        *label =
            format("%sconsumer %u: wait full[%u] parity %u passes for "
                   "k=%lld (tile %d, iteration %d; barrier in phase %d)",
                   who(r), c, s, consumerParity(k), static_cast<long long>(k),
                   q.tile, q.iter, slot.full.phase);
      ++q.acquired;
      q.pc = CIssue;
      for (unsigned h = 0; h < halves; ++h) {
        uint8_t data = slot.data[h];
        std::string what =
            cluster ? format("half %u of the slot", h) : "the slot";
        if (data == kNoData || data == kFilling)
          return Failure{
              ViolationKind::ReadUnfilled,
              format("%sconsumer %u's wait on full[%u] for k=%lld "
                     "passed but %s %s",
                     who(r), c, s, static_cast<long long>(k), what.c_str(),
                     data == kNoData ? "was never filled"
                                     : "is still being written by a TMA")};
      }
      for (unsigned h = 0; h < halves; ++h) {
        uint8_t data = slot.data[h];
        std::string what =
            cluster ? format("half %u of the slot", h) : "the slot";
        if (data != k)
          return Failure{ViolationKind::ReadStale,
                         format("%sconsumer %u's wait on full[%u] for k=%lld "
                                "passed but %s holds k=%d",
                                who(r), c, s, static_cast<long long>(k),
                                what.c_str(), data)};
      }
      if (slot.full.phase != lapOf(k, cfg.depth) + 1)
        return Failure{ViolationKind::WrongPhase,
                       format("%sconsumer %u's wait on full[%u] for k=%lld "
                              "passed in phase %d, expected phase %lld",
                              who(r), c, s, static_cast<long long>(k),
                              slot.full.phase,
                              static_cast<long long>(lapOf(k, cfg.depth) + 1))};
      return std::nullopt;
    }
    case CIssue: {
      if (label)
        *label = format("%sconsumer %u: issue wgmma reading slot %u (k=%lld)",
                        who(r), c, s, static_cast<long long>(k));
      ++q.issued;
      ++q.inflight;
      bool releases = releasedAfterIssue(q.iter, cfg.lag) != kNoRelease;
      q.pc = early && releases ? CRelease : CWaitMma;
      return std::nullopt;
    }
    case CWaitMma: {
      if (label)
        *label = format("%sconsumer %u: wgmma.wait_group<%u> returns (%d in "
                        "flight)",
                        who(r), c, cfg.lag, q.inflight);
      if (!early && releasedAfterIssue(q.iter, cfg.lag) != kNoRelease)
        q.pc = CRelease;
      else
        nextIteration(q);
      return std::nullopt;
    }
    case CRelease: {
      Iter k0 = tileBase[q.tile] + releasedAfterIssue(q.iter, cfg.lag);
      auto failure = releaseArrival(x, r, c, k0, label);
      if (q.warp == 0) {
        if (early)
          q.pc = CWaitMma;
        else
          nextIteration(q);
      }
      return failure;
    }
    case CDrainWait: {
      if (label)
        *label = format("%sconsumer %u: wgmma.wait_group<0> returns (drain of "
                        "tile %d)",
                        who(r), c, q.tile);
      q.drain = 0;
      if (drainedSlots(trips(q), cfg.lag) == 0)
        nextTile(q);
      else
        q.pc = CDrain;
      return std::nullopt;
    }
    case CDrain: {
      Iter k0 = tileBase[q.tile] + drainedIteration(trips(q), cfg.lag, q.drain);
      auto failure = releaseArrival(x, r, c, k0, label);
      if (q.warp == 0 && ++q.drain == drainedSlots(trips(q), cfg.lag))
        nextTile(q);
      return failure;
    }
    default:
      return std::nullopt;
    }
  }

  const ModelConfig &cfg;
  unsigned ctas;
  bool cluster;
  std::vector<Iter> tileBase;
  Iter total = 0;
  uint8_t emptyCount = 0;
  unsigned releaseRanks = 1; // CTAs each release arrival is made in
  unsigned halves = 1;       // parts of a slot, each filled by its own TMA
  size_t ctaSize = 0;
  size_t stateSize = 0;
};

} // namespace

namespace tawa::protocol {

const char *variantName(Variant v) {
  switch (v) {
  case Variant::Correct:
    return "correct";
  case Variant::ConsumerParityOne:
    return "consumer-parity-1";
  case Variant::ConsumedBeforeWait:
    return "consumed-before-wait";
  case Variant::EmptyCountTooHigh:
    return "empty-count-high";
  case Variant::EmptyCountTooLow:
    return "empty-count-low";
  case Variant::ProducerParityZero:
    return "producer-parity-0";
  case Variant::ClusterLocalRelease:
    return "cluster-local-release";
  case Variant::ClusterExpectHalf:
    return "cluster-expect-half";
  }
  return "?";
}

const std::vector<Variant> &allVariants() {
  static const std::vector<Variant> all = {Variant::Correct,
                                           Variant::ConsumerParityOne,
                                           Variant::ConsumedBeforeWait,
                                           Variant::EmptyCountTooHigh,
                                           Variant::EmptyCountTooLow,
                                           Variant::ProducerParityZero,
                                           Variant::ClusterLocalRelease,
                                           Variant::ClusterExpectHalf};
  return all;
}

std::optional<Variant> parseVariant(const std::string &name) {
  for (Variant v : allVariants())
    if (name == variantName(v))
      return v;
  return std::nullopt;
}

const char *violationKindName(ViolationKind k) {
  switch (k) {
  case ViolationKind::Deadlock:
    return "deadlock";
  case ViolationKind::OverwriteInFlightMma:
    return "overwrite-in-flight-mma";
  case ViolationKind::OverwriteUnreleased:
    return "overwrite-unreleased";
  case ViolationKind::ReadUnfilled:
    return "read-unfilled";
  case ViolationKind::ReadStale:
    return "read-stale";
  case ViolationKind::WrongPhase:
    return "wrong-phase";
  case ViolationKind::ArrivalOverflow:
    return "arrival-overflow";
  case ViolationKind::BarrierOverflow:
    return "barrier-overflow";
  case ViolationKind::BarrierUnbalanced:
    return "barrier-unbalanced";
  case ViolationKind::TurnOverlap:
    return "turn-overlap";
  case ViolationKind::IssueOutsideTurn:
    return "issue-outside-turn";
  }
  return "?";
}

bool CheckResult::has(ViolationKind k) const {
  for (const Violation &v : violations)
    if (v.kind == k)
      return true;
  return false;
}

std::string validateConfig(const ModelConfig &config) {
  if (config.depth < 1 || config.depth > kMaxDepth)
    return format("depth must be in [1, %u]", kMaxDepth);
  if (config.lag > 7)
    return "lag must be in [0, 7]";
  if (config.consumers < 1 || config.consumers > kMaxConsumers)
    return format("consumers must be in [1, %u]", kMaxConsumers);
  if (config.warpsPerGroup < 1 || config.warpsPerGroup > kMaxWarps)
    return format("warps per group must be in [1, %u]", kMaxWarps);
  if (config.trips.empty())
    return "at least one tile";
  uint64_t total = 0;
  for (unsigned n : config.trips)
    total += n;
  if (total > kMaxPositions)
    return format("at most %u iterations over all tiles", kMaxPositions);
  if (config.ctas < 1 || config.ctas > kMaxCtas)
    return format("CTAs per cluster must be in [1, %u]", kMaxCtas);
  if (config.ctas == 1 && (config.variant == Variant::ClusterLocalRelease ||
                           config.variant == Variant::ClusterExpectHalf))
    return format("%s needs 2-CTA clusters", variantName(config.variant));
  if (config.variant == Variant::EmptyCountTooLow &&
      config.ctas * emptyArrivalCount(config.consumers, config.warpsPerGroup) <
          2)
    return "empty-count-low needs at least 2 consumer arrivals per slot "
           "(an mbarrier count of 0 is not a barrier)";
  return "";
}

CheckResult checkProtocol(const ModelConfig &config) {
  assert(validateConfig(config).empty() && "invalid model configuration");
  Model model(config);
  return detail::Explorer<Model>(model, config.stopAtFirst, config.maxStates)
      .run();
}

std::string formatViolation(const Violation &v) {
  std::string out = std::string(violationKindName(v.kind)) + ": " + v.message +
                    "\n  trace (" + std::to_string(v.trace.size()) +
                    " steps):\n";
  for (size_t i = 0; i < v.trace.size(); ++i)
    out += format("  %4zu. %s\n", i + 1, v.trace[i].c_str());
  for (const std::string &line : v.blocked)
    out += "  blocked: " + line + "\n";
  return out;
}

} // namespace tawa::protocol
