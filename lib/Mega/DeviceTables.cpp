//===- DeviceTables.cpp - lowering a linear tGraph to device tables -------===//
//
// Tasks keep their linear ids; each becomes a 16-byte descriptor (its one
// wait and one trigger event, operator, tile, kind, launch mode) and each
// event a 16-byte one (trigger count, launch range). AOT tasks go to worker
// queues round-robin in id order (MPK §5.2: operators have about as many
// tiles as workers and tiles of an operator cost the same, so round-robin
// balances them; ids are topological, so a queue never waits on a task
// behind it). JIT tasks (operators marked launch=jit, whose time depends on
// data) are left to the scheduler warps, which see the events that launch
// them. Empty tasks are AOT: they only forward an arrival, and queuing them
// costs a worker less than a round trip through a scheduler.
//
//===----------------------------------------------------------------------===//

#include "tawa/Mega/DeviceTables.h"

#include <algorithm>
#include <cstring>
#include <ostream>

namespace tawa::mega {

std::vector<std::vector<int>> tileProducers(const TGraph &g) {
  std::vector<std::vector<std::pair<int, const Region *>>> writers(
      g.tensors.size());
  for (size_t t = 0; t < g.tasks.size(); ++t)
    for (const Region &r : g.tasks[t].writes)
      writers[r.tensor].push_back({static_cast<int>(t), &r});
  std::vector<std::vector<int>> producers(g.tasks.size());
  for (size_t t = 0; t < g.tasks.size(); ++t) {
    std::vector<int> &ps = producers[t];
    for (const Region &read : g.tasks[t].reads)
      for (const auto &writer : writers[read.tensor])
        if (writer.first != static_cast<int>(t) &&
            overlaps(read, *writer.second))
          ps.push_back(writer.first);
    std::sort(ps.begin(), ps.end());
    ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
  }
  return producers;
}

namespace {

constexpr uint32_t kAlign = 16;

uint32_t alignUp(uint64_t n) {
  return static_cast<uint32_t>((n + kAlign - 1) / kAlign * kAlign);
}

/// Section offsets of a header whose counts are set.
void layoutSections(TablesHeader &h) {
  uint64_t at = sizeof(TablesHeader);
  auto place = [&at](uint32_t &offset, uint64_t bytes) {
    offset = alignUp(at);
    at = uint64_t(offset) + bytes;
  };
  place(h.tasksOffset, uint64_t(h.numTasks) * sizeof(TaskDesc));
  place(h.eventsOffset, uint64_t(h.numEvents) * sizeof(EventDesc));
  place(h.opsOffset, uint64_t(h.numOps) * sizeof(OpDesc));
  place(h.aotOffsetsOffset, (uint64_t(h.numWorkers) + 1) * 4);
  place(h.aotTasksOffset, uint64_t(h.numAotTasks) * 4);
  place(h.producerOffsetsOffset, (uint64_t(h.numTasks) + 1) * 4);
  place(h.producersOffset, uint64_t(h.numProducerEdges) * 4);
  h.totalBytes = alignUp(at);
}

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

} // namespace

bool lowerToDeviceTables(const TGraph &g, const LoweringOptions &options,
                         DeviceTables &out, std::string &error) {
  if (g.form != Form::Linear)
    return fail(error, std::string("lowering needs a linear graph, got '") +
                           formName(g.form) + "' (run linearize first)");
  if (options.workers == 0)
    return fail(error, "lowering needs at least one worker");
  const size_t nT = g.tasks.size(), nE = g.events.size();
  constexpr uint64_t kMaxId = kNoId - 1;
  if (nT > kMaxId || nE > kMaxId)
    return fail(error, "too many tasks or events for 32-bit ids");
  if (g.ops.size() >= kEmptyOpIndex)
    return fail(error, "too many operators for 16-bit op ids (" +
                           std::to_string(g.ops.size()) + ")");
  if (g.start < 0 || g.end < 0)
    return fail(error, "lowering needs start and end events");

  DeviceTables t;
  TablesHeader &h = t.header;
  h.magic = kTablesMagic;
  h.version = kTablesVersion;
  h.numTasks = static_cast<uint32_t>(nT);
  h.numEvents = static_cast<uint32_t>(nE);
  h.numOps = static_cast<uint32_t>(g.ops.size());
  h.numWorkers = options.workers;
  h.startEvent = static_cast<uint32_t>(g.start);
  h.endEvent = static_cast<uint32_t>(g.end);

  for (const Operator &op : g.ops) {
    OpDesc d{};
    d.kind = static_cast<uint8_t>(static_cast<int>(op.kind) + 1);
    d.launch = op.launch == LaunchMode::Jit ? 1 : 0;
    d.layer = static_cast<int16_t>(op.layer);
    t.ops.push_back(d);
  }

  std::vector<uint32_t> arrivals(nE, 0);
  t.tasks.resize(nT);
  for (size_t i = 0; i < nT; ++i) {
    const Task &task = g.tasks[i];
    if (task.waits.size() != 1 || task.triggers.size() != 1)
      return fail(error, g.describeTask(static_cast<int>(i)) +
                             " does not wait on and trigger exactly one event");
    if (task.tile < 0 || uint64_t(task.tile) > kMaxId)
      return fail(error,
                  g.describeTask(static_cast<int>(i)) + ": tile out of range");
    TaskDesc &d = t.tasks[i];
    d.waitEvent = static_cast<uint32_t>(task.waits[0]);
    d.triggerEvent = static_cast<uint32_t>(task.triggers[0]);
    d.tile = static_cast<uint32_t>(task.tile);
    d.flags = 0;
    if (task.isEmpty()) {
      d.op = kEmptyOpIndex;
      d.kind = kEmptyTaskKind;
    } else {
      d.op = static_cast<uint16_t>(task.op);
      d.kind = t.ops[task.op].kind;
      t.ops[task.op].numTasks++;
      if (g.ops[task.op].launch == LaunchMode::Jit)
        d.flags |= kTaskJit;
    }
    ++arrivals[d.triggerEvent];
  }

  t.events.resize(nE);
  for (size_t e = 0; e < nE; ++e) {
    const Event &ev = g.events[e];
    EventDesc &d = t.events[e];
    if (ev.count != int64_t(arrivals[e]))
      return fail(error, "event " + std::to_string(e) + " has count " +
                             std::to_string(ev.count) + " but " +
                             std::to_string(arrivals[e]) + " tasks trigger it");
    d.triggerCount = arrivals[e];
    d.firstTask = ev.first < 0 ? kNoId : static_cast<uint32_t>(ev.first);
    d.lastTask = ev.last < 0 ? kNoId : static_cast<uint32_t>(ev.last);
    d.flags = 0;
    if (int(e) == g.start)
      d.flags |= kEventIsStart;
    if (int(e) == g.end)
      d.flags |= kEventIsEnd;
  }

  // Each task must lie in its wait event's range and the ranges must cover
  // the tasks once: then a range is exactly the event's waiters.
  uint64_t covered = 0;
  for (size_t e = 0; e < nE; ++e) {
    const EventDesc &d = t.events[e];
    if (d.firstTask == kNoId)
      continue;
    if (d.lastTask < d.firstTask || d.lastTask >= nT)
      return fail(error,
                  "event " + std::to_string(e) + " has a bad launch range");
    covered += uint64_t(d.lastTask) - d.firstTask + 1;
  }
  for (size_t i = 0; i < nT; ++i) {
    const EventDesc &w = t.events[t.tasks[i].waitEvent];
    if (w.firstTask == kNoId || i < w.firstTask || i > w.lastTask)
      return fail(error, "task " + std::to_string(i) +
                             " is outside the launch range of event " +
                             std::to_string(t.tasks[i].waitEvent));
    // Topological ids: a task's trigger event launches only later tasks.
    const EventDesc &trig = t.events[t.tasks[i].triggerEvent];
    if (trig.firstTask != kNoId && trig.firstTask <= i)
      return fail(error, "task " + std::to_string(i) + " triggers event " +
                             std::to_string(t.tasks[i].triggerEvent) +
                             ", which launches task " +
                             std::to_string(trig.firstTask) +
                             ": ids are not a topological order");
    if (t.tasks[i].flags & kTaskJit) {
      t.events[t.tasks[i].waitEvent].flags |= kEventDispatchesJit;
      ++h.numJitTasks;
    }
  }
  if (covered != nT)
    return fail(error, "event launch ranges cover " + std::to_string(covered) +
                           " task slots for " + std::to_string(nT) + " tasks");
  for (const EventDesc &d : t.events)
    if (d.flags & kEventDispatchesJit)
      ++h.numJitEvents;

  std::vector<std::vector<uint32_t>> queues(options.workers);
  uint64_t next = 0;
  for (size_t i = 0; i < nT; ++i)
    if (!(t.tasks[i].flags & kTaskJit))
      queues[next++ % options.workers].push_back(static_cast<uint32_t>(i));
  t.aotOffsets.push_back(0);
  for (const std::vector<uint32_t> &q : queues) {
    t.aotTasks.insert(t.aotTasks.end(), q.begin(), q.end());
    t.aotOffsets.push_back(static_cast<uint32_t>(t.aotTasks.size()));
  }
  h.numAotTasks = static_cast<uint32_t>(t.aotTasks.size());

  t.producerOffsets.push_back(0);
  if (options.producers) {
    for (const std::vector<int> &ps : tileProducers(g)) {
      for (int p : ps)
        t.producers.push_back(static_cast<uint32_t>(p));
      if (t.producers.size() > kMaxId)
        return fail(error, "too many producer edges for 32-bit offsets");
      t.producerOffsets.push_back(static_cast<uint32_t>(t.producers.size()));
    }
  } else {
    t.producerOffsets.assign(nT + 1, 0);
  }
  h.numProducerEdges = static_cast<uint32_t>(t.producers.size());
  layoutSections(h);
  out = std::move(t);
  return true;
}

size_t markRelaxedArrivals(DeviceTables &t, bool (*polls)(uint8_t kind)) {
  std::vector<bool> polledOnly(t.events.size(), false);
  for (size_t e = 0; e < t.events.size(); ++e) {
    const EventDesc &d = t.events[e];
    if (d.firstTask == kNoId)
      continue;
    bool all = true;
    for (uint32_t i = d.firstTask; all && i <= d.lastTask; ++i)
      all = !(t.tasks[i].flags & kTaskJit) && polls(t.tasks[i].kind);
    polledOnly[e] = all;
  }
  size_t marked = 0;
  for (TaskDesc &d : t.tasks) {
    d.flags &= ~kTaskRelaxedArrival;
    if (polledOnly[d.triggerEvent]) {
      d.flags |= kTaskRelaxedArrival;
      ++marked;
    }
  }
  return marked;
}

std::vector<uint8_t> packTables(const DeviceTables &t) {
  std::vector<uint8_t> blob(t.header.totalBytes, 0);
  auto put = [&blob](uint32_t offset, const void *data, size_t bytes) {
    if (bytes)
      std::memcpy(blob.data() + offset, data, bytes);
  };
  const TablesHeader &h = t.header;
  put(0, &h, sizeof h);
  put(h.tasksOffset, t.tasks.data(), t.tasks.size() * sizeof(TaskDesc));
  put(h.eventsOffset, t.events.data(), t.events.size() * sizeof(EventDesc));
  put(h.opsOffset, t.ops.data(), t.ops.size() * sizeof(OpDesc));
  put(h.aotOffsetsOffset, t.aotOffsets.data(), t.aotOffsets.size() * 4);
  put(h.aotTasksOffset, t.aotTasks.data(), t.aotTasks.size() * 4);
  put(h.producerOffsetsOffset, t.producerOffsets.data(),
      t.producerOffsets.size() * 4);
  put(h.producersOffset, t.producers.data(), t.producers.size() * 4);
  return blob;
}

namespace {

template <typename T>
void take(const uint8_t *data, uint32_t offset, size_t count,
          std::vector<T> &out) {
  out.resize(count);
  if (count)
    std::memcpy(out.data(), data + offset, count * sizeof(T));
}

/// An offsets array must start at 0, never decrease and end at `total`.
bool monotone(const std::vector<uint32_t> &offsets, uint32_t total) {
  if (offsets.empty() || offsets.front() != 0 || offsets.back() != total)
    return false;
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1])
      return false;
  return true;
}

} // namespace

