//===- AttentionModel.cpp - model of the attention pipeline's protocol ----===//
//
// Actors and their atomic steps (AttentionModel.h says what is modelled):
//
//   producer (elected thread), per put (ring r, position k), in the order
//   Q_t, then K_j, V_j for each key block j of tile t:
//     wait empty_r[k%D] parity producerEmptyParity(k)
//     arrive.expect_tx full_r[k%D]
//     issue the TMA of k into slot k%D
//   TMA engine, per load in flight: writes the slot, complete_tx on full_r
//   consumer group g: its program (attentionConsumerProgram), one step per
//     instruction, except W arrivals per release (one per warp) and
//     bar.sync, which arrives in one step and returns in a later one
//   wgmma engine of group g: retires the oldest group in flight, any time
//
// Partial-order reduction: a returning wgmma.wait_group and a returning
// bar.sync (its arrival made, its phase completed) change only their
// group's program counter (and, for the sync, whether it holds the turn,
// which the other group reads only to report an overlap, symmetrically), and
// stay enabled once enabled: they are taken at once.
//
//===----------------------------------------------------------------------===//

#include "AttentionModel.h"

#include "Explorer.h"

#include "tawa/Protocol/ArefProtocol.h"

#include <array>
#include <cassert>
#include <cstring>

using namespace tawa::protocol;
using tawa::protocol::detail::Failure;
using tawa::protocol::detail::format;
using tawa::protocol::detail::Barrier;
using tawa::protocol::detail::arrive;
using tawa::protocol::detail::checkArrival;

