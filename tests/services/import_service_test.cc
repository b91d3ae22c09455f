#include "services/git/import_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "git/test_repo.h"
#include "service_test.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;
using git::testing::Sh;
using git::testing::TempDir;

// A non-bare source repository: default branch `trunk`, branches feature/a and fix (a
// merge on trunk), lightweight tag light, annotated tag v1.0, a note ref.
std::string BuildSource(const std::string& dir) {
  Sh(dir, R"SH(
git init -q -b trunk src
cd src
c() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
echo one > a.txt && git add a.txt && c 1700000000 -m one
echo two >> a.txt && c 1700000100 -am two
git checkout -q -b feature/a
echo feat > f.txt && git add f.txt && c 1700000200 -m feat
git checkout -q trunk
git checkout -q -b fix
echo fix > b.txt && git add b.txt && c 1700000300 -m fix
git checkout -q trunk
GIT_AUTHOR_DATE="@1700000400 +0000" GIT_COMMITTER_DATE="@1700000400 +0000" git merge -q --no-ff -m merge feature/a
git tag light HEAD~1
GIT_COMMITTER_DATE="@1700000500 +0000" git tag -a -m 'release one' v1.0
git update-ref refs/pr/1 fix
)SH");
  return dir + "/src";
}

std::string Refs(const std::string& git_dir) {
  return Sh(git_dir, "git --git-dir=. for-each-ref --format='%(objectname) %(refname)'");
}

// Commits in the single-file commit-graph of bare repository `git_dir` (the last entry of
// its OID fanout chunk), or "none".
std::string GraphCommits(const std::string& git_dir) {
  return Sh(git_dir, R"SH(python3 - <<'PY'
import os, struct
p = "objects/info/commit-graph"
if not os.path.exists(p):
    print("none")
else:
    b = open(p, "rb").read()
    for i in range(b[6]):
        cid, off = struct.unpack(">4sQ", b[8 + 12 * i: 20 + 12 * i])
        if cid == b"OIDF":
            print(struct.unpack(">I", b[off + 1020: off + 1024])[0])
PY
)SH");
}

class ImportServiceTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    ImportOptions opts;
    opts.tmp_dir = fs::path(dir_.path()) / "tmp";
    imports_ =
        std::make_unique<ImportService>(*stores_.repos, *stores_.users, *access_, *repos_, opts);
    alice_ = testing::MakeUser(*accounts_, "alice");
    bob_ = testing::MakeUser(*accounts_, "bob");
    admin_.anonymous = false;
    admin_.name = "hangar-cli";
    admin_.is_admin = true;
    admin_.role = TokenRole::Write;
    source_ = BuildSource(dir_.path());
  }

  ImportRequest Request(std::string source, std::string name = "imported") {
    ImportRequest r;
    r.source = std::move(source);
    r.ns = "alice";
    r.name = std::move(name);
    r.allow_local = true;
    return r;
  }
  std::string RepoPath(const std::string& name) {
    return repos_->GitPath({RepoType::Model, "alice", name});
  }
  bool TmpIsEmpty() {
    std::error_code ec;
    return !fs::exists(fs::path(dir_.path()) / "tmp", ec) ||
           fs::is_empty(fs::path(dir_.path()) / "tmp", ec);
  }
  // Nothing of `name` is left: no row, no repository, no temporaries.
  void ExpectNothingLeft(const std::string& name) {
    EXPECT_EQ(stores_.repos->Find({RepoType::Model, "alice", name}).error().code,
              ErrorCode::RepoNotFound);
    EXPECT_FALSE(fs::exists(RepoPath(name)));
    EXPECT_TRUE(TmpIsEmpty());
  }

  std::unique_ptr<ImportService> imports_;
  Principal alice_, bob_, admin_;
  std::string source_;
};

