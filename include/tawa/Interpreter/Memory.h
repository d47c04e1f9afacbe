//===- Memory.h - global memory and TMA descriptors of the interpreter -*- C++
//-*-===//
//
// Global memory is a set of byte buffers in one 64-bit address space (each
// buffer at its own base, far from the others), so that pointer arithmetic,
// pointer tables stored as i64 and tt.int_to_ptr behave as on the device. A
// TMA descriptor names a base address, a global shape and strides (in
// elements) and a block; descriptor loads fill out-of-bounds elements with
// zero (or NaN) and descriptor stores drop them, as the TMA unit does.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_INTERPRETER_MEMORY_H
#define TAWA_INTERPRETER_MEMORY_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tawa::interp {

/// One allocation: elements of one type, row-major with `shape` when the
/// buffer backs a tensor (for messages), plus which elements were written.
struct Buffer {
  std::string name;
  mlir::Type elementType;
  llvm::SmallVector<int64_t, 4> shape; ///< empty: a flat array
  uint64_t base = 0;
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> written; ///< one flag per element

  int64_t numElements() const { return static_cast<int64_t>(written.size()); }
  /// "c_desc[1, 7]" (or "bias[7]" for a flat buffer) for element `index`.
  std::string elementName(int64_t index) const;
};

class GlobalMemory {
public:
  /// Buffers are this far apart, so that no pointer walks from one into the
  /// next; their bases start at one such distance.
  static constexpr uint64_t kBufferSpacing = uint64_t(1) << 36;

  /// A zeroed buffer of `numElements` elements; returns its index.
  unsigned allocate(std::string name, mlir::Type elementType,
                    int64_t numElements, llvm::ArrayRef<int64_t> shape = {});

  size_t size() const { return buffers.size(); }
  Buffer &buffer(unsigned index) { return buffers[index]; }
  const Buffer &buffer(unsigned index) const { return buffers[index]; }

  /// Finds the buffer and byte offset of an access of `bytes` bytes at
  /// `address`; false unless it lies wholly inside one buffer, aligned to
  /// `bytes`.
  bool locate(uint64_t address, unsigned bytes, unsigned &bufferIndex,
              uint64_t &offset) const;

  /// Raw access to a located range of 1, 2, 4 or 8 bytes (little endian, the
  /// bit pattern zero-extended); a store marks the elements it touches as
  /// written.
  uint64_t loadBits(unsigned bufferIndex, uint64_t offset,
                    unsigned bytes) const;
  void storeBits(unsigned bufferIndex, uint64_t offset, unsigned bytes,
                 uint64_t bits);

  /// Forgets which elements were written (the buffers keep their contents).
  void clearWritten();
  /// Elements written since the last clearWritten(), over all buffers.
  int64_t countWritten() const;

private:
  std::vector<Buffer> buffers;
};

/// A TMA descriptor: where the tensor is, its global shape and strides in
/// elements (outermost first), and the block every access moves.
struct TensorDescriptor {
  uint64_t base = 0;
  mlir::Type elementType;
  llvm::SmallVector<int64_t, 4> shape;
  llvm::SmallVector<int64_t, 4> strides;
  mlir::RankedTensorType block;
  bool padWithNan = false;
};

/// The element of `desc` at `coords` (in bounds) as an address.
uint64_t descriptorAddress(const TensorDescriptor &desc,
                           llvm::ArrayRef<int64_t> coords);

} // namespace tawa::interp

#endif // TAWA_INTERPRETER_MEMORY_H