namespace {

constexpr unsigned kRings = 3;
constexpr unsigned kMaxDepth = 4;
constexpr unsigned kMaxGroups = 3;
constexpr unsigned kMaxProgram = 250;
constexpr unsigned kMaxPositions = 200;
constexpr unsigned kMaxInFlight = 3;
constexpr uint8_t kNoData = 255;  // never written
constexpr uint8_t kFilling = 254; // a TMA is writing it
constexpr uint8_t kNoBarrier = 255;

enum RingId : uint8_t { RQ, RK, RV };
const char *const kRingName[kRings] = {"Q", "K", "V"};

enum OpKind : uint8_t { IWaitFull, IIssue, IWaitMma, IRelease, ISync, IArrive };

/// One instruction of a consumer group's program.
struct Instr {
  OpKind op;
  uint8_t ring = 0; ///< WaitFull, Release: the ring; Issue: the first read's
  int k = 0;        ///< its position
  int ring2 = -1;   ///< Issue: the second read's ring (-1: none)
  int k2 = 0;
  unsigned n = 0;             ///< WaitMma: groups left in flight
  uint8_t barrier = 0;        ///< Sync, Arrive: named barrier id (kNoBarrier:
                              ///< Arrive only drops the turn, arriving nowhere)
  bool turn = false;          ///< Issue: a turn product; Sync: takes the
                              ///< turn; Arrive: hands it over
  std::string what;           ///< "S_1 = Q_0 K_1^T", "tile 0" ...
};

struct Put {
  uint8_t ring;
  int k;
};

// Every struct below holds only uint8_t fields: no padding, so states can be
// compared and hashed as bytes.
struct Slot {
  uint8_t data; ///< ring position it holds, or kNoData / kFilling
  uint8_t tma;  ///< 1 + position of the TMA in flight into it, or 0
  Barrier full;
  Barrier empty;
};

enum ProducerPc : uint8_t { PWaitEmpty, PArrive, PIssue, PDone };

struct Producer {
  uint8_t pc;
  uint8_t next; ///< index of the put in progress
};

struct Group {
  uint8_t pc;        ///< program index
  uint8_t sub;       ///< bar.sync: 1 once it arrived
  uint8_t waitPhase; ///< bar.sync: the phase it arrived in
  uint8_t warp;      ///< release: arrivals made
  uint8_t inflight;
  uint8_t fifo[kMaxInFlight]; ///< program indices of the issues in flight
  uint8_t turn;               ///< holds the issue turn
  uint8_t acquired[kRings];   ///< positions whose full wait passed
  uint8_t released[kRings];   ///< positions released by all arrivals
};

struct NamedBarrier {
  uint8_t phase;
  uint8_t arrived; ///< groups (bit g) arrived in this phase
};

struct AState {
  Producer producer;
  std::array<std::array<Slot, kMaxDepth>, kRings> slots;
  std::array<Group, kMaxGroups> groups;
  std::array<NamedBarrier, kMaxGroups> bars;
};

enum ActorKind : uint8_t { AProducer, ATma, AGroup, ARetire };

struct AStep {
  uint8_t actor;
  uint8_t index; ///< slot (TMA), group (group, retire)
  uint8_t ring;  ///< TMA: the ring
};

struct NoPerm {};

std::vector<Instr> buildProgram(const AttentionConfig &c, unsigned g) {
  bool turns = c.groups >= 2 && c.issueTurns;
  const int G = static_cast<int>(c.groups);
  IssueTurnVariant v = c.turnVariant;
  AttentionRingVariant rv = c.ringVariant;
  std::vector<Instr> p;
  auto waitFull = [&](uint8_t ring, int k) {
    Instr i{IWaitFull};
    i.ring = ring;
    i.k = k;
    p.push_back(i);
  };
  auto release = [&](uint8_t ring, int k) {
    Instr i{IRelease};
    i.ring = ring;
    i.k = k;
    p.push_back(i);
  };
  auto waitMma = [&](unsigned n) {
    Instr i{IWaitMma};
    i.n = n;
    p.push_back(i);
  };
  auto sync = [&](int id, const std::string &what) {
    Instr i{ISync};
    i.barrier = static_cast<uint8_t>(id);
    i.turn = true;
    i.what = what;
    p.push_back(i);
  };
  auto arrive = [&](int id, bool handsOver, const std::string &what) {
    Instr i{IArrive};
    i.barrier = static_cast<uint8_t>(id);
    i.turn = handsOver;
    i.what = what;
    p.push_back(i);
  };
  auto takeTurn = [&] {
    if (turns)
      sync(turnSyncBarrier(g, v, G), "its turn to issue");
  };
  auto handOver = [&] {
    if (!turns)
      return;
    if (turnHandsOver(g, v, G))
      arrive(handOverBarrier(g, G), true, "hands the turn over");
    else
      arrive(kNoBarrier, true, "ends its run without handing the turn over");
  };
  auto issue = [&](uint8_t ring, int k, int ring2, int k2,
                   const std::string &what) {
    Instr i{IIssue};
    i.ring = ring;
    i.k = k;
    i.ring2 = ring2;
    i.k2 = k2;
    i.turn = turns;
    i.what = what;
    p.push_back(i);
  };
  auto s = [](int j, int t, int k) {
    return format("S_%d = Q_%d K_%d^T", j, t, k);
  };
  auto u = [](int j, int k) { return format("O += P_%d V_%d", j, k); };

  if (turns)
    for (int id : turnStartArrivals(static_cast<int>(g), v, G))
      arrive(id, false, "passes the first turn");
  int base = 0;
  for (unsigned t = 0; t < c.trips.size(); ++t) {
    int n = static_cast<int>(c.trips[t]);
    int tile = static_cast<int>(t);
    waitFull(RQ, tile);
    bool qReleased = false;
    if (n > 0) {
      waitFull(RK, base);
      takeTurn();
      issue(RQ, tile, RK, base, s(0, tile, base));
      handOver();
      if (rv == AttentionRingVariant::ReleaseQEarly && n == 1) {
        release(RQ, tile);
        qReleased = true;
      }
      if (rv == AttentionRingVariant::ReleaseKBeforeWait)
        release(RK, base);
      waitMma(0);
      if (rv != AttentionRingVariant::ReleaseKBeforeWait)
        release(RK, base);
      for (int j = 1; j < n; ++j) {
        waitFull(RK, base + j);
        takeTurn();
        issue(RQ, tile, RK, base + j, s(j, tile, base + j));
        if (turnHandsOverEarly(v))
          handOver();
        waitFull(RV, base + j - 1);
        issue(RV, base + j - 1, -1, 0, u(j - 1, base + j - 1));
        if (!turnHandsOverEarly(v))
          handOver();
        if (rv == AttentionRingVariant::ReleaseQEarly && j == n - 1) {
          release(RQ, tile);
          qReleased = true;
        }
        if (rv == AttentionRingVariant::ReleaseKBeforeWait)
          release(RK, base + j);
        waitMma(1);
        if (rv != AttentionRingVariant::ReleaseKBeforeWait)
          release(RK, base + j);
        waitMma(rv == AttentionRingVariant::ReleaseVAfterWaitOne ? 1 : 0);
        release(RV, base + j - 1);
      }
      waitFull(RV, base + n - 1);
      takeTurn();
      issue(RV, base + n - 1, -1, 0, u(n - 1, base + n - 1));
      handOver();
      waitMma(0);
      release(RV, base + n - 1);
      base += n;
    }
    if (!qReleased)
      release(RQ, tile);
  }
  if (turns)
    if (std::optional<int> id = turnEndSync(static_cast<int>(g), v, G))
      sync(*id, "takes the last turn");
  return p;
}

std::string describeInstr(const Instr &i, unsigned depth) {
  switch (i.op) {
  case IWaitFull:
    return format("wait full%s[%u] for k=%d", kRingName[i.ring],
                  slotOf(i.k, depth), i.k);
  case IIssue:
    return format("issue wgmma %s%s", i.what.c_str(),
                  i.turn ? " (turn product)" : "");
  case IWaitMma:
    return format("wgmma.wait_group<%u>", i.n);
  case IRelease:
    return format("release %s k=%d (arrive on empty%s[%u])", kRingName[i.ring],
                  i.k, kRingName[i.ring], slotOf(i.k, depth));
  case ISync:
    return format("bar.sync %d, 256 (%s)", i.barrier, i.what.c_str());
  case IArrive:
    if (i.barrier == kNoBarrier)
      return format("(%s)", i.what.c_str());
    return format("bar.arrive %d, 256 (%s)", i.barrier, i.what.c_str());
  }
  return "?";
}

class AttentionModel {
public:
  using State = AState;
  using Step = AStep;
  using Perm = NoPerm;

