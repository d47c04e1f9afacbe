//===- Explorer.h - breadth-first explorer of a protocol model --*- C++ -*-===//
//
// The search shared by the protocol models (ProtocolModel.cpp: the aref
// ring of the GEMM family; AttentionModel.cpp: the attention pipeline with
// the cooperative groups' issue turns). A model M provides
//
//   using State, Step, Perm;          // plain structs; State bytes encode it
//   size_t size() const;              // bytes of an encoded state
//   State initial() const;
//   void encode(const State &, uint8_t *) const;
//   State decode(const uint8_t *) const;
//   Perm canonicalOrder(const State &) const;  // symmetry reduction
//   State canonical(const State &) const;
//   static Step concrete(Step, const Perm &);  // a stored step, renumbered
//   bool finished(const State &) const;
//   void enabled(const State &, std::vector<Step> &) const;
//   std::optional<Failure> apply(State &, Step, std::string *label) const;
//   std::optional<Failure> atExit(const State &) const; // finished states
//   std::vector<std::string> blocked(const State &) const;
//
// and the explorer visits every reachable canonical state once, breadth
// first, keeping the first (shortest) violation of each kind with its trace,
// replayed from the initial state so that actor numbers stay consistent.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_LIB_PROTOCOL_EXPLORER_H
#define TAWA_LIB_PROTOCOL_EXPLORER_H

#include "ProtocolModel.h"
#include "tawa/Protocol/ArefProtocol.h"

#include <algorithm>
#include <cassert>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace tawa::protocol::detail {

struct Failure {
  ViolationKind kind;
  std::string message;
};

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char *fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

/// An mbarrier as both models hold it in a state. Only uint8_t fields: no
/// padding, so states compare and hash as bytes.
struct Barrier {
  uint8_t phase;   // current (incomplete) phase
  uint8_t pending; // arrivals still missing in this phase
  uint8_t tx;      // transaction units still expected in this phase (a
                   // cluster's may go below 0: modulo 256)
};

/// One arrival, as the hardware does it: the pending count drops and the
/// phase completes when no arrival and no transaction is left.
inline void arrive(Barrier &b, uint8_t count) {
  --b.pending;
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = count;
  }
}

/// An arrival for phase `lap` that meets the barrier in another phase has
/// been counted against the wrong phase.
inline std::optional<Failure> checkArrival(const Barrier &b, Iter lap,
                                           const std::string &who) {
  if (b.phase == lap)
    return std::nullopt;
  return Failure{ViolationKind::ArrivalOverflow,
                 format("%s is meant for phase %lld but the barrier is in "
                        "phase %d%s",
                        who.c_str(), static_cast<long long>(lap), b.phase,
                        b.phase > lap ? ": that phase had already completed "
                                        "(more arrivals than its count)"
                                      : "")};
}