bool unpackTables(const uint8_t *data, size_t size, DeviceTables &out,
                  std::string &error) {
  if (size < sizeof(TablesHeader))
    return fail(error, "tables: " + std::to_string(size) +
                           " bytes, shorter than the header");
  TablesHeader h;
  std::memcpy(&h, data, sizeof h);
  if (h.magic != kTablesMagic)
    return fail(error, "tables: bad magic (not a tawa-mega tables blob)");
  if (h.version != kTablesVersion)
    return fail(error, "tables: version " + std::to_string(h.version) +
                           ", this build reads " +
                           std::to_string(kTablesVersion));
  TablesHeader expect = h;
  layoutSections(expect);
  if (std::memcmp(&expect, &h, sizeof h) != 0)
    return fail(error, "tables: section offsets do not match the counts");
  if (h.totalBytes != size)
    return fail(error, "tables: header says " + std::to_string(h.totalBytes) +
                           " bytes, blob has " + std::to_string(size));
  if (h.numWorkers == 0 || h.startEvent >= h.numEvents ||
      h.endEvent >= h.numEvents)
    return fail(error, "tables: bad worker count or start/end event");
  DeviceTables t;
  t.header = h;
  take(data, h.tasksOffset, h.numTasks, t.tasks);
  take(data, h.eventsOffset, h.numEvents, t.events);
  take(data, h.opsOffset, h.numOps, t.ops);
  take(data, h.aotOffsetsOffset, size_t(h.numWorkers) + 1, t.aotOffsets);
  take(data, h.aotTasksOffset, h.numAotTasks, t.aotTasks);
  take(data, h.producerOffsetsOffset, size_t(h.numTasks) + 1,
       t.producerOffsets);
  take(data, h.producersOffset, h.numProducerEdges, t.producers);

  uint32_t jitTasks = 0;
  for (size_t i = 0; i < t.tasks.size(); ++i) {
    const TaskDesc &d = t.tasks[i];
    bool empty = d.op == kEmptyOpIndex;
    if (d.waitEvent >= h.numEvents || d.triggerEvent >= h.numEvents ||
        (!empty && d.op >= h.numOps) || (empty != (d.kind == kEmptyTaskKind)) ||
        (!empty && d.kind != t.ops[d.op].kind))
      return fail(error, "tables: task " + std::to_string(i) +
                             " names a bad event, operator or kind");
    if (d.flags & ~(kTaskJit | kTaskRelaxedArrival))
      return fail(error, "tables: task " + std::to_string(i) +
                             " has unknown flags " + std::to_string(d.flags));
    jitTasks += (d.flags & kTaskJit) ? 1 : 0;
  }
  for (size_t e = 0; e < t.events.size(); ++e) {
    const EventDesc &d = t.events[e];
    bool none = d.firstTask == kNoId;
    if (none != (d.lastTask == kNoId) ||
        (!none && (d.lastTask < d.firstTask || d.lastTask >= h.numTasks)))
      return fail(error,
                  "tables: event " + std::to_string(e) + " has a bad range");
  }
  if (jitTasks != h.numJitTasks || !monotone(t.aotOffsets, h.numAotTasks) ||
      !monotone(t.producerOffsets, h.numProducerEdges))
    return fail(error, "tables: queue or producer offsets are inconsistent");
  for (uint32_t id : t.aotTasks)
    if (id >= h.numTasks)
      return fail(error,
                  "tables: an AOT queue names task " + std::to_string(id));
  for (uint32_t id : t.producers)
    if (id >= h.numTasks)
      return fail(error,
                  "tables: a producer list names task " + std::to_string(id));
  out = std::move(t);
  return true;
}