  explicit AttentionModel(const AttentionConfig &config) : cfg(config) {
    for (unsigned g = 0; g < cfg.groups; ++g)
      programs.push_back(buildProgram(cfg, g));
    int base = 0;
    for (unsigned t = 0; t < cfg.trips.size(); ++t) {
      puts.push_back({RQ, static_cast<int>(t)});
      for (unsigned j = 0; j < cfg.trips[t]; ++j) {
        puts.push_back({RK, base + static_cast<int>(j)});
        puts.push_back({RV, base + static_cast<int>(j)});
      }
      base += static_cast<int>(cfg.trips[t]);
    }
    emptyCount = static_cast<uint8_t>(cfg.groups * cfg.warpsPerGroup);
    turns = cfg.groups >= 2 && cfg.issueTurns;
    width = sizeof(Producer) + kRings * cfg.depth * sizeof(Slot) +
            cfg.groups * sizeof(Group) + (turns ? sizeof(AState::bars) : 0);
  }

  size_t size() const { return width; }

  State initial() const {
    State x;
    std::memset(&x, 0, sizeof x);
    x.producer.pc = puts.empty() ? PDone : PWaitEmpty;
    for (unsigned r = 0; r < kRings; ++r)
      for (unsigned s = 0; s < cfg.depth; ++s) {
        Slot &slot = x.slots[r][s];
        slot.data = kNoData;
        slot.full = {0, static_cast<uint8_t>(fullArrivalCount()), 0};
        slot.empty = {0, emptyCount, 0};
      }
    return x;
  }

  void encode(const State &x, uint8_t *out) const {
    std::memcpy(out, &x.producer, sizeof(Producer));
    out += sizeof(Producer);
    for (unsigned r = 0; r < kRings; ++r) {
      std::memcpy(out, x.slots[r].data(), cfg.depth * sizeof(Slot));
      out += cfg.depth * sizeof(Slot);
    }
    std::memcpy(out, x.groups.data(), cfg.groups * sizeof(Group));
    out += cfg.groups * sizeof(Group);
    if (turns)
      std::memcpy(out, x.bars.data(), sizeof(AState::bars));
  }

