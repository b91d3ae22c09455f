// The database statements the hot paths cost (issue 17: "queries per request counted in a
// test"): HEAD /resolve with a token and model info, on a warm hub. Each bound is the
// count measured when the test was written; a change that adds a query per request fails
// here with the new number.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "db/sql/sql.h"
#include "testing/test_hub.h"

namespace hangar::api {
namespace {

using hangar::testing::Answer;
using hangar::testing::TestHub;

class QueriesPerRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.CreateRepo("alice", "alice", "m");
    hub_.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
    hub_.Commit("alice", "models/alice/m", {{"config.json", "{}"}, {"README.md", "# m\n"}});
    hub_.Commit("alice", "models/alice/secret", {{"config.json", "{}"}});
  }

  struct Cost {
    uint64_t cold;  // the first request (caches empty for this repo and token)
    uint64_t warm;  // the median of the five after it
  };

  // The statements run on this thread (TestHub dispatches on it) by `send`, each run of
  // which must answer `status`.
  template <typename F>
  Cost Statements(int status, F send) {
    Cost cost;
    uint64_t before = db::StatementsRunOnThisThread();
    EXPECT_EQ(send().status, status);
    cost.cold = db::StatementsRunOnThisThread() - before;
    std::vector<uint64_t> counts;
    for (int i = 0; i < 5; ++i) {
      before = db::StatementsRunOnThisThread();
      EXPECT_EQ(send().status, status);
      counts.push_back(db::StatementsRunOnThisThread() - before);
    }
    std::sort(counts.begin(), counts.end());
    cost.warm = counts[2];
    std::printf("%-44s cold %2llu  warm %2llu statements\n", label_.c_str(),
                static_cast<unsigned long long>(cost.cold),
                static_cast<unsigned long long>(cost.warm));
    return cost;
  }

  TestHub hub_;
  std::string label_;
};

// The counter is live: a request that must write costs statements.
TEST_F(QueriesPerRequestTest, TheCounterCountsWhatARequestRuns) {
  uint64_t before = db::StatementsRunOnThisThread();
  hub_.CreateRepo("alice", "alice", "another");
  EXPECT_GT(db::StatementsRunOnThisThread() - before, 0u);
}

TEST_F(QueriesPerRequestTest, HeadResolve) {
  label_ = "HEAD /resolve, public, read token";
  Cost pub =
      Statements(200, [&] { return hub_.Head("/alice/m/resolve/main/config.json", "alice:read"); });
  label_ = "HEAD /resolve, private, read token";
  Cost priv = Statements(
      200, [&] { return hub_.Head("/alice/secret/resolve/main/config.json", "alice:read"); });
  label_ = "HEAD /resolve, public, anonymous";
  Cost anon = Statements(200, [&] { return hub_.Head("/alice/m/resolve/main/config.json"); });
  // cold: the token, its user and their orgs, the repo row; then the private repo's row
  EXPECT_LE(pub.cold, 5u);
  EXPECT_LE(pub.warm, 0u);
  EXPECT_LE(priv.cold, 2u);
  EXPECT_LE(priv.warm, 0u);
  EXPECT_LE(anon.warm, 0u);
}

TEST_F(QueriesPerRequestTest, ModelInfo) {
  label_ = "model info, read token";
  Cost pub = Statements(200, [&] { return hub_.Get("/api/models/alice/m", "alice:read"); });
  label_ = "model info with blobs, read token";
  Cost blobs =
      Statements(200, [&] { return hub_.Get("/api/models/alice/m?blobs=true", "alice:read"); });
  label_ = "model info, private, read token";
  Cost priv = Statements(200, [&] { return hub_.Get("/api/models/alice/secret", "alice:read"); });
  EXPECT_LE(pub.cold, 5u);  // as for HEAD /resolve
  EXPECT_LE(pub.warm, 0u);
  EXPECT_LE(blobs.warm, 0u);
  EXPECT_LE(priv.cold, 2u);
  EXPECT_LE(priv.warm, 0u);
}

}  // namespace
}  // namespace hangar::api