int64_t criticalPathTasks(const DeviceTables &t) {
  // Ids are topological: one pass in id order sees every producer first.
  std::vector<int64_t> eventDepth(t.events.size(), 0);
  for (const TaskDesc &d : t.tasks)
    eventDepth[d.triggerEvent] =
        std::max(eventDepth[d.triggerEvent], eventDepth[d.waitEvent] + 1);
  return eventDepth[t.header.endEvent];
}

namespace {

const char *kindName(uint8_t kind) {
  if (kind == kEmptyTaskKind)
    return "empty";
  return opKindName(static_cast<OpKind>(kind - 1));
}

void printIdRange(std::ostream &os, uint32_t first, uint32_t last) {
  if (first == kNoId)
    os << "[]";
  else
    os << "[" << first << "," << last << "]";
}

} // namespace

void printTables(const DeviceTables &t, std::ostream &os) {
  const TablesHeader &h = t.header;
  os << "tables tasks=" << h.numTasks << " events=" << h.numEvents
     << " ops=" << h.numOps << " workers=" << h.numWorkers
     << " start=" << h.startEvent << " end=" << h.endEvent
     << " aot=" << h.numAotTasks << " jit=" << h.numJitTasks
     << " jit-events=" << h.numJitEvents
     << " producer-edges=" << h.numProducerEdges << " bytes=" << h.totalBytes
     << "\n";
  for (size_t e = 0; e < t.events.size(); ++e) {
    const EventDesc &d = t.events[e];
    os << "event " << e << " count=" << d.triggerCount << " launch=";
    printIdRange(os, d.firstTask, d.lastTask);
    if (d.flags & kEventDispatchesJit)
      os << " jit";
    if (d.flags & kEventIsStart)
      os << " start";
    if (d.flags & kEventIsEnd)
      os << " end";
    os << "\n";
  }
  std::vector<int64_t> worker(t.tasks.size(), -1);
  for (uint32_t w = 0; w < h.numWorkers; ++w)
    for (uint32_t i = t.aotOffsets[w]; i < t.aotOffsets[w + 1]; ++i)
      worker[t.aotTasks[i]] = w;
  for (size_t i = 0; i < t.tasks.size(); ++i) {
    const TaskDesc &d = t.tasks[i];
    os << "task " << i << " kind=" << kindName(d.kind);
    if (d.op != kEmptyOpIndex)
      os << " op=" << d.op << " tile=" << d.tile;
    os << " wait=" << d.waitEvent << " trigger=" << d.triggerEvent;
    if (d.flags & kTaskJit)
      os << " jit";
    else
      os << " aot worker=" << worker[i];
    if (d.flags & kTaskRelaxedArrival)
      os << " relaxed";
    os << " producers=[";
    for (uint32_t p = t.producerOffsets[i]; p < t.producerOffsets[i + 1]; ++p)
      os << (p == t.producerOffsets[i] ? "" : ",") << t.producers[p];
    os << "]\n";
  }
}

} // namespace tawa::mega