  State decode(const uint8_t *in) const {
    State x;
    std::memset(&x, 0, sizeof x);
    std::memcpy(&x.producer, in, sizeof(Producer));
    in += sizeof(Producer);
    for (unsigned r = 0; r < kRings; ++r) {
      std::memcpy(x.slots[r].data(), in, cfg.depth * sizeof(Slot));
      in += cfg.depth * sizeof(Slot);
    }
    std::memcpy(x.groups.data(), in, cfg.groups * sizeof(Group));
    in += cfg.groups * sizeof(Group);
    if (turns)
      std::memcpy(x.bars.data(), in, sizeof(AState::bars));
    return x;
  }

  // The groups play different parts (group 1 passes the first turn): no
  // symmetry to reduce.
  Perm canonicalOrder(const State &) const { return {}; }
  State canonical(const State &x) const { return x; }
  static Step concrete(Step step, const Perm &) { return step; }

  bool finished(const State &x) const {
    if (x.producer.pc != PDone)
      return false;
    for (unsigned g = 0; g < cfg.groups; ++g)
      if (x.groups[g].pc < programs[g].size())
        return false;
    return true;
  }

  void enabled(const State &x, std::vector<Step> &steps) const {
    steps.clear();
    // Partial-order reduction (see the file header).
    for (unsigned g = 0; g < cfg.groups; ++g) {
      const Group &q = x.groups[g];
      if (q.pc >= programs[g].size())
        continue;
      const Instr &i = programs[g][q.pc];
      if (((i.op == IWaitMma) || (i.op == ISync && q.sub == 1)) &&
          groupCanStep(x, g)) {
        steps.push_back({AGroup, static_cast<uint8_t>(g), 0});
        return;
      }
    }
    const Producer &p = x.producer;
    if (p.pc == PArrive || p.pc == PIssue ||
        (p.pc == PWaitEmpty &&
         parityWaitPasses(slotOfPut(x, p.next).empty.phase,
                          producerEmptyParity(puts[p.next].k, cfg.depth))))
      steps.push_back({AProducer, 0, 0});
    for (unsigned r = 0; r < kRings; ++r)
      for (unsigned s = 0; s < cfg.depth; ++s)
        if (x.slots[r][s].tma)
          steps.push_back(
              {ATma, static_cast<uint8_t>(s), static_cast<uint8_t>(r)});
    for (unsigned g = 0; g < cfg.groups; ++g) {
      if (groupCanStep(x, g))
        steps.push_back({AGroup, static_cast<uint8_t>(g), 0});
      if (x.groups[g].inflight)
        steps.push_back({ARetire, static_cast<uint8_t>(g), 0});
    }
  }

  std::optional<Failure> apply(State &x, Step step, std::string *label) const {
    switch (step.actor) {
    case AProducer:
      return stepProducer(x, label);
    case ATma:
      return stepTma(x, step.ring, step.index, label);
    case AGroup:
      return stepGroup(x, step.index, label);
    case ARetire: {
      Group &q = x.groups[step.index];
      if (label)
        *label = format("group %u: wgmma %s retires", step.index,
                        programs[step.index][q.fifo[0]].what.c_str());
      for (unsigned i = 1; i < q.inflight; ++i)
        q.fifo[i - 1] = q.fifo[i];
      --q.inflight;
      q.fifo[q.inflight] = 0;
      return std::nullopt;
    }
    }
    return std::nullopt;
  }

  /// All actors finished: every named barrier phase must be complete.
  std::optional<Failure> atExit(const State &x) const {
    if (!turns)
      return std::nullopt;
    for (unsigned b = 0; b < cfg.groups; ++b)
      if (x.bars[b].arrived) {
        std::string who;
        for (unsigned g = 0; g < cfg.groups; ++g)
          if (x.bars[b].arrived >> g & 1)
            who += (who.empty() ? "group " : ", group ") + std::to_string(g);
        return Failure{
            ViolationKind::BarrierUnbalanced,
            format("every actor finished, but named barrier %u (the turn of "
                   "group %u) is in phase %d with an arrival of %s only: the "
                   "groups reached it a different number of times",
                   kIssueTurnBarrierBase + b, b, x.bars[b].phase,
                   who.c_str())};
      }
    return std::nullopt;
  }

