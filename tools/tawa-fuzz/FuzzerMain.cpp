//===- FuzzerMain.cpp - tawa's libFuzzer entry point ----------------------===//
//
// Built only with TAWA_ENABLE_FUZZER (clang, -fsanitize=fuzzer,address):
//   tawa-fuzz CORPUS_DIR -dict=tools/tawa-fuzz/tawa.dict -max_total_time=90
//
// Besides libFuzzer's byte mutations, a mutator that knows MLIR text: byte
// edits rarely survive the parser and the verifier, but changing one number
// everywhere it occurs (a tile size, a loop bound, an axis) or swapping an
// operation for a sibling keeps a kernel well-formed more often, and so
// reaches the passes and the interpreter with shapes and structures the
// samples do not have.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "tawa/Interpreter/Scheduler.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// MLIR's libraries are not instrumented, tawa's code is: an llvm
// BumpPtrAllocator instantiated in tawa's code poisons a new slab (Allocator.h
// under ASan) that the library's own, uninstrumented instance then hands out
// without unpoisoning it, and ASan reports a use-after-poison inside MLIR.
// Manual poisoning is that annotation only; ASan's own redzones still apply.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

/// [start, end) of every run of decimal digits not inside an identifier.
std::vector<std::pair<size_t, size_t>> numbers(const std::string &text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
      ++j;
    bool inName =
        i > 0 &&
        (std::isalpha(static_cast<unsigned char>(text[i - 1])) ||
         text[i - 1] == '_' || text[i - 1] == '%' || text[i - 1] == '#');
    if (!inName && j - i <= 9)
      spans.push_back({i, j});
    i = j;
  }
  return spans;
}

/// Replaces every occurrence of one number (as a whole token) by another.
bool replaceNumber(std::string &text, tawa::interp::SplitMix64 &rng) {
  auto spans = numbers(text);
  if (spans.empty())
    return false;
  auto [s, e] = spans[rng.next() % spans.size()];
  std::string from = text.substr(s, e - s);
  long long v = std::stoll(from);
  const long long choices[] = {v / 2, v * 2, v + 1, v - 1, 0,  1,  2,
                               16,    32,    48,    64,    96, 192};
  std::string to = std::to_string(choices[rng.next() % 13]);
  if (to == from)
    return false;
  std::string out;
  size_t last = 0;
  for (auto [a, b] : spans)
    if (text.compare(a, b - a, from) == 0 && b - a == from.size()) {
      out.append(text, last, a - last);
      out += to;
      last = b;
    }
  out.append(text, last, std::string::npos);
  text = std::move(out);
  return true;
}

/// Swaps one operation name for a sibling with the same operands.
bool replaceOperation(std::string &text, tawa::interp::SplitMix64 &rng) {
  static const std::vector<std::vector<const char *>> families = {
      {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maxnumf",
       "arith.minimumf"},
      {"arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi",
       "arith.minsi", "arith.maxsi", "arith.ceildivsi"},
      {"math.exp2", "math.exp", "math.sqrt", "math.absf", "arith.negf"},
      {"arith.cmpi slt", "arith.cmpi sge", "arith.cmpi eq", "arith.cmpi ult"},
      {"tawa.aref.get", "tawa.aref.consumed"},
      {"pendings = 0", "pendings = 1", "pendings = 2"},
      {"array<i32: 1, 0>", "array<i32: 0, 1>"}};
  const auto &family = families[rng.next() % families.size()];
  std::vector<size_t> at;
  size_t which = 0;
  for (size_t f = 0; f < family.size(); ++f)
    for (size_t p = text.find(family[f]); p != std::string::npos;
         p = text.find(family[f], p + 1))
      at.push_back(p * 16 + f);
  if (at.empty())
    return false;
  which = at[rng.next() % at.size()];
  size_t pos = which / 16, f = which % 16;
  const char *to = family[rng.next() % family.size()];
  text.replace(pos, std::strlen(family[f]), to);
  return true;
}

/// Deletes, duplicates or swaps whole lines.
bool editLines(std::string &text, tawa::interp::SplitMix64 &rng) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos;
       start = nl + 1)
    lines.push_back(text.substr(start, nl - start + 1));
  lines.push_back(text.substr(start));
  if (lines.size() < 3)
    return false;
  size_t i = rng.next() % (lines.size() - 1);
  switch (rng.next() % 3) {
  case 0:
    lines.erase(lines.begin() + i);
    break;
  case 1:
    lines.insert(lines.begin() + i, lines[i]);
    break;
  default:
    std::swap(lines[i], lines[i + 1]);
  }
  text.clear();
  for (const std::string &l : lines)
    text += l;
  return true;
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  tawa::interp::SplitMix64 rng(seed);
  unsigned kind = rng.next() % 4;
  if (kind == 0)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  bool changed = kind == 1   ? replaceNumber(text, rng)
                 : kind == 2 ? replaceOperation(text, rng)
                             : editLines(text, rng);
  if (!changed || text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tawa::fuzz::runOneInput(
      llvm::StringRef(reinterpret_cast<const char *>(data), size));
  return 0;
}