TEST_F(ImportServiceTest, CopiesEveryRefAndFollowsTheSourceHead) {
  auto rec = imports_->Import(alice_, Request(source_));
  ASSERT_TRUE(rec.has_value()) << rec.error().message;
  const std::string repo = RepoPath("imported");
  EXPECT_EQ(Refs(repo), Refs(source_ + "/.git"));
  EXPECT_NE(Refs(repo).find("refs/tags/v1.0"), std::string::npos);
  EXPECT_NE(Refs(repo).find("refs/pr/1"), std::string::npos);
  EXPECT_EQ(Sh(repo, "git --git-dir=. rev-list --count --all"),
            Sh(source_, "git rev-list --count --all"));
  EXPECT_EQ(Sh(repo, "git --git-dir=. symbolic-ref HEAD"), "refs/heads/trunk\n");
  EXPECT_EQ(Sh(repo, "git --git-dir=. cat-file -t v1.0"), "tag\n");
  EXPECT_EQ(rec->default_branch, "trunk");
  EXPECT_EQ(rec->last_commit + "\n", Sh(source_, "git rev-parse trunk"));
  EXPECT_EQ(rec->last_modified, 1700000400);
  auto row = stores_.repos->Find({RepoType::Model, "alice", "imported"});
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->default_branch, "trunk");
  // A standalone hub repository: no remote, the server's config, a commit-graph with
  // changed-path Bloom filters.
  int rc = 0;
  Sh(repo, "git --git-dir=. config remote.origin.url", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_EQ(Sh(repo, "git --git-dir=. config uploadpack.allowFilter"), "true\n");
  EXPECT_TRUE(fs::exists(repo + "/objects/info/commit-graph") ||
              fs::exists(repo + "/objects/info/commit-graphs"));
  Sh(repo, "git --git-dir=. commit-graph verify");
  EXPECT_NE(Sh(repo, "grep -c BIDX objects/info/commit-graph || true"), "0\n");
  EXPECT_TRUE(TmpIsEmpty());
  // The hub serves it at once.
  auto open = repos_->Open(alice_, {RepoType::Model, "alice", "imported"}, Access::Read);
  ASSERT_TRUE(open.has_value()) << open.error().message;
}

TEST_F(ImportServiceTest, BareSourceWithADanglingHeadGetsMain) {
  Sh(dir_.path(),
     "git clone -q --bare src bare.git && cd bare.git && git branch -q main trunk"
     " && git symbolic-ref HEAD refs/heads/gone");
  auto rec = imports_->Import(bob_, [&] {
    auto r = Request(dir_.path() + "/bare.git", "from-bare");
    r.ns = "bob";
    r.type = RepoType::Dataset;
    r.is_private = true;
    return r;
  }());
  ASSERT_TRUE(rec.has_value()) << rec.error().message;
  EXPECT_EQ(rec->default_branch, "main");
  EXPECT_TRUE(rec->is_private);
  const std::string repo = repos_->GitPath({RepoType::Dataset, "bob", "from-bare"});
  EXPECT_EQ(Sh(repo, "git --git-dir=. symbolic-ref HEAD"), "refs/heads/main\n");
  EXPECT_EQ(Refs(repo), Refs(dir_.path() + "/bare.git"));
}

TEST_F(ImportServiceTest, FileUrlAndBorrowedObjectsMakeAStandaloneRepo) {
  Sh(dir_.path(), "git clone -q --bare --shared src shared.git");
  auto rec = imports_->Import(alice_, Request("file://" + dir_.path() + "/shared.git", "shared"));
  ASSERT_TRUE(rec.has_value()) << rec.error().message;
  const std::string repo = RepoPath("shared");
  EXPECT_FALSE(fs::exists(repo + "/objects/info/alternates"));
  Sh(dir_.path(), "rm -rf src");  // the objects must not be borrowed from it any more
  Sh(repo, "git --git-dir=. fsck --no-progress --connectivity-only");
}

