//===- TGraph.cpp - the SM-level task graph of a mega-kernel --------------===//

#include "tawa/Mega/TGraph.h"

#include <algorithm>

namespace tawa::mega {

bool overlaps(const Region &a, const Region &b) {
  if (a.tensor != b.tensor || a.box.size() != b.box.size())
    return false;
  for (size_t d = 0; d < a.box.size(); ++d)
    if (a.box[d].end <= b.box[d].begin || b.box[d].end <= a.box[d].begin)
      return false;
  return true;
}

namespace {
struct KindName {
  OpKind kind;
  const char *name;
};
const KindName kKindNames[] = {
    {OpKind::Embedding, "embedding"},
    {OpKind::RmsNormLinear, "rmsnorm_linear"},
    {OpKind::LinearResidual, "linear_residual"},
    {OpKind::DecodeAttention, "decode_attention"},
    {OpKind::AttentionMerge, "attention_merge"},
    {OpKind::Argmax, "argmax"},
    {OpKind::Generic, "generic"},
};
} // namespace

const char *opKindName(OpKind kind) {
  for (const KindName &k : kKindNames)
    if (k.kind == kind)
      return k.name;
  return "?";
}

bool parseOpKind(const std::string &name, OpKind &kind) {
  for (const KindName &k : kKindNames)
    if (name == k.name) {
      kind = k.kind;
      return true;
    }
  return false;
}

const char *formName(Form form) {
  switch (form) {
  case Form::Tiles:
    return "tiles";
  case Form::Events:
    return "events";
  case Form::Normalized:
    return "normalized";
  case Form::Linear:
    return "linear";
  }
  return "?";
}

bool parseForm(const std::string &name, Form &form) {
  for (Form f : {Form::Tiles, Form::Events, Form::Normalized, Form::Linear})
    if (name == formName(f)) {
      form = f;
      return true;
    }
  return false;
}

int TGraph::findTensor(const std::string &tensorName) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == tensorName)
      return static_cast<int>(i);
  return -1;
}

std::string TGraph::describeTask(int task) const {
  std::string s = "task " + std::to_string(task);
  if (task < 0 || task >= static_cast<int>(tasks.size()))
    return s;
  const Task &t = tasks[task];
  if (t.isEmpty())
    return s + " (empty)";
  if (t.op < 0 || t.op >= static_cast<int>(ops.size()))
    return s;
  return s + " (" + ops[t.op].name + " tile " + std::to_string(t.tile) + ")";
}

std::vector<std::vector<int>> eventInTasks(const TGraph &g) {
  std::vector<std::vector<int>> in(g.events.size());
  for (size_t t = 0; t < g.tasks.size(); ++t)
    for (int e : g.tasks[t].triggers)
      if (e >= 0 && e < static_cast<int>(in.size()))
        in[e].push_back(static_cast<int>(t));
  return in;
}

std::vector<std::vector<int>> eventOutTasks(const TGraph &g) {
  std::vector<std::vector<int>> out(g.events.size());
  for (size_t t = 0; t < g.tasks.size(); ++t)
    for (int e : g.tasks[t].waits)
      if (e >= 0 && e < static_cast<int>(out.size()))
        out[e].push_back(static_cast<int>(t));
  return out;
}

void canonicalizeTask(Task &task) {
  for (std::vector<int> *list : {&task.waits, &task.triggers}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
}

void eraseEvents(TGraph &g, const std::vector<bool> &dead) {
  std::vector<int> renumber(g.events.size(), -1);
  std::vector<Event> kept;
  kept.reserve(g.events.size());
  for (size_t e = 0; e < g.events.size(); ++e) {
    if (e < dead.size() && dead[e])
      continue;
    renumber[e] = static_cast<int>(kept.size());
    kept.push_back(g.events[e]);
  }
  g.events = std::move(kept);
  auto remap = [&](std::vector<int> &list) {
    std::vector<int> out;
    out.reserve(list.size());
    for (int e : list)
      if (e >= 0 && e < static_cast<int>(renumber.size()) && renumber[e] >= 0)
        out.push_back(renumber[e]);
    list = std::move(out);
  };
  for (Task &t : g.tasks) {
    remap(t.waits);
    remap(t.triggers);
    canonicalizeTask(t);
  }
  auto remapOne = [&](int e) {
    return e >= 0 && e < static_cast<int>(renumber.size()) ? renumber[e] : -1;
  };
  g.start = remapOne(g.start);
  g.end = remapOne(g.end);
}

void recountEvents(TGraph &g) {
  for (Event &e : g.events)
    e.count = 0;
  for (const Task &t : g.tasks)
    for (int e : t.triggers)
      if (e >= 0 && e < static_cast<int>(g.events.size()))
        ++g.events[e].count;
}

} // namespace tawa::mega