  std::vector<std::string> blocked(const State &x) const {
    std::vector<std::string> lines;
    const Producer &p = x.producer;
    if (p.pc == PWaitEmpty) {
      const Put &put = puts[p.next];
      unsigned s = slotOf(put.k, cfg.depth);
      const Slot &slot = x.slots[put.ring][s];
      lines.push_back(format(
          "producer: waits on empty%s[%u] parity %u for k=%d; the barrier is "
          "in phase %d with %d of %d arrivals missing",
          kRingName[put.ring], s, producerEmptyParity(put.k, cfg.depth), put.k,
          slot.empty.phase, slot.empty.pending, emptyCount));
    }
    for (unsigned g = 0; g < cfg.groups; ++g) {
      const Group &q = x.groups[g];
      if (q.pc >= programs[g].size())
        continue;
      const Instr &i = programs[g][q.pc];
      if (i.op == IWaitFull) {
        unsigned s = slotOf(i.k, cfg.depth);
        lines.push_back(format(
            "group %u: waits on full%s[%u] parity %u for k=%d; the barrier is "
            "in phase %d",
            g, kRingName[i.ring], s, consumerFullParity(i.k, cfg.depth), i.k,
            x.slots[i.ring][s].full.phase));
      } else if (i.op == ISync) {
        const NamedBarrier &b = x.bars[i.barrier - kIssueTurnBarrierBase];
        lines.push_back(format(
            "group %u: waits in bar.sync %d (%s); the barrier is in phase %d "
            "with %d of %u arrivals",
            g, i.barrier, i.what.c_str(), b.phase,
            __builtin_popcount(b.arrived), unsigned(kIssueTurnGroups)));
      } else {
        lines.push_back(format("group %u: blocked at %s", g,
                               describeInstr(i, cfg.depth).c_str()));
      }
    }
    return lines;
  }

private:
  const Slot &slotOfPut(const State &x, unsigned index) const {
    const Put &put = puts[index];
    return x.slots[put.ring][slotOf(put.k, cfg.depth)];
  }

  bool groupCanStep(const State &x, unsigned g) const {
    const Group &q = x.groups[g];
    if (q.pc >= programs[g].size())
      return false;
    const Instr &i = programs[g][q.pc];
    switch (i.op) {
    case IWaitFull:
      return parityWaitPasses(x.slots[i.ring][slotOf(i.k, cfg.depth)].full.phase,
                              consumerFullParity(i.k, cfg.depth));
    case IWaitMma:
      return q.inflight <= i.n;
    case ISync:
      return q.sub == 0 ||
             x.bars[i.barrier - kIssueTurnBarrierBase].phase != q.waitPhase;
    default:
      return true;
    }
  }





  std::optional<Failure> stepProducer(State &x, std::string *label) const {
    Producer &p = x.producer;
    const Put &put = puts[p.next];
    unsigned s = slotOf(put.k, cfg.depth);
    Slot &slot = x.slots[put.ring][s];
    const char *ring = kRingName[put.ring];
    switch (p.pc) {
    case PWaitEmpty:
      if (label)
        *label = format("producer: wait empty%s[%u] parity %u passes for k=%d "
                        "(barrier in phase %d)",
                        ring, s, producerEmptyParity(put.k, cfg.depth), put.k,
                        slot.empty.phase);
      p.pc = PArrive;
      if (slot.empty.phase != lapOf(put.k, cfg.depth))
        return Failure{ViolationKind::WrongPhase,
                       format("producer's wait on empty%s[%u] for k=%d passed "
                              "in phase %d, expected phase %lld",
                              ring, s, put.k, slot.empty.phase,
                              static_cast<long long>(lapOf(put.k, cfg.depth)))};
      return std::nullopt;
    case PArrive: {
      if (label)
        *label = format("producer: arrive.expect_tx on full%s[%u] for k=%d",
                        ring, s, put.k);
      auto failure = checkArrival(
          slot.full, lapOf(put.k, cfg.depth),
          format("producer's arrive.expect_tx on full%s[%u] for k=%d", ring, s,
                 put.k));
      slot.full.tx = static_cast<uint8_t>(slot.full.tx + 1);
      arrive(slot.full, static_cast<uint8_t>(fullArrivalCount()));
      p.pc = PIssue;
      return failure;
    }
    case PIssue: {
      if (label)
        *label = format("producer: issue TMA load of %s k=%d into slot %u",
                        ring, put.k, s);
      std::optional<Failure> failure = checkOverwrite(x, put.ring, put.k, s);
      slot.data = kFilling;
      slot.tma = static_cast<uint8_t>(put.k + 1);
      ++p.next;
      p.pc = p.next == puts.size() ? PDone : PWaitEmpty;
      return failure;
    }
    }
    return std::nullopt;
  }