TEST_F(ImportServiceTest, CommitGraphCoversEveryCommitWhateverTheSourceHad) {
  // No graph in the source; a complete one with Bloom filters; a stale one (commits and a
  // branch added after it was written); one without Bloom filters.
  Sh(dir_.path(), R"SH(
git clone -q --bare src none.git
git clone -q --bare src full.git && git --git-dir=full.git commit-graph write --reachable --changed-paths
cp -r full.git stale.git
git -C src commit -q --allow-empty -m later && git --git-dir=stale.git fetch -q "$PWD/src" trunk:refs/heads/more
git clone -q --bare src plain.git && git --git-dir=plain.git commit-graph write --reachable
)SH");
  for (const char* name : {"none", "full", "stale", "plain"}) {
    const std::string source = dir_.path() + "/" + name + ".git";
    auto rec = imports_->Import(alice_, Request(source, name));
    ASSERT_TRUE(rec.has_value()) << name << ": " << rec.error().message;
    const std::string repo = RepoPath(name);
    EXPECT_EQ(GraphCommits(repo), Sh(repo, "git --git-dir=. rev-list --count --all")) << name;
    EXPECT_NE(Sh(repo, "grep -c BDAT objects/info/commit-graph || true"), "0\n") << name;
    EXPECT_FALSE(fs::exists(repo + "/objects/info/commit-graphs/commit-graph-chain")) << name;
    Sh(repo, "git --git-dir=. commit-graph verify --no-progress");
  }
}

TEST_F(ImportServiceTest, MissingSourceIsBadRequestAndLeavesNothing) {
  auto rec = imports_->Import(alice_, Request(dir_.path() + "/no-such-repo"));
  ASSERT_FALSE(rec.has_value());
  EXPECT_EQ(rec.error().code, ErrorCode::BadRequest);
  EXPECT_NE(rec.error().message.find("cannot read"), std::string::npos) << rec.error().message;
  EXPECT_NE(rec.error().message.find("does not exist"), std::string::npos) << rec.error().message;
  EXPECT_EQ(rec.error().message.find(dir_.path() + "/tmp"), std::string::npos)
      << rec.error().message;
  Sh(dir_.path(), "mkdir not-a-repo");
  auto plain = imports_->Import(alice_, Request(dir_.path() + "/not-a-repo"));
  ASSERT_FALSE(plain.has_value());
  EXPECT_EQ(plain.error().code, ErrorCode::BadRequest);
  EXPECT_NE(plain.error().message.find("fatal: "), std::string::npos) << plain.error().message;
  ExpectNothingLeft("imported");
}

TEST_F(ImportServiceTest, UnreachableUrlIsBadRequestAndLeavesNothing) {
  auto rec = imports_->Import(alice_, Request("http://127.0.0.1:1/nothing.git"));
  ASSERT_FALSE(rec.has_value());
  EXPECT_EQ(rec.error().code, ErrorCode::BadRequest) << rec.error().message;
  ExpectNothingLeft("imported");
}

TEST_F(ImportServiceTest, ShallowOrBranchlessSourcesAreRefused) {
  Sh(dir_.path(),
     "git clone -q --bare --depth 1 file://$PWD/src shallow.git"
     " && git init -q --bare empty.git");
  auto shallow = imports_->Import(alice_, Request(dir_.path() + "/shallow.git"));
  ASSERT_FALSE(shallow.has_value());
  EXPECT_EQ(shallow.error().code, ErrorCode::BadRequest);
  EXPECT_NE(shallow.error().message.find("shallow"), std::string::npos);
  auto empty = imports_->Import(alice_, Request(dir_.path() + "/empty.git"));
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code, ErrorCode::BadRequest);
  EXPECT_NE(empty.error().message.find("no branches"), std::string::npos);
  ExpectNothingLeft("imported");
}

TEST_F(ImportServiceTest, NamespaceRulesAreThoseOfRepoCreation) {
  auto r = Request(source_);
  EXPECT_EQ(imports_->Import(bob_, r).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(imports_->Import(Principal::Anonymous(), r).error().code, ErrorCode::Unauthorized);
  Principal alice_read = alice_;
  alice_read.role = TokenRole::Read;
  EXPECT_EQ(imports_->Import(alice_read, r).error().code, ErrorCode::Forbidden);
  r.ns = "nobody";
  auto missing = imports_->Import(admin_, r);
  EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
  EXPECT_NE(missing.error().message.find("'nobody'"), std::string::npos);
  r.ns = "alice";
  r.name = "bad..name";
  EXPECT_EQ(imports_->Import(alice_, r).error().code, ErrorCode::BadRequest);
  ExpectNothingLeft("imported");
  // An org member with write access may import into the org; the admin anywhere.
  ASSERT_TRUE(accounts_->CreateOrg("acme", "bob").has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "alice", db::OrgRole::Write).has_value());
  r = Request(source_);
  r.ns = "acme";
  ASSERT_TRUE(imports_->Import(alice_, r).has_value());
  r.name = "by-admin";
  ASSERT_TRUE(imports_->Import(admin_, r).has_value());
}

