// web/pages (home_pages.cc, account_pages.cc, repo_pages.cc, history_pages.cc) in process
// (TestHub): each page family renders for its reader, hides private repos, escapes what
// users wrote, and answers bad input with a page of its own, not a 500.

#include <gtest/gtest.h>

#include "testing/test_hub.h"

namespace hangar::web {
namespace {

using hangar::testing::Answer;
using hangar::testing::TestHub;

class PagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_.CreateRepo("alice", "alice", "m");
    commit_ = hub_.Commit("alice", "models/alice/m",
                          {{"README.md", "# Title <script>alert(1)</script>\n"},
                           {"dir/a.txt", "line one\nline two\n"}});
    hub_.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
    hub_.Commit("alice", "models/alice/secret", {{"s.txt", "private words"}});
  }
  static bool Has(const Answer& a, const std::string& s) {
    return a.body.find(s) != std::string::npos;
  }
  TestHub hub_;
  std::string commit_;
};

// home_pages.cc: the front page, listings and profiles.
TEST_F(PagesTest, HomeListingAndProfile) {
  Answer home = hub_.Get("/");
  EXPECT_EQ(home.status, 200);
  EXPECT_NE(home.Header("Content-Type").find("text/html"), std::string::npos);
  Answer models = hub_.Get("/models");
  EXPECT_EQ(models.status, 200);
  EXPECT_TRUE(Has(models, "alice/m"));
  EXPECT_FALSE(Has(models, "alice/secret"));  // anonymous
  EXPECT_TRUE(Has(hub_.Get("/models", "alice:session"), "alice/secret"));
  Answer profile = hub_.Get("/alice");
  EXPECT_EQ(profile.status, 200);
  EXPECT_TRUE(Has(profile, "alice/m"));
  EXPECT_EQ(hub_.Get("/no-such-user").status, 404);
}

// repo_pages.cc: the repo page, tree and blob; the card is sanitized.
TEST_F(PagesTest, RepoTreeAndBlob) {
  Answer repo = hub_.Get("/alice/m");
  EXPECT_EQ(repo.status, 200);
  EXPECT_TRUE(Has(repo, "Title"));
  EXPECT_FALSE(Has(repo, "<script>alert(1)</script>"));
  Answer tree = hub_.Get("/alice/m/tree/main/dir");
  EXPECT_EQ(tree.status, 200);
  EXPECT_TRUE(Has(tree, "a.txt"));
  Answer blob = hub_.Get("/alice/m/blob/main/dir/a.txt");
  EXPECT_EQ(blob.status, 200);
  EXPECT_TRUE(Has(blob, "line two"));
  EXPECT_EQ(hub_.Get("/alice/m/blob/main/none.txt").status, 404);
  EXPECT_EQ(hub_.Get("/alice/m/tree/no-such-rev").status, 404);
}

TEST_F(PagesTest, PrivateRepoPagesAreHidden) {
  for (const char* path :
       {"/alice/secret", "/alice/secret/blob/main/s.txt", "/alice/secret/commits/main"}) {
    Answer anon = hub_.Get(path);
    EXPECT_EQ(anon.status, 404) << path;
    EXPECT_FALSE(Has(anon, "private words")) << path;
    EXPECT_EQ(hub_.Get(path, "bob:session").status, 404) << path;
    EXPECT_EQ(hub_.Get(path, "alice:session").status, 200) << path;
  }
}

// history_pages.cc: history, one commit, refs.
TEST_F(PagesTest, HistoryCommitAndRefs) {
  Answer log = hub_.Get("/alice/m/commits/main");
  EXPECT_EQ(log.status, 200);
  EXPECT_TRUE(Has(log, commit_.substr(0, 7)));
  Answer commit = hub_.Get("/alice/m/commit/" + commit_);
  EXPECT_EQ(commit.status, 200);
  EXPECT_TRUE(Has(commit, "dir/a.txt"));
  EXPECT_EQ(hub_.Get("/alice/m/commit/" + std::string(40, '0')).status, 404);
  Answer refs = hub_.Get("/alice/m/refs");
  EXPECT_EQ(refs.status, 200);
  EXPECT_TRUE(Has(refs, "main"));
}

// account_pages.cc: sign-in, tokens, organizations, new repo.
TEST_F(PagesTest, LoginPageAndWrongPassword) {
  EXPECT_EQ(hub_.Get("/login").status, 200);
  const std::string csrf = "abcdefghijklmnopqrstuvwxyz012345";
  Answer bad = hub_.Send(
      {http::Method::Post,
       "/login",
       "",
       {{"Content-Type", "application/x-www-form-urlencoded"}, {"Cookie", "hangar_csrf=" + csrf}},
       "_csrf=" + csrf + "&username=alice&password=wrong&next=/"});
  EXPECT_EQ(bad.status, 401);
  EXPECT_TRUE(bad.Header("Set-Cookie").find("hangar_session=") == std::string::npos);
}

TEST_F(PagesTest, LoginRefusesAnOffSiteNext) {
  const std::string csrf = "abcdefghijklmnopqrstuvwxyz012345";
  Answer a = hub_.Send(
      {http::Method::Post,
       "/login",
       "",
       {{"Content-Type", "application/x-www-form-urlencoded"}, {"Cookie", "hangar_csrf=" + csrf}},
       "_csrf=" + csrf + "&username=alice&password=" + TestHub::kPassword +
           "&next=//evil.example"});
  EXPECT_EQ(a.status, 303);
  EXPECT_EQ(a.Header("Location"), "/");
}

TEST_F(PagesTest, TokensPageCreatesAToken) {
  EXPECT_EQ(hub_.Get("/settings/tokens").status, 303);  // to the sign-in page
  Answer made = hub_.PostForm("/settings/tokens", "alice", "name=ci&role=read");
  EXPECT_EQ(made.status, 200) << made.body;
  EXPECT_TRUE(Has(made, "hf_")) << "the new token is shown once";
  EXPECT_TRUE(Has(hub_.Get("/settings/tokens", "alice:session"), "ci"));
}

TEST_F(PagesTest, FormsWithoutTheCsrfTokenAreRefused) {
  Answer a = hub_.Send({http::Method::Post,
                        "/settings/tokens",
                        "alice:session",
                        {{"Content-Type", "application/x-www-form-urlencoded"}},
                        "name=x&role=write"});
  EXPECT_EQ(a.status, 403);
}

TEST_F(PagesTest, NewRepoAndOrganization) {
  Answer made = hub_.PostForm("/new", "bob", "type=model&owner=bob&name=fresh&visibility=public");
  EXPECT_EQ(made.status, 303) << made.body;
  EXPECT_EQ(hub_.Get("/bob/fresh").status, 200);
  Answer bad = hub_.PostForm("/new", "bob", "type=model&owner=bob&name=..&visibility=public");
  EXPECT_EQ(bad.status, 400) << bad.body;
  Answer org = hub_.PostForm("/settings/organizations", "bob", "name=bobs-org");
  EXPECT_EQ(org.status, 303) << org.body;
  EXPECT_EQ(hub_.Get("/settings/org/bobs-org", "bob:session").status, 200);
  hub_.AddUser("carol");  // not a member, and not an admin as alice is
  EXPECT_EQ(hub_.Get("/settings/org/bobs-org", "carol:session").status, 403);
}

}  // namespace
}  // namespace hangar::web
