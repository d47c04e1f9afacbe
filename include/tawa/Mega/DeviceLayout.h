//===- DeviceLayout.h - the device tables, byte for byte ---*- C++ -*-===//
//
// The packed tables the persistent mega-kernel reads (docs/MEGAKERNEL.md,
// "Device tables"): one blob, copied to the GPU with one memcpy, made of a
// header and sections at 16-byte-aligned offsets the header records. The
// host lowering (DeviceTables.h) writes it; the device runtime
// (tawa/device/mega/runtime.cuh) reads it. Plain C++ structs with fixed-width
// fields only, so nvcc and the host compiler agree on every offset.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_DEVICELAYOUT_H
#define TAWA_MEGA_DEVICELAYOUT_H

#include <cstdint>

namespace tawa::mega {

/// "TMGK" little-endian.
constexpr uint32_t kTablesMagic = 0x4B474D54u;
constexpr uint32_t kTablesVersion = 1;
/// An absent task or event id (an event that launches nothing).
constexpr uint32_t kNoId = 0xFFFFFFFFu;
/// TaskDesc::op of an empty (normalization) task.
constexpr uint16_t kEmptyOpIndex = 0xFFFFu;
/// TaskDesc::kind of an empty task; other kinds are OpKind + 1.
constexpr uint8_t kEmptyTaskKind = 0;

/// TaskDesc::flags.
constexpr uint8_t kTaskJit = 1; ///< dispatched by a scheduler, not pre-queued
/// Its arrival need not release the task's writes: every task its trigger
/// event launches reads its inputs by polling them, not through the event
/// (markRelaxedArrivals; only plans without JIT tasks honour it).
constexpr uint8_t kTaskRelaxedArrival = 2;

/// EventDesc::flags.
constexpr uint32_t kEventDispatchesJit = 1; ///< its range holds a JIT task
constexpr uint32_t kEventIsStart = 2;
constexpr uint32_t kEventIsEnd = 4;

/// One task: 16 bytes, one vector load.
struct alignas(16) TaskDesc {
  uint32_t waitEvent;    ///< the one event it waits on
  uint32_t triggerEvent; ///< the one event its completion arrives at
  uint32_t tile;         ///< tile index within its operator
  uint16_t op;           ///< index into the op section, kEmptyOpIndex if empty
  uint8_t kind;          ///< OpKind + 1, kEmptyTaskKind if empty
  uint8_t flags;         ///< kTaskJit, kTaskRelaxedArrival
};
static_assert(sizeof(TaskDesc) == 16, "TaskDesc is one 16-byte load");

/// One event: fires when `triggerCount` tasks have arrived, then launches the
/// task ids [firstTask, lastTask] (linearization makes fan-out a range).
struct alignas(16) EventDesc {
  uint32_t triggerCount;
  uint32_t firstTask; ///< kNoId when it launches nothing (the end event)
  uint32_t lastTask;  ///< kNoId when it launches nothing
  uint32_t flags;     ///< kEventDispatchesJit, kEventIsStart, kEventIsEnd
};
static_assert(sizeof(EventDesc) == 16, "EventDesc is one 16-byte load");

/// One operator: what a task function needs beyond its tile (for now the
/// kind and layer; the real task functions' parameters will follow).
struct alignas(8) OpDesc {
  uint8_t kind;   ///< OpKind + 1
  uint8_t launch; ///< 0 AOT, 1 JIT
  int16_t layer;  ///< decoder layer, -1 outside the layers
  uint32_t numTasks;
};
static_assert(sizeof(OpDesc) == 8, "OpDesc is 8 bytes");

/// The blob's first 96 bytes. Offsets are in bytes from the blob's start,
/// multiples of 16. Sections, in this order:
///   tasks          TaskDesc[numTasks]       by linear task id
///   events         EventDesc[numEvents]     by linear event id
///   ops            OpDesc[numOps]
///   aotOffsets     uint32[numWorkers + 1]   worker w's AOT queue is
///   aotTasks       uint32[numAotTasks]      aotTasks[aotOffsets[w] ..
///                                           aotOffsets[w+1]), ascending ids
///   producerOffsets uint32[numTasks + 1]    task t's tile producers (tasks
///   producers      uint32[numProducerEdges] whose written box meets a box t
///                                           reads): producers[off[t] ..
///                                           off[t+1]), ascending; for checks
struct alignas(16) TablesHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t numTasks;
  uint32_t numEvents;
  uint32_t numOps;
  uint32_t numWorkers;
  uint32_t startEvent;
  uint32_t endEvent;
  uint32_t numAotTasks;
  uint32_t numJitTasks;
  uint32_t numJitEvents; ///< events with kEventDispatchesJit
  uint32_t numProducerEdges;
  uint32_t tasksOffset;
  uint32_t eventsOffset;
  uint32_t opsOffset;
  uint32_t aotOffsetsOffset;
  uint32_t aotTasksOffset;
  uint32_t producerOffsetsOffset;
  uint32_t producersOffset;
  uint32_t totalBytes;
  uint32_t reserved[4];
};
static_assert(sizeof(TablesHeader) == 96, "TablesHeader is 96 bytes");

} // namespace tawa::mega

#endif // TAWA_MEGA_DEVICELAYOUT_H