TEST_F(ImportServiceTest, WebRequestsMayNameOnlyUrlsOfAllowedTransports) {
  const std::vector<std::string> sources = {
      source_, "file://" + source_,       "ext::sh -c touch% /tmp/pwned",
      "fd::3", "ftp://example.com/x.git", "localhost:src"};
  for (const std::string& source : sources) {
    auto r = Request(source);
    r.allow_local = false;
    auto rec = imports_->Import(alice_, r);
    ASSERT_FALSE(rec.has_value()) << source;
    EXPECT_EQ(rec.error().code, ErrorCode::BadRequest) << source;
  }
  ExpectNothingLeft("imported");
}

// Issue 13: a web import must not make the server reach its own loopback, its private
// networks or a metadata address, by any spelling of them.
TEST_F(ImportServiceTest, WebImportsReachOnlyPublicAddresses) {
  for (const std::string& source :
       {"http://127.0.0.1:1/nothing.git", "http://localhost:1/x.git", "http://[::1]:1/x.git",
        "http://0x7f.1:1/x.git", "https://2130706433/x.git", "http://[::ffff:127.0.0.1]:1/x",
        "http://10.1.2.3/x.git", "http://169.254.169.254/latest/meta-data/",
        "git://192.168.1.1/x.git", "ssh://git@[fd00::1]/x.git", "http://0.0.0.0:22/x"}) {
    auto r = Request(source);
    r.allow_local = false;
    auto rec = imports_->Import(alice_, r);
    ASSERT_FALSE(rec.has_value()) << source;
    EXPECT_EQ(rec.error().code, ErrorCode::BadRequest) << source;
    // Spellings a parser may read otherwise (0x7f.1, 2130706433) are refused as ambiguous.
    const std::string& m = rec.error().message;
    EXPECT_TRUE(m.find("not a public address") != std::string::npos ||
                m.find("ambiguous") != std::string::npos)
        << source << ": " << m;
  }
  ExpectNothingLeft("imported");
}

TEST_F(ImportServiceTest, AnOperatorMayLetAPrivateHostThrough) {
  ImportOptions opts;
  opts.tmp_dir = fs::path(dir_.path()) / "tmp";
  opts.private_hosts = {"127.0.0.1"};
  ImportService imports(*stores_.repos, *stores_.users, *access_, *repos_, opts);
  auto r = Request("http://127.0.0.1:1/nothing.git");
  r.allow_local = false;
  auto rec = imports.Import(alice_, r);
  ASSERT_FALSE(rec.has_value());
  // Past the address rule: git itself tried and could not connect.
  EXPECT_NE(rec.error().message.find("cannot read"), std::string::npos) << rec.error().message;
  r.source = "http://localhost:1/nothing.git";  // another name of the same address: refused
  EXPECT_NE(imports.Import(alice_, r).error().message.find("not a public address"),
            std::string::npos);
  ExpectNothingLeft("imported");
}

TEST_F(ImportServiceTest, AfterImportHookGetsEachNewRepoOnly) {
  // The web import queues the new repo's maintenance through this hook (cli/app.cc).
  std::vector<std::pair<std::string, std::string>> calls;
  ImportOptions opts;
  opts.tmp_dir = fs::path(dir_.path()) / "tmp";
  opts.after_import = [&](const RepoId& id, const std::string& path) {
    calls.emplace_back(id.Id(), path);
  };
  ImportService imports(*stores_.repos, *stores_.users, *access_, *repos_, opts);
  ASSERT_TRUE(imports.Import(alice_, Request(source_)).has_value());
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, "alice/imported");
  EXPECT_EQ(calls[0].second, RepoPath("imported"));
  EXPECT_FALSE(imports.Import(alice_, Request(source_)).has_value());  // Conflict
  EXPECT_FALSE(imports.Import(alice_, Request(dir_.path() + "/missing", "x")).has_value());
  EXPECT_EQ(calls.size(), 1u);
}

