//===- Memory.cpp - global memory and TMA descriptors of the interpreter --===//

#include "tawa/Interpreter/Memory.h"

#include "tawa/Interpreter/Numerics.h"

#include <cstring>

using namespace mlir;

namespace tawa::interp {

std::string Buffer::elementName(int64_t index) const {
  std::string s = name + "[";
  if (shape.empty()) {
    s += std::to_string(index);
  } else {
    llvm::SmallVector<int64_t, 4> coords(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      coords[d] = index % shape[d];
      index /= shape[d];
    }
    for (size_t d = 0; d < coords.size(); ++d)
      s += (d ? ", " : "") + std::to_string(coords[d]);
  }
  return s + "]";
}

unsigned GlobalMemory::allocate(std::string name, Type elementType,
                                int64_t numElements, ArrayRef<int64_t> shape) {
  Buffer b;
  b.name = std::move(name);
  b.elementType = elementType;
  b.shape.assign(shape.begin(), shape.end());
  b.base = (buffers.size() + 1) * kBufferSpacing;
  b.bytes.assign(static_cast<size_t>(numElements) * elementBytes(elementType),
                 0);
  b.written.assign(static_cast<size_t>(numElements), 0);
  buffers.push_back(std::move(b));
  return static_cast<unsigned>(buffers.size() - 1);
}

bool GlobalMemory::locate(uint64_t address, unsigned bytes,
                          unsigned &bufferIndex, uint64_t &offset) const {
  uint64_t slot = address / kBufferSpacing;
  if (slot == 0 || slot > buffers.size())
    return false;
  bufferIndex = static_cast<unsigned>(slot - 1);
  offset = address % kBufferSpacing;
  const Buffer &b = buffers[bufferIndex];
  return bytes != 0 && offset % bytes == 0 && offset + bytes <= b.bytes.size();
}

uint64_t GlobalMemory::loadBits(unsigned bufferIndex, uint64_t offset,
                                unsigned bytes) const {
  uint64_t bits = 0;
  std::memcpy(&bits, buffers[bufferIndex].bytes.data() + offset, bytes);
  return bits;
}

void GlobalMemory::storeBits(unsigned bufferIndex, uint64_t offset,
                             unsigned bytes, uint64_t bits) {
  Buffer &b = buffers[bufferIndex];
  std::memcpy(b.bytes.data() + offset, &bits, bytes);
  unsigned elem = elementBytes(b.elementType);
  for (uint64_t e = offset / elem; e <= (offset + bytes - 1) / elem; ++e)
    b.written[e] = 1;
}

void GlobalMemory::clearWritten() {
  for (Buffer &b : buffers)
    std::fill(b.written.begin(), b.written.end(), 0);
}

int64_t GlobalMemory::countWritten() const {
  int64_t n = 0;
  for (const Buffer &b : buffers)
    for (uint8_t w : b.written)
      n += w;
  return n;
}

uint64_t descriptorAddress(const TensorDescriptor &desc,
                           ArrayRef<int64_t> coords) {
  int64_t offset = 0;
  for (size_t d = 0; d < coords.size(); ++d)
    offset += coords[d] * desc.strides[d];
  return desc.base +
         static_cast<uint64_t>(offset) * elementBytes(desc.elementType);
}

} // namespace tawa::interp
