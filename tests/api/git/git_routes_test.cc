#include "api/git/git_routes.h"

#include <gtest/gtest.h>

#include "testing/gzip.h"

#include "api/error_render.h"
#include "git/pkt_line.h"
#include "git/test_repo.h"

namespace hangar::api {
namespace {

using git::testing::Sh;
using git::testing::TempDir;

using hangar::testing::Gzip;

// Routes over a real bare repo; the repo lookup is faked and records what it was asked.
class GitRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Sh(dir_.path(),
       "git init -q --bare -b main repo.git\n"
       "git init -q -b main work && cd work && echo hi > a && git add a\n"
       "git commit -q -m one && git push -q ../repo.git main\n");
    handle_.git_path = dir_.path() + "/repo.git";
    services::GitRepoAccess access;
    access.open = [this](const Principal&, const RepoId& id,
                         services::Access) -> Result<services::RepoHandle> {
      opened_ = id;
      if (not_found_) return MakeError(ErrorCode::RepoNotFound, "repository not found");
      return handle_;
    };
    access.after_push = [](const services::RepoHandle&) {};
    // The router's gate asks the same fake lookup the service does, as App wires them.
    router_.SetRepoAuthorizer([open = access.open](const Principal& who, RepoType type,
                                                   std::string_view ns, std::string_view name,
                                                   Access needed) -> Result<void> {
      HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoId::Parse(type, ns, name));
      HANGAR_TRY(open(who, id, needed));
      return {};
    });
    services::GitLimits limits;  // room enough for every test here
    limits.pack_concurrency = 3;
    limits.pack_per_principal = 2;
    limits.pack_queue = 32;
    limits.pack_queue_wait = std::chrono::seconds(60);
    limits.push_concurrency = 2;
    git_ = std::make_unique<services::GitService>(std::move(access), limits);
    router_.SetErrorRenderer(RenderError);
    AddGitRoutes(router_, *git_);
  }

  http::Response Call(http::Method method, std::string target,
                      std::vector<std::pair<std::string, std::string>> headers = {},
                      std::string body = "") {
    http::Request req;
    req.method = method;
    req.method_name = method == http::Method::Post ? "POST" : "GET";
    req.target = target;
    size_t q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) req.query = target.substr(q + 1);
    req.headers = std::move(headers);
    req.remote = "127.0.0.1:5555";
    req.request_id = "t1";
    req.body = std::make_shared<StringSource>(std::move(body));
    return router_.Dispatch(req);
  }
  static std::string BodyOf(http::Response& res) {
    if (!res.stream) return res.body;
    auto all = ReadAll(*res.stream, 1 << 24);
    EXPECT_TRUE(all.has_value());
    return all ? *all : "";
  }
  static std::string LsRefs() {
    return git::PktLine("command=ls-refs\n") + std::string(git::PktDelim()) +
           git::PktLine("symrefs\n") + std::string(git::PktFlush());
  }

  TempDir dir_;
  services::RepoHandle handle_;
  bool not_found_ = false;
  std::optional<RepoId> opened_;
  std::unique_ptr<services::GitService> git_;
  http::Router router_;
};

TEST_F(GitRoutesTest, InfoRefsWithGitSuffixHasGitHeaders) {
  auto res = Call(http::Method::Get, "/acme/bert.git/info/refs?service=git-upload-pack");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.GetHeader("Content-Type"), "application/x-git-upload-pack-advertisement");
  EXPECT_EQ(res.GetHeader("Cache-Control"), "no-cache, max-age=0, must-revalidate");
  EXPECT_EQ(res.GetHeader("Pragma"), "no-cache");
  EXPECT_EQ(res.GetHeader("Expires"), "Fri, 01 Jan 1980 00:00:00 GMT");
  EXPECT_EQ(res.body.substr(0, 34), "001e# service=git-upload-pack\n0000");
  ASSERT_TRUE(opened_);
  EXPECT_EQ(*opened_, (RepoId{RepoType::Model, "acme", "bert"}));
}

TEST_F(GitRoutesTest, DatasetAndSpacePrefixesPickTheRepoType) {
  auto ds = Call(http::Method::Get, "/datasets/acme/data/info/refs?service=git-upload-pack");
  EXPECT_EQ(ds.status, 200);
  EXPECT_EQ(*opened_, (RepoId{RepoType::Dataset, "acme", "data"}));
  auto sp = Call(http::Method::Get, "/spaces/acme/app.git/info/refs?service=git-upload-pack");
  EXPECT_EQ(sp.status, 200);
  EXPECT_EQ(*opened_, (RepoId{RepoType::Space, "acme", "app"}));
}

TEST_F(GitRoutesTest, UnknownServiceAndDumbProtocolAreForbidden) {
  auto bad = Call(http::Method::Get, "/acme/bert/info/refs?service=git-foo");
  EXPECT_EQ(bad.status, 403);
  EXPECT_EQ(bad.GetHeader("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(bad.body, "unsupported service 'git-foo'\n");
  auto dumb = Call(http::Method::Get, "/acme/bert/info/refs");
  EXPECT_EQ(dumb.status, 403);
}

TEST_F(GitRoutesTest, AnonymousCallerOfAHiddenRepoIsChallenged) {
  not_found_ = true;
  auto res = Call(http::Method::Get, "/acme/secret/info/refs?service=git-upload-pack");
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.GetHeader("WWW-Authenticate"), "Basic realm=\"Hangar\"");
}

TEST_F(GitRoutesTest, RpcNeedsItsContentType) {
  auto res = Call(http::Method::Post, "/acme/bert/git-upload-pack",
                  {{"content-type", "application/x-git-receive-pack-request"}}, "0000");
  EXPECT_EQ(res.status, 415);
  EXPECT_EQ(res.body, "Content-Type must be application/x-git-upload-pack-request\n");
}

TEST_F(GitRoutesTest, GzipRequestIsDecodedAndResultStreamed) {
  auto res = Call(http::Method::Post, "/acme/bert.git/git-upload-pack",
                  {{"content-type", "application/x-git-upload-pack-request"},
                   {"content-encoding", "gzip"},
                   {"git-protocol", "version=2"}},
                  Gzip(LsRefs()));
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.GetHeader("Content-Type"), "application/x-git-upload-pack-result");
  EXPECT_EQ(res.GetHeader("Cache-Control"), "no-cache, max-age=0, must-revalidate");
  EXPECT_FALSE(res.content_length.has_value());  // chunked
  std::string out = BodyOf(res);
  EXPECT_NE(out.find("HEAD symref-target:refs/heads/main"), std::string::npos) << out;
}

TEST_F(GitRoutesTest, UnknownContentEncodingIsRefused) {
  auto res =
      Call(http::Method::Post, "/acme/bert/git-upload-pack",
           {{"content-type", "application/x-git-upload-pack-request"}, {"content-encoding", "br"}},
           LsRefs());
  EXPECT_EQ(res.status, 415);
}

TEST_F(GitRoutesTest, ReceivePackRouteAnswersTheProbe) {
  auto res = Call(http::Method::Post, "/acme/bert/git-receive-pack",
                  {{"content-type", "application/x-git-receive-pack-request"}}, "0000");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(res.GetHeader("Content-Type"), "application/x-git-receive-pack-result");
  EXPECT_EQ(BodyOf(res), "");
}

}  // namespace
}  // namespace hangar::api