TEST_F(ImportServiceTest, ExistingRepoIsConflict) {
  ASSERT_TRUE(imports_->Import(alice_, Request(source_)).has_value());
  const std::string refs = Refs(RepoPath("imported"));
  auto again = imports_->Import(alice_, Request(source_));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::Conflict);
  EXPECT_EQ(Refs(RepoPath("imported")), refs);
  ASSERT_TRUE(repos_->Create(alice_, {RepoType::Model, "alice", "created"}, false).has_value());
  EXPECT_EQ(imports_->Import(alice_, Request(source_, "created")).error().code,
            ErrorCode::Conflict);
  EXPECT_TRUE(TmpIsEmpty());
}

TEST_F(ImportServiceTest, LeftoversOfAnInterruptedImportAreSwept) {
  fs::path tmp = fs::path(dir_.path()) / "tmp";
  fs::create_directories(tmp / "import-1000-dead00" / "repo.git");
  fs::create_directories(tmp / "import-99999999999-alive0");
  fs::create_directories(tmp / "upload-xyz");
  ASSERT_TRUE(imports_->Import(alice_, Request(source_)).has_value());
  EXPECT_FALSE(fs::exists(tmp / "import-1000-dead00"));
  EXPECT_TRUE(fs::exists(tmp / "import-99999999999-alive0"));
  EXPECT_TRUE(fs::exists(tmp / "upload-xyz"));
}

TEST(CheckImportSource, AllowsOnlyTheListedTransports) {
  for (const char* ok :
       {"http://h/r.git", "https://h/r", "HTTPS://h/r", "git://h/r", "ssh://git@h/r.git"}) {
    auto s = CheckImportSource(ok, false);
    ASSERT_TRUE(s.has_value()) << ok << ": " << s.error().message;
    EXPECT_EQ(s->kind, ImportSource::Kind::Url);
    EXPECT_EQ(s->git_arg, ok);
  }
  for (const char* bad : {"", "-uhttp://h/r", "/abs/path", "file:///abs", "rel/path",
                          "ext::sh -c id", "fd::1", "ftp://h/r", "git+ssh://h/r", "h:r.git",
                          "git@h:r.git", "http://h/r\n", "://h", "1http://h"}) {
    auto s = CheckImportSource(bad, false);
    ASSERT_FALSE(s.has_value()) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::BadRequest) << bad;
  }
  EXPECT_EQ(CheckImportSource("/abs/path", true)->kind, ImportSource::Kind::Local);
  EXPECT_EQ(CheckImportSource("file:///abs", true)->kind, ImportSource::Kind::Local);
  EXPECT_EQ(CheckImportSource("/dir/with:colon", true)->kind, ImportSource::Kind::Local);
  EXPECT_FALSE(CheckImportSource("rel/path", true).has_value());
  EXPECT_FALSE(CheckImportSource("ext::sh -c id", true).has_value());
  EXPECT_NE(CheckImportSource("ext::sh", true).error().message.find("'ext::'"), std::string::npos);
  EXPECT_NE(CheckImportSource("/abs", false).error().message.find("local paths are not allowed"),
            std::string::npos);
}

TEST(RedactImportSource, HidesPasswordsAndHttpTokensAsUsers) {
  EXPECT_EQ(RedactImportSource("https://u:s3cret@h/r.git"), "https://u:***@h/r.git");
  EXPECT_EQ(RedactImportSource("https://ghp_token@h/r.git"), "https://***@h/r.git");
  EXPECT_EQ(RedactImportSource("ssh://git@h/r.git"), "ssh://git@h/r.git");
  EXPECT_EQ(Scrub("fatal: http://u:p%0aw@h bad\nforged: line", {UserInfoOf("http://u:p%0aw@h/r")}),
            "fatal: http://***@h bad forged: line");
  EXPECT_EQ(RedactImportSource("https://h/a@b:c"), "https://h/a@b:c");
  EXPECT_EQ(RedactImportSource("/some/path"), "/some/path");
}

}  // namespace
}  // namespace hangar::services
