//===- Svg.cpp - Steady-state timeline as SVG -----------------------------===//
//
// One row per functional-unit instance and one or more rows per warp group
// (several ops of a group can be in flight at once: async TC/TMA). The x axis
// is the II cycles of the steady state; an op is labelled with the iteration
// it belongs to relative to the newest one started ("S i-1" = previous).
//
//===----------------------------------------------------------------------===//

#include "tawa/Scheduler/Scheduler.h"

#include <algorithm>
#include <sstream>

using namespace tawa::sched;

namespace {

const char *kPalette[] = {"#8dd3c7", "#fdb462", "#80b1d3", "#fb8072",
                          "#b3de69", "#bebada", "#fccde5", "#ffffb3"};

std::string escape(const std::string &s) {
  std::string r;
  for (char c : s) {
    if (c == '<')
      r += "&lt;";
    else if (c == '>')
      r += "&gt;";
    else if (c == '&')
      r += "&amp;";
    else
      r += c;
  }
  return r;
}

/// Rows of the steady state (cycles mod II) that op v occupies, given the
/// cycles of v that count (all of them for warp lanes, the RRT for units).
struct Lane {
  std::string title;
  std::vector<int> cell; // op index per row, -1 when free
};

/// Places op v on the first lane of `lanes` free in all `rows`; adds a lane
/// (titled `title`) when `grow` allows. Returns false when it could not.
bool place(std::vector<Lane> &lanes, size_t firstLane, int v,
           const std::vector<int> &rows, int ii, bool grow,
           const std::string &title) {
  for (size_t l = firstLane; l < lanes.size(); ++l) {
    bool ok = std::all_of(rows.begin(), rows.end(),
                          [&](int r) { return lanes[l].cell[r] < 0; });
    if (ok) {
      for (int r : rows)
        lanes[l].cell[r] = v;
      return true;
    }
  }
  if (!grow)
    return false;
  lanes.push_back({title, std::vector<int>(ii, -1)});
  for (int r : rows)
    lanes.back().cell[r] = v;
  return true;
}

} // namespace