  /// Before the TMA of ring position k writes slot s: no TMA still writes
  /// it, no unretired wgmma reads an earlier position there, and every
  /// group released position k - D of the ring (releases of a ring are in
  /// order).
  std::optional<Failure> checkOverwrite(const State &x, unsigned ring, int k,
                                        unsigned s) const {
    const Slot &slot = x.slots[ring][s];
    std::string into =
        format("TMA of %s k=%d into slot %u", kRingName[ring], k, s);
    if (slot.tma)
      return Failure{ViolationKind::OverwriteUnreleased,
                     format("%s while the TMA of k=%d is still writing it",
                            into.c_str(), slot.tma - 1)};
    for (unsigned g = 0; g < cfg.groups; ++g) {
      const Group &q = x.groups[g];
      for (unsigned f = 0; f < q.inflight; ++f) {
        const Instr &i = programs[g][q.fifo[f]];
        int reads[2][2] = {{i.ring, i.k}, {i.ring2, i.k2}};
        for (auto &rd : reads)
          if (rd[0] == static_cast<int>(ring) && rd[1] < k &&
              slotOf(rd[1], cfg.depth) == s)
            return Failure{ViolationKind::OverwriteInFlightMma,
                           format("%s while group %u's unretired wgmma %s "
                                  "still reads %s k=%d there",
                                  into.c_str(), g, i.what.c_str(),
                                  kRingName[ring], rd[1])};
      }
    }
    int old = k - static_cast<int>(cfg.depth);
    if (old < 0)
      return std::nullopt;
    for (unsigned g = 0; g < cfg.groups; ++g) {
      const Group &q = x.groups[g];
      if (q.released[ring] > old)
        continue;
      return Failure{ViolationKind::OverwriteUnreleased,
                     format("%s while group %u %s %s k=%d", into.c_str(), g,
                            old < q.acquired[ring] ? "still owns"
                                                   : "has not yet read",
                            kRingName[ring], old)};
    }
    return std::nullopt;
  }

  std::optional<Failure> stepTma(State &x, unsigned ring, unsigned s,
                                 std::string *label) const {
    Slot &slot = x.slots[ring][s];
    int k = slot.tma - 1;
    slot.data = static_cast<uint8_t>(k);
    slot.tma = 0;
    slot.full.tx = static_cast<uint8_t>(slot.full.tx - 1);
    bool completes = slot.full.pending == 0 && slot.full.tx == 0;
    if (label)
      *label = format("TMA: %s k=%d lands in slot %u, complete_tx on "
                      "full%s[%u]%s",
                      kRingName[ring], k, s, kRingName[ring], s,
                      completes ? format(" (phase %d completes)",
                                         slot.full.phase)
                                      .c_str()
                                : "");
    if (completes) {
      ++slot.full.phase;
      slot.full.pending = static_cast<uint8_t>(fullArrivalCount());
    }
    return std::nullopt;
  }

  /// An arrival of group g on named barrier `id`.
  std::optional<Failure> barrierArrive(State &x, unsigned g, int id,
                                       bool *completed) const {
    NamedBarrier &b = x.bars[id - kIssueTurnBarrierBase];
    *completed = false;
    if (b.arrived >> g & 1)
      return Failure{ViolationKind::BarrierOverflow,
                     format("group %u arrives at named barrier %d a second "
                            "time in phase %d: the phase would complete on "
                            "its arrivals alone, without the other group",
                            g, id, b.phase)};
    b.arrived = static_cast<uint8_t>(b.arrived | 1u << g);
    // Two groups complete a phase: the one that waits and the one before
    // it (kIssueTurnBarrierThreads).
    if (static_cast<unsigned>(__builtin_popcount(b.arrived)) ==
        static_cast<unsigned>(kIssueTurnGroups)) {
      ++b.phase;
      b.arrived = 0;
      *completed = true;
    }
    return std::nullopt;
  }

