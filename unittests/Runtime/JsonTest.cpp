#include "tawa/runtime/Json.h"
#include "tawa/runtime/Error.h"

#include <gtest/gtest.h>

using namespace tawa::runtime;

namespace {

std::string errorOf(const std::string &text) {
  try {
    parseJson(text, "t.json");
  } catch (const Error &e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Json, ParsesNestedDocument) {
  JsonValue v = parseJson(
      R"({"a": [1, -2, 3.5, 1e3], "b": {"c": "x\ny\u00e9\ud83d\ude00"},
          "t": true, "f": false, "n": null})");
  ASSERT_TRUE(v.isObject());
  const JsonValue *a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->asArray().size(), 4u);
  EXPECT_TRUE(a->asArray()[0].isInteger());
  EXPECT_EQ(a->asArray()[1].asInt(), -2);
  EXPECT_FALSE(a->asArray()[2].isInteger());
  EXPECT_DOUBLE_EQ(a->asArray()[2].asDouble(), 3.5);
  EXPECT_FALSE(a->asArray()[3].isInteger()); // exponent: not an integer literal
  EXPECT_EQ(v.find("b")->find("c")->asString(), "x\ny\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(v.find("t")->asBool());
  EXPECT_FALSE(v.find("f")->asBool());
  EXPECT_TRUE(v.find("n")->isNull());
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(Json, KeepsMemberOrder) {
  JsonValue v = parseJson(R"({"z": 1, "a": 2, "m": 3})");
  ASSERT_EQ(v.asObject().size(), 3u);
  EXPECT_EQ(v.asObject()[0].first, "z");
  EXPECT_EQ(v.asObject()[2].first, "m");
}

TEST(Json, ReportsLineAndColumn) {
  EXPECT_EQ(errorOf("{\n  \"a\": 1,\n  \"b\" 2\n}"),
            "t.json:3:7: expected ':' but found '2'");
}

TEST(Json, RejectsNonStrictInput) {
  EXPECT_NE(errorOf("[1, 2,]").find("trailing comma in array"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"a": 1,})").find("trailing comma in object"),
            std::string::npos);
  EXPECT_NE(errorOf("{\"a\": 1 // c\n}").find("comments are not allowed"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"a": 1, "a": 2})").find("duplicate key \"a\""),
            std::string::npos);
  EXPECT_NE(errorOf(R"(["abc)").find("unterminated string"), std::string::npos);
  EXPECT_NE(errorOf("[01]").find("leading zeros"), std::string::npos);
  EXPECT_NE(errorOf("[1.]").find("digit after the decimal point"),
            std::string::npos);
  EXPECT_NE(errorOf("[tru]").find("invalid literal"), std::string::npos);
  EXPECT_NE(errorOf("{} {}").find("trailing characters"), std::string::npos);
  EXPECT_NE(errorOf("").find("end of the input"), std::string::npos);
  EXPECT_NE(errorOf("[\"\\x\"]").find("invalid escape"), std::string::npos);
  EXPECT_NE(errorOf("[\"\\ud800\"]").find("surrogate"), std::string::npos);
  EXPECT_NE(errorOf("[1e999]").find("out of range"), std::string::npos);
  EXPECT_NE(errorOf(std::string(100, '[')).find("nesting deeper"),
            std::string::npos);
}

TEST(Json, HugeIntegersAreNotIntegers) {
  JsonValue v = parseJson("[123456789012345678901234567890]");
  EXPECT_TRUE(v.asArray()[0].isNumber());
  EXPECT_FALSE(v.asArray()[0].isInteger());
}

} // namespace
