//===- DeviceTables.h - a linear tGraph as device tables --------*- C++ -*-===//
//
// The last host step before the persistent kernel (docs/MEGAKERNEL.md,
// "Device tables"): a linear tGraph becomes the fixed-size task and event
// descriptors of DeviceLayout.h, the ahead-of-time assignment of tasks to
// worker queues, and the classification of tasks and events as JIT
// (dispatched by scheduler warps at run time) or AOT (pre-queued). pack()
// writes the blob the kernel reads; unpack() reads and validates one.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_DEVICETABLES_H
#define TAWA_MEGA_DEVICETABLES_H

#include "tawa/Mega/DeviceLayout.h"
#include "tawa/Mega/TGraph.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tawa::mega {

struct LoweringOptions {
  /// Worker CTAs the AOT tasks are spread over (the kernel's grid minus its
  /// scheduler CTAs); the kernel refuses tables made for another count.
  unsigned workers = 128;
  /// Record each task's tile producers (the synthetic tasks' dependency
  /// check reads them; a kernel with real task functions does not).
  bool producers = true;
};

/// The unpacked tables: the header's counts and the sections as vectors.
struct DeviceTables {
  TablesHeader header{};
  std::vector<TaskDesc> tasks;
  std::vector<EventDesc> events;
  std::vector<OpDesc> ops;
  std::vector<uint32_t> aotOffsets;
  std::vector<uint32_t> aotTasks;
  std::vector<uint32_t> producerOffsets;
  std::vector<uint32_t> producers;
};

/// Lowers a linear graph. Fails (with a message) on a graph not in linear
/// form, ids that are not a topological order (round-robin queues would
/// deadlock), an event whose launch range is not exactly its waiters, or
/// counts that do not fit the layout's fields.
bool lowerToDeviceTables(const TGraph &g, const LoweringOptions &options,
                         DeviceTables &out, std::string &error);

/// Sets kTaskRelaxedArrival on every task whose trigger event launches only
/// AOT tasks of kinds for which `polls(kind)` holds (an event that launches
/// nothing, such as the end event, keeps its releases): those tasks read
/// what the event orders by polling it (the decoder's polled activations),
/// so the arrival need not wait for the task's writes to reach L2 before
/// the worker moves on. Returns how many tasks it marked.
size_t markRelaxedArrivals(DeviceTables &tables, bool (*polls)(uint8_t kind));

/// The blob of DeviceLayout.h: header then sections, 16-byte aligned.
std::vector<uint8_t> packTables(const DeviceTables &tables);

/// Reads a blob back, checking the magic, version, offsets and every id
/// against the counts (a corrupt blob must not send the kernel off bounds).
bool unpackTables(const uint8_t *data, size_t size, DeviceTables &out,
                  std::string &error);

/// A readable dump: the header's counts, then one line per event, task and
/// worker queue (the lit tests' view of the tables).
void printTables(const DeviceTables &tables, std::ostream &os);

/// Tasks whose written box intersects a box task t reads, per task, sorted:
/// the un-fused tile dependencies the device check verifies.
std::vector<std::vector<int>> tileProducers(const TGraph &g);

/// Longest chain of tasks (in tasks) from the start event to the end event:
/// the dispatch hops a step cannot overlap.
int64_t criticalPathTasks(const DeviceTables &tables);

} // namespace tawa::mega

#endif // TAWA_MEGA_DEVICETABLES_H