std::string tawa::sched::renderSvg(const Graph &g, const ModuloSchedule &s,
                                   const std::vector<int> &warp) {
  const int ii = std::max(1, s.ii);
  const size_t n = g.ops.size();
  bool haveWarps = warp.size() == n;
  auto colorOf = [&](int v) {
    int w = haveWarps ? warp[v] : 0;
    return kPalette[w % 8];
  };

  std::vector<Lane> lanes;
  std::vector<std::string> sectionTitles;
  std::vector<size_t> sectionStart;
  // Units: one lane per instance.
  for (size_t f = 0; f < g.units.size(); ++f) {
    size_t first = lanes.size();
    for (int k = 0; k < g.units[f].capacity; ++k)
      lanes.push_back({g.units[f].name +
                           (g.units[f].capacity > 1 ? "#" + std::to_string(k)
                                                    : std::string()),
                       std::vector<int>(ii, -1)});
    for (size_t v = 0; v < n; ++v) {
      std::vector<int> rows;
      int maxCount = 0;
      for (int c = 0; c < g.ops[v].cycles; ++c) {
        int use = g.ops[v].usage(static_cast<int>(f), c);
        if (use)
          rows.push_back((s.start[v] + c) % ii);
        maxCount = std::max(maxCount, use);
      }
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      for (int k = 0; k < maxCount && !rows.empty(); ++k)
        if (!place(lanes, first, static_cast<int>(v), rows, ii, false, ""))
          for (int r : rows) // Lanes interleave: place cycle by cycle.
            place(lanes, first, static_cast<int>(v), {r}, ii, false, "");
    }
  }
  size_t unitLanes = lanes.size();
  // Warp groups.
  if (haveWarps) {
    for (int w = 0; w < g.numWarps; ++w) {
      size_t first = lanes.size();
      std::string title = "WG" + std::to_string(w) +
                          (w == 0 && g.hasVarLatency() ? " (var)" : "");
      for (size_t v = 0; v < n; ++v) {
        if (warp[v] != w)
          continue;
        std::vector<int> rows;
        for (int c = 0; c < std::min(g.ops[v].cycles, ii); ++c)
          rows.push_back((s.start[v] + c) % ii);
        place(lanes, first, static_cast<int>(v), rows, ii, true, title);
      }
      if (lanes.size() == first)
        lanes.push_back({title, std::vector<int>(ii, -1)});
      for (size_t l = first + 1; l < lanes.size(); ++l)
        lanes[l].title = "";
    }
  }

  const int cell = std::max(28, 640 / ii), laneH = 26, left = 110, top = 50;
  const int width = left + ii * cell + 20;
  const int height = top + static_cast<int>(lanes.size()) * laneH +
                     (haveWarps ? 14 : 0) + 40;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
    << "\" height=\"" << height << "\" font-family=\"monospace\" "
    << "font-size=\"11\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"8\" y=\"18\" font-size=\"13\">Steady state: II=" << s.ii
    << " L=" << s.length << " stages=" << s.stages()
    << (g.machine.empty() ? "" : " machine=" + g.machine)
    << "  (label: op, iteration relative to the newest)</text>\n";
  // Cycle ticks.
  for (int r = 0; r <= ii; ++r) {
    int x = left + r * cell;
    o << "<line x1=\"" << x << "\" y1=\"" << top - 8 << "\" x2=\"" << x
      << "\" y2=\"" << height - 30 << "\" stroke=\"#ddd\"/>\n";
    if (r < ii)
      o << "<text x=\"" << x + 3 << "\" y=\"" << top - 12 << "\">" << r
        << "</text>\n";
  }
  for (size_t l = 0; l < lanes.size(); ++l) {
    int y = top + static_cast<int>(l) * laneH +
            (l >= unitLanes && haveWarps ? 14 : 0);
    if (l == unitLanes && haveWarps)
      o << "<line x1=\"0\" y1=\"" << y - 7 << "\" x2=\"" << width
        << "\" y2=\"" << y - 7 << "\" stroke=\"#444\"/>\n";
    o << "<text x=\"6\" y=\"" << y + 16 << "\">" << escape(lanes[l].title)
      << "</text>\n";
    // Merge consecutive cells of the same op into one box.
    for (int r = 0; r < ii;) {
      int v = lanes[l].cell[r];
      if (v < 0) {
        ++r;
        continue;
      }
      // A new instance of v begins at its start row: split the box there so
      // back-to-back instances (an op as long as II) stay distinguishable.
      int e = r + 1;
      while (e < ii && lanes[l].cell[e] == v &&
             ((e - s.start[v]) % ii + ii) % ii != 0)
        ++e;
      int stage = s.start[v] / ii;
      // A box that started before this row (wrapped) keeps its stage of the
      // row it is drawn at: cycle start+c lies in stage (start+c)/ii.
      int c0 = ((r - s.start[v]) % ii + ii) % ii;
      stage = (s.start[v] + c0) / ii;
      std::string label = g.ops[v].name +
                          (stage ? " i-" + std::to_string(stage) : " i");
      int x = left + r * cell;
      o << "<rect x=\"" << x + 1 << "\" y=\"" << y + 2 << "\" width=\""
        << (e - r) * cell - 2 << "\" height=\"" << laneH - 4
        << "\" rx=\"3\" fill=\"" << colorOf(v) << "\" stroke=\"#333\"/>\n";
      o << "<text x=\"" << x + 4 << "\" y=\"" << y + 17 << "\">"
        << escape(label) << "</text>\n";
      r = e;
    }
  }
  if (haveWarps) {
    int y = height - 12, x = 8;
    for (int w = 0; w < g.numWarps; ++w) {
      o << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"12\" "
        << "height=\"12\" fill=\"" << kPalette[w % 8] << "\"/>\n";
      o << "<text x=\"" << x + 16 << "\" y=\"" << y << "\">WG" << w
        << "</text>\n";
      x += 70;
    }
  }
  o << "</svg>\n";
  return o.str();
}
