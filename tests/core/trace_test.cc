// W3C Trace Context (core/trace.h): which traceparent values are taken, and what a span
// hands its callees.
#include "core/trace.h"

#include <gtest/gtest.h>

namespace hangar {
namespace {

constexpr const char kSpec[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContext, AValidHeaderMakesAChildSpanOfTheCaller) {
  auto t = TraceContext::FromHeader(kSpec);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(t->parent_id, "00f067aa0ba902b7");
  EXPECT_EQ(t->span_id.size(), 16u);
  EXPECT_NE(t->span_id, t->parent_id);
  EXPECT_TRUE(t->sampled);
  auto unsampled =
      TraceContext::FromHeader("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.has_value());
  EXPECT_FALSE(unsampled->sampled);
}

TEST(TraceContext, MalformedHeadersAreIgnored) {
  for (const char* bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",       // no flags
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",    // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",    // zero trace
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",    // zero parent
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",    // version ff
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // 00 with more
           "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",   // no '-' before more
           "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",    // separators
           "00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01",    // not hex
       }) {
    EXPECT_FALSE(TraceContext::FromHeader(bad).has_value()) << bad;
  }
  // A later version may add fields after a '-' (§3.2.4).
  EXPECT_TRUE(
      TraceContext::FromHeader("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future")
          .has_value());
}

TEST(TraceContext, ANewTraceHasRandomIdsAndNoParent) {
  auto a = TraceContext::New(), b = TraceContext::New();
  EXPECT_EQ(a.trace_id.size(), 32u);
  EXPECT_EQ(a.span_id.size(), 16u);
  EXPECT_TRUE(a.parent_id.empty());
  EXPECT_NE(a.trace_id, b.trace_id);
}

TEST(TraceContext, ACalleeGetsTheTraceAndThisSpanAsParent) {
  auto t = *TraceContext::FromHeader(kSpec);
  std::string header = t.Header();
  EXPECT_EQ(header, "00-4bf92f3577b34da6a3ce929d0e0e4736-" + t.span_id + "-01");
  auto callee = TraceContext::FromHeader(header);
  ASSERT_TRUE(callee.has_value());
  EXPECT_EQ(callee->trace_id, t.trace_id);
  EXPECT_EQ(callee->parent_id, t.span_id);
  auto child = t.Child();
  EXPECT_EQ(child.trace_id, t.trace_id);
  EXPECT_EQ(child.parent_id, t.span_id);
  EXPECT_NE(child.span_id, t.span_id);
}

}  // namespace
}  // namespace hangar
