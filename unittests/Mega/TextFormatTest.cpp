//===- TextFormatTest.cpp - print, parse, verify --------------------------===//

#include "tawa/Mega/TextFormat.h"
#include "TestInputs.h"
#include "tawa/Mega/DecodeGraph.h"
#include "tawa/Mega/Passes.h"
#include "tawa/Mega/Verifier.h"

#include <gtest/gtest.h>

using namespace tawa::mega;

namespace {

TGraph tinyGraph() {
  ModelConfig c = loadInputConfig("qwen3-tiny.json");
  PlanOptions o;
  o.batch = 3;
  o.maxSeq = 700;
  return buildDecodeGraph(c, o);
}

TEST(TextFormat, PrintParsePrintIsAFixedPointAtEveryStage) {
  TGraph g = tinyGraph();
  std::string error;
  std::vector<const PassInfo *> pipeline = planPipeline();
  for (size_t i = 0; i <= pipeline.size(); ++i) {
    if (i > 0) {
      ASSERT_TRUE(pipeline[i - 1]->run(g, error)) << error;
    }
    std::string text = printGraph(g);
    TGraph parsed;
    ASSERT_TRUE(parseGraph(text, "stage", parsed, error)) << error;
    std::vector<std::string> errors = verifyGraph(parsed);
    ASSERT_TRUE(errors.empty()) << errors[0];
    EXPECT_EQ(printGraph(parsed), text) << "stage " << i;
    EXPECT_EQ(parsed.tasks.size(), g.tasks.size());
    EXPECT_EQ(parsed.form, g.form);
    for (size_t t = 0; t < g.tasks.size(); ++t) {
      EXPECT_EQ(parsed.tasks[t].reads, g.tasks[t].reads);
      EXPECT_EQ(parsed.tasks[t].waits, g.tasks[t].waits);
    }
  }
}

TEST(TextFormat, ParseErrorsNameTheLine) {
  struct Case {
    const char *text;
    const char *message;
  };
  const Case cases[] = {
      {"tgraph form=tiles\nop 0 name=a kind=frob\n",
       "t: line 2: unknown op kind 'frob'"},
      {"tgraph form=tiles\n\n\ntask 0 op=0 tile=x\n",
       "t: line 4: expected a tile index, got 'x'"},
      {"tgraph form=tiles\ntensor a shape=[2]\ntask 0 op=0 reads={a[0:1}\n",
       "t: line 3: expected ']', got '}'"},
      {"tgraph form=wide\n", "t: line 1: unknown form 'wide'"},
      {"tgraph form=tiles\ntgraph form=tiles\n", "t: line 2: a second"},
      {"tgraph form=tiles\nevent 0 count=1 count=2\n",
       "t: line 2: 'count' given twice"},
      {"tgraph form=tiles\ntask 0 op=empty tile=1\n",
       "t: line 2: an empty task has no tile"},
      {"tgraph form=tiles\nevent 0 count=1 launch=[1,2,3]\n",
       "t: line 2: launch takes [FIRST,LAST] or [], got 3 ids"},
      {"tgraph form=tiles\nop 0 name=a kind=generic attrs={x=y}\n",
       "t: line 2: expected a number for x, got 'y'"},
      {"tgraph form=tiles sms=99999999999\n", "t: line 1: sms out of range"},
      {"", "t: no 'tgraph' line"},
  };
  for (const Case &c : cases) {
    TGraph g;
    std::string error;
    EXPECT_FALSE(parseGraph(c.text, "t", g, error)) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "got: " << error << "\nwant: " << c.message;
  }
}

TEST(Verifier, MessagesOfAGraphBuiltInMemoryHaveNoLine) {
  TGraph g;
  g.form = Form::Events;
  g.ops.push_back(Operator{"p", OpKind::Generic, -1, LaunchMode::Aot, {}, 0});
  Task a;
  a.op = 0;
  a.tile = 0;
  a.triggers = {0};
  Task b;
  b.op = 0;
  b.tile = 1;
  b.waits = {0};
  g.tasks = {a, b};
  g.events.push_back(Event{2, -1, -1, 0});
  std::vector<std::string> errors = verifyGraph(g);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "event 0: trigger count 2 but 1 tasks trigger it (0)");
  g.events[0].count = 1;
  EXPECT_TRUE(verifyGraph(g).empty());
  g.form = Form::Normalized;
  errors = verifyGraph(g);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0], "tgraph: a normalized graph has start= and end= events");
}

TEST(Verifier, CatchesABrokenLinearization) {
  TGraph g = tinyGraph();
  std::string error;
  for (const PassInfo *pass : planPipeline())
    ASSERT_TRUE(pass->run(g, error)) << error;
  ASSERT_TRUE(verifyGraph(g).empty());
  // Shift one event's range by one task.
  for (Event &e : g.events)
    if (e.first > 0 && e.last > e.first) {
      ++e.first;
      break;
    }
  std::vector<std::string> errors = verifyGraph(g);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("is not the contiguous range"), std::string::npos)
      << errors[0];
}

} // namespace
