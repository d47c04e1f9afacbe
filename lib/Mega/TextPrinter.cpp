//===- TextPrinter.cpp - print a tGraph in its text form ------------------===//

#include "tawa/Mega/TextFormat.h"

#include <sstream>

namespace tawa::mega {
namespace {

const char *roleName(TensorRole role) {
  switch (role) {
  case TensorRole::Input:
    return "input";
  case TensorRole::Activation:
    return "activation";
  case TensorRole::State:
    return "state";
  }
  return "?";
}

void printIntList(std::ostream &os, const std::vector<int> &list) {
  os << '[';
  for (size_t i = 0; i < list.size(); ++i)
    os << (i ? "," : "") << list[i];
  os << ']';
}

void printRegions(std::ostream &os, const TGraph &g,
                  const std::vector<Region> &regions) {
  os << '{';
  for (size_t i = 0; i < regions.size(); ++i) {
    const Region &r = regions[i];
    os << (i ? ", " : "") << (r.combine ? "combine:" : "");
    if (r.tensor >= 0 && r.tensor < static_cast<int>(g.tensors.size()))
      os << g.tensors[r.tensor].name;
    else
      os << "?" << r.tensor;
    os << '[';
    for (size_t d = 0; d < r.box.size(); ++d)
      os << (d ? "," : "") << r.box[d].begin << ':' << r.box[d].end;
    os << ']';
  }
  os << '}';
}

/// "0..63,70" for a sorted id list, at most `maxRuns` runs then "...(+N)":
/// the event comments stay one short line even for all-to-all events.
std::string runs(const std::vector<int> &ids, size_t maxRuns = 6) {
  if (ids.empty())
    return "-";
  std::string s;
  size_t shownRuns = 0, i = 0;
  while (i < ids.size()) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
      ++j;
    if (shownRuns == maxRuns) {
      s += ",...(+" + std::to_string(ids.size() - i) + ")";
      break;
    }
    if (shownRuns)
      s += ',';
    s += std::to_string(ids[i]);
    if (j > i)
      s += ".." + std::to_string(ids[j]);
    ++shownRuns;
    i = j + 1;
  }
  return s;
}

} // namespace

void printGraph(const TGraph &g, std::ostream &os) {
  size_t empty = 0;
  for (const Task &t : g.tasks)
    empty += t.isEmpty();
  os << "# tawa-mega tGraph: " << g.tensors.size() << " tensors, "
     << g.ops.size() << " ops, " << g.tasks.size() << " tasks (" << empty
     << " empty), " << g.events.size() << " events\n";
  os << "tgraph name=" << g.name << " form=" << formName(g.form)
     << " sms=" << g.sms;
  if (g.start >= 0)
    os << " start=" << g.start;
  if (g.end >= 0)
    os << " end=" << g.end;
  os << '\n';
  for (const Tensor &t : g.tensors) {
    os << "tensor " << t.name << " shape=[";
    for (size_t d = 0; d < t.shape.size(); ++d)
      os << (d ? "," : "") << t.shape[d];
    os << "] role=" << roleName(t.role) << '\n';
  }
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Operator &op = g.ops[i];
    os << "op " << i << " name=" << op.name << " kind=" << opKindName(op.kind)
       << " layer=" << op.layer
       << " launch=" << (op.launch == LaunchMode::Jit ? "jit" : "aot")
       << " attrs={";
    for (size_t a = 0; a < op.attrs.size(); ++a)
      os << (a ? ", " : "") << op.attrs[a].first << '=' << op.attrs[a].second;
    os << "}\n";
  }
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const Task &t = g.tasks[i];
    os << "task " << i << " op=";
    if (t.isEmpty())
      os << "empty";
    else
      os << t.op << " tile=" << t.tile;
    os << " reads=";
    printRegions(os, g, t.reads);
    os << " writes=";
    printRegions(os, g, t.writes);
    os << " wait=";
    printIntList(os, t.waits);
    os << " trigger=";
    printIntList(os, t.triggers);
    os << '\n';
  }
  std::vector<std::vector<int>> in = eventInTasks(g), out = eventOutTasks(g);
  for (size_t i = 0; i < g.events.size(); ++i) {
    const Event &e = g.events[i];
    os << "event " << i << " count=" << e.count;
    if (g.form == Form::Linear) {
      os << " launch=[";
      if (e.first >= 0)
        os << e.first << ',' << e.last;
      os << ']';
    }
    os << "  # in: " << runs(in[i]) << " | out: " << runs(out[i]) << '\n';
  }
}

std::string printGraph(const TGraph &g) {
  std::ostringstream os;
  printGraph(g, os);
  return os.str();
}

} // namespace tawa::mega