  std::optional<Failure> stepGroup(State &x, unsigned g,
                                   std::string *label) const {
    Group &q = x.groups[g];
    const Instr &i = programs[g][q.pc];
    unsigned D = cfg.depth;
    switch (i.op) {
    case IWaitFull: {
      unsigned s = slotOf(i.k, D);
      const Slot &slot = x.slots[i.ring][s];
      const char *ring = kRingName[i.ring];
      if (label)
        *label = format("group %u: wait full%s[%u] parity %u passes for k=%d "
                        "(barrier in phase %d)",
                        g, ring, s, consumerFullParity(i.k, D), i.k,
                        slot.full.phase);
      ++q.acquired[i.ring];
      ++q.pc;
      if (slot.data == kNoData || slot.data == kFilling)
        return Failure{ViolationKind::ReadUnfilled,
                       format("group %u's wait on full%s[%u] for k=%d passed "
                              "but the slot %s",
                              g, ring, s, i.k,
                              slot.data == kNoData
                                  ? "was never filled"
                                  : "is still being written by a TMA")};
      if (slot.data != i.k)
        return Failure{ViolationKind::ReadStale,
                       format("group %u's wait on full%s[%u] for k=%d passed "
                              "but the slot holds k=%d",
                              g, ring, s, i.k, slot.data)};
      if (slot.full.phase != lapOf(i.k, D) + 1)
        return Failure{ViolationKind::WrongPhase,
                       format("group %u's wait on full%s[%u] for k=%d passed "
                              "in phase %d, expected phase %lld",
                              g, ring, s, i.k, slot.full.phase,
                              static_cast<long long>(lapOf(i.k, D) + 1))};
      return std::nullopt;
    }
    case IIssue: {
      if (label)
        *label = format("group %u: issue wgmma %s", g, i.what.c_str());
      assert(q.inflight < kMaxInFlight && "more wgmma groups in flight than "
                                          "the model holds");
      q.fifo[q.inflight++] = q.pc;
      ++q.pc;
      if (i.turn && !q.turn) {
        std::string holder;
        for (unsigned h = 0; h < cfg.groups; ++h)
          if (h != g && x.groups[h].turn)
            holder = format(" (group %u holds it)", h);
        return Failure{ViolationKind::IssueOutsideTurn,
                       format("group %u issues the turn product %s while it "
                              "does not hold the turn%s",
                              g, i.what.c_str(), holder.c_str())};
      }
      return std::nullopt;
    }
    case IWaitMma:
      if (label)
        *label = format("group %u: wgmma.wait_group<%u> returns (%d in "
                        "flight)",
                        g, i.n, q.inflight);
      ++q.pc;
      return std::nullopt;
    case IRelease: {
      unsigned s = slotOf(i.k, D);
      Barrier &e = x.slots[i.ring][s].empty;
      const char *ring = kRingName[i.ring];
      bool completes = e.pending == 1;
      if (label)
        *label = format("group %u: warp %u arrives on empty%s[%u] releasing "
                        "k=%d%s",
                        g, q.warp, ring, s, i.k,
                        completes ? format(" (phase %d completes)", e.phase)
                                        .c_str()
                                  : "");
      auto failure = checkArrival(
          e, lapOf(i.k, D),
          format("group %u's arrival on empty%s[%u] for k=%d", g, ring, s,
                 i.k));
      arrive(e, emptyCount);
      if (++q.warp == cfg.warpsPerGroup) {
        q.warp = 0;
        ++q.released[i.ring];
        ++q.pc;
      }
      return failure;
    }
    case ISync: {
      NamedBarrier &b = x.bars[i.barrier - kIssueTurnBarrierBase];
      if (q.sub == 0) {
        if (label)
          *label = format("group %u: bar.sync %d arrives (%s; phase %d)", g,
                          i.barrier, i.what.c_str(), b.phase);
        q.waitPhase = b.phase;
        q.sub = 1;
        bool completed;
        return barrierArrive(x, g, i.barrier, &completed);
      }
      if (label)
        *label = format("group %u: bar.sync %d returns (%s)", g, i.barrier,
                        i.what.c_str());
      q.sub = 0;
      ++q.pc;
      if (i.turn) {
        for (unsigned h = 0; h < cfg.groups; ++h)
          if (h != g && x.groups[h].turn)
            return Failure{ViolationKind::TurnOverlap,
                           format("group %u takes its turn (bar.sync %d "
                                  "returns) while group %u holds its own",
                                  g, i.barrier, h)};
        q.turn = 1;
      }
      return std::nullopt;
    }
    case IArrive: {
      ++q.pc;
      if (i.turn)
        q.turn = 0;
      if (i.barrier == kNoBarrier) {
        if (label)
          *label = format("group %u: %s", g, i.what.c_str());
        return std::nullopt;
      }
      if (label)
        *label = format("group %u: bar.arrive %d (%s; phase %d)", g, i.barrier,
                        i.what.c_str(),
                        x.bars[i.barrier - kIssueTurnBarrierBase].phase);
      bool completed;
      return barrierArrive(x, g, i.barrier, &completed);
    }
    }
    return std::nullopt;
  }

