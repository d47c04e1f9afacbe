// A CPU check of the linear task's stage walk (tasks/linear.cuh: PassPlan,
// StageWalk, LinearAccMode), compiled by nvcc for the host and run without a
// GPU: for tile shapes and K across the decode plans' range, every pass's
// stages are taken exactly once over the warps, a warp that owns blocks
// takes only its blocks (b % warps == w), whole and each once, a warp that
// splits them only its stages (i % warps == w), the walk's (block, place)
// matches its stage index, and the refill stage `ahead` (kLinearSlots steps
// on) is what the walk reaches.
#include "tawa/device/mega/tasks/linear.cuh"

#include <cstdio>
#include <set>
#include <vector>

using namespace tawa::device::mega;

namespace {

int problems = 0;
void fail(const char *what, int rows, int k, int vcols, int warp, int i) {
  if (problems++ < 10)
    std::printf("FAIL %s: rows %d, k %d, vcols %d, warp %d, stage %d\n", what,
                rows, k, vcols, warp, i);
}

} // namespace

int main() {
  long visits = 0;
  for (int rows : {1, 4, 8, 9, 16, 32, 64})
    for (int k : {64, 256, 1000, 1024, 2048, 3072, 4096, 12288})
      for (int vcols = 16; vcols <= 1200; vcols += 16) {
        const int kc = tawa::mega::linearChunk(rows, vcols, k);
        if (kc == 0)
          continue;
        const int ring = tawa::mega::linearRingBytes(rows);
        const int slotBytes = ring / (kTaskWarps * kLinearSlots) / 128 * 128;
        const auto pieces = tawa::mega::weightPieces(k);
        for (int j0 = 0; j0 < pieces.count;) {
          const PassPlan pp(pieces, j0, kc, k, vcols, slotBytes);
          j0 = pp.j1;
          std::vector<int> seen(pp.count, 0);
          for (int w = 0; w < kTaskWarps; ++w) {
            StageWalk cur = pp.first(w), ahead = cur;
            for (int m = 0; m < kLinearSlots; ++m)
              pp.step(ahead);
            std::set<int> blocksLeft;
            int held = -1;
            for (; cur.i < pp.count; pp.step(cur), pp.step(ahead)) {
              ++visits;
              ++seen[cur.i];
              if (cur.s < 0 || cur.s >= pp.stagesPerBlock ||
                  cur.i != cur.block * pp.stagesPerBlock + cur.s)
                fail("walk position", rows, k, vcols, w, cur.i);
              if (pp.owned ? cur.block % kTaskWarps != w
                           : cur.i % kTaskWarps != w)
                fail("stage on the wrong warp", rows, k, vcols, w, cur.i);
              if (cur.block != held) {
                if (pp.owned && blocksLeft.count(cur.block))
                  fail("owned block taken twice", rows, k, vcols, w, cur.i);
                blocksLeft.insert(cur.block);
                held = cur.block;
              }
              StageWalk two = cur;
              for (int m = 0; m < kLinearSlots; ++m)
                pp.step(two);
              if (two.i != ahead.i)
                fail("refill stage", rows, k, vcols, w, cur.i);
            }
          }
          for (int i = 0; i < pp.count; ++i)
            if (seen[i] != 1)
              fail("stage not taken exactly once", rows, k, vcols, -1, i);
        }
      }
  std::printf("%ld stage visits, %d problems\n", visits, problems);
  if (problems == 0)
    std::printf("PASS linear_stage_walk\n");
  return problems ? 1 : 0;
}