/// Breadth-first search over canonical states, stored back to back in one
/// byte arena; the hash set holds indices into it.
template <class M> class Explorer {
public:
  using State = typename M::State;
  using Step = typename M::Step;
  using Perm = typename M::Perm;

  Explorer(const M &model, bool stopAtFirst, uint64_t maxStates)
      : model(model), stopAtFirst(stopAtFirst), maxStates(maxStates),
        width(model.size()), seen(1 << 12, Hash{this}, Equal{this}) {}

  CheckResult run() {
    CheckResult result;
    State start = model.initial();
    add(model.canonical(start), 0, Step{});
    std::vector<Step> next;
    for (uint64_t cursor = 0; cursor < parent.size(); ++cursor) {
      State x = model.decode(&arena[cursor * width]);
      model.enabled(x, next);
      if (next.empty()) {
        if (!model.finished(x)) {
          ++result.violationCount;
          if (!result.has(ViolationKind::Deadlock))
            result.violations.push_back(deadlock(cursor));
          if (stopAtFirst)
            break;
        } else if (std::optional<Failure> failure = model.atExit(x)) {
          ++result.violationCount;
          if (!result.has(failure->kind))
            result.violations.push_back(atExit(cursor, *failure));
          if (stopAtFirst)
            break;
        }
        continue;
      }
      bool stop = false;
      for (Step step : next) {
        State y = x;
        ++result.transitions;
        if (std::optional<Failure> failure = model.apply(y, step, nullptr)) {
          ++result.violationCount;
          if (!result.has(failure->kind))
            result.violations.push_back(violation(cursor, step));
          if (stopAtFirst) {
            stop = true;
            break;
          }
          continue;
        }
        add(model.canonical(y), cursor, step);
      }
      if (stop)
        break;
      if (maxStates && parent.size() >= maxStates &&
          cursor + 1 < parent.size()) {
        result.complete = false;
        break;
      }
    }
    result.states = parent.size();
    return result;
  }

private:
  struct Hash {
    const Explorer *e;
    size_t operator()(uint32_t i) const {
      return std::hash<std::string_view>()(e->bytes(i));
    }
  };
  struct Equal {
    const Explorer *e;
    bool operator()(uint32_t a, uint32_t b) const {
      return e->bytes(a) == e->bytes(b);
    }
  };

  std::string_view bytes(uint32_t i) const {
    return {reinterpret_cast<const char *>(&arena[i * width]), width};
  }

  void add(const State &x, uint32_t from, Step via) {
    uint32_t index = static_cast<uint32_t>(parent.size());
    arena.resize(arena.size() + width);
    model.encode(x, &arena[index * width]);
    // The set hashes the arena bytes at `index`: tentatively append, then
    // take the bytes back when the state was known.
    if (!seen.insert(index).second) {
      arena.resize(arena.size() - width);
      return;
    }
    parent.push_back(from);
    steps.push_back(via);
  }

  /// Replays the path to canonical state `target` from the initial state,
  /// mapping each stored step (numbered in its canonical parent) onto the
  /// concrete state, so that the actor numbers stay consistent.
  State replay(uint32_t target, std::vector<std::string> &trace,
               Perm &perm) const {
    std::vector<uint32_t> path;
    for (uint32_t i = target; i != 0; i = parent[i])
      path.push_back(i);
    std::reverse(path.begin(), path.end());
    State x = model.initial();
    perm = model.canonicalOrder(x);
    for (uint32_t i : path) {
      Step step = M::concrete(steps[i], perm);
      std::string label;
      model.apply(x, step, &label);
      trace.push_back(label);
      perm = model.canonicalOrder(x);
    }
    return x;
  }

  Violation deadlock(uint32_t at) const {
    Violation v;
    v.kind = ViolationKind::Deadlock;
    Perm perm;
    State x = replay(at, v.trace, perm);
    v.blocked = model.blocked(x);
    v.message = "no actor can take a step, yet not all have finished";
    return v;
  }

  Violation atExit(uint32_t at, const Failure &failure) const {
    Violation v;
    Perm perm;
    replay(at, v.trace, perm);
    v.kind = failure.kind;
    v.message = failure.message;
    return v;
  }

  Violation violation(uint32_t at, Step step) const {
    Violation v;
    Perm perm;
    State x = replay(at, v.trace, perm);
    std::string label;
    std::optional<Failure> failure =
        model.apply(x, M::concrete(step, perm), &label);
    assert(failure && "replayed step must fail again");
    v.trace.push_back(label);
    v.kind = failure->kind;
    v.message = failure->message;
    return v;
  }

  const M &model;
  bool stopAtFirst;
  uint64_t maxStates;
  size_t width;
  std::vector<uint8_t> arena;
  std::vector<uint32_t> parent;
  std::vector<Step> steps;
  std::unordered_set<uint32_t, Hash, Equal> seen;
};

} // namespace tawa::protocol::detail

#endif // TAWA_LIB_PROTOCOL_EXPLORER_H