  const AttentionConfig &cfg;
  std::vector<std::vector<Instr>> programs;
  std::vector<Put> puts;
  uint8_t emptyCount = 1;
  bool turns = false;
  size_t width = 0;
};

} // namespace

namespace tawa::protocol {

const char *attentionRingVariantName(AttentionRingVariant v) {
  switch (v) {
  case AttentionRingVariant::Correct:
    return "correct";
  case AttentionRingVariant::ReleaseKBeforeWait:
    return "attn-release-k-before-wait";
  case AttentionRingVariant::ReleaseVAfterWaitOne:
    return "attn-release-v-after-wait-1";
  case AttentionRingVariant::ReleaseQEarly:
    return "attn-release-q-early";
  }
  return "?";
}

const std::vector<AttentionRingVariant> &allAttentionRingVariants() {
  static const std::vector<AttentionRingVariant> all = {
      AttentionRingVariant::Correct, AttentionRingVariant::ReleaseKBeforeWait,
      AttentionRingVariant::ReleaseVAfterWaitOne,
      AttentionRingVariant::ReleaseQEarly};
  return all;
}

std::string validateAttentionConfig(const AttentionConfig &config) {
  if (config.depth < 1 || config.depth > kMaxDepth)
    return format("depth must be in [1, %u]", kMaxDepth);
  if (config.groups < 1 || config.groups > kMaxGroups)
    return format("groups must be in [1, %u]", kMaxGroups);
  if (config.warpsPerGroup < 1 || config.warpsPerGroup > 4)
    return "warps per group must be in [1, 4]";
  if (config.trips.empty())
    return "at least one tile";
  unsigned total = 0;
  for (unsigned n : config.trips)
    total += n;
  if (total > kMaxPositions || config.trips.size() > kMaxPositions)
    return format("at most %u key blocks and tiles", kMaxPositions);
  if (config.turnVariant != IssueTurnVariant::Correct &&
      !(config.groups >= 2 && config.issueTurns))
    return "a turn variant needs two or three groups taking issue turns";
  for (unsigned g = 0; g < config.groups; ++g)
    if (buildProgram(config, g).size() > kMaxProgram)
      return format("at most %u consumer instructions (fewer tiles or key "
                    "blocks)",
                    kMaxProgram);
  return "";
}

CheckResult checkAttentionProtocol(const AttentionConfig &config) {
  assert(validateAttentionConfig(config).empty() &&
         "invalid attention model configuration");
  AttentionModel model(config);
  return detail::Explorer<AttentionModel>(model, config.stopAtFirst,
                                          config.maxStates)
      .run();
}

std::vector<std::string> attentionConsumerProgram(const AttentionConfig &config,
                                                  unsigned group) {
  std::vector<std::string> lines;
  for (const Instr &i : buildProgram(config, group))
    lines.push_back(describeInstr(i, config.depth));
  return lines;
}

} // namespace tawa::protocol
