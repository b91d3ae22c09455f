#include "services/mirror/mirror_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/pointer.h"
#include "git/repo_reader.h"
#include "git/test_repo.h"
#include "service_test.h"
#include "services/mirror/lfs_remote.h"
#include "storage/memory/memory_blob_store.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;
using git::testing::Sh;
using git::testing::TempDir;

// Where git-lfs keeps `oid` in git directory `git_dir`.
fs::path LfsObjectPath(const fs::path& git_dir, const Sha256& oid) {
  const std::string hex = oid.Hex();
  return git_dir / "lfs" / "objects" / hex.substr(0, 2) / hex.substr(2, 2) / hex;
}

// Commits `content` to `path` of the non-bare repository `repo` as an LFS file, the way
// git-lfs stores it (the pointer in git, the bytes in .git/lfs/objects), without git-lfs.
git::Pointer CommitLfsFile(const fs::path& repo, const std::string& path,
                           const std::string& content, const std::string& message) {
  git::Pointer p{Sha256::Of(content), content.size()};
  fs::path object = LfsObjectPath(repo / ".git", p.oid);
  fs::create_directories(object.parent_path());
  std::ofstream(object, std::ios::binary) << content;
  std::ofstream(repo / path, std::ios::binary) << git::FormatPointer(p);
  Sh(repo.string(), "git add -A && git commit -q -m '" + message + "'");
  return p;
}

// "sha ref" lines of the branches and tags of git directory `git_dir`.
std::string Refs(const std::string& git_dir) {
  return Sh(
      git_dir,
      "git --git-dir=. for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags");
}

class MirrorServiceTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    ImportOptions import_options;
    import_options.tmp_dir = fs::path(dir_.path()) / "tmp";
    imports_ = std::make_unique<ImportService>(*stores_.repos, *stores_.users, *access_, *repos_,
                                               import_options);
    roots_ = fs::path(dir_.path()) / "roots";
    fs::create_directories(roots_);
    MirrorOptions options;
    options.local_roots = {roots_};
    options.min_interval_s = 60;
    options.default_interval_s = 600;
    options.now_unix = [this] { return now_; };
    options.enqueue = [this](std::string_view kind, std::string key, int64_t) -> Result<void> {
      queued_.push_back(std::string(kind) + ":" + key);
      return {};
    };
    mirrors_ = std::make_unique<MirrorService>(*stores_.mirrors, *stores_.lfs, blobs_, *repos_,
                                               *imports_, options);
    alice_ = testing::MakeUser(*accounts_, "alice");
    bob_ = testing::MakeUser(*accounts_, "bob");
    upstream_ = roots_ / "upstream";
    Sh(roots_.string(), R"SH(
git init -q -b main upstream
cd upstream
echo '# card' > README.md && git add README.md && git commit -q -m card
git tag v1
git checkout -q -b dev && echo dev > dev.txt && git add dev.txt && git commit -q -m dev
git checkout -q main
)SH");
    weights_ = CommitLfsFile(upstream_, "weights.bin", "the weights, version one", "weights");
  }

  PullMirrorRequest Pull(std::string url, std::string name = "m") {
    PullMirrorRequest r;
    r.id = {RepoType::Model, "alice", std::move(name)};
    r.url = std::move(url);
    return r;
  }
  std::string GitPath(const std::string& name) {
    return repos_->GitPath({RepoType::Model, "alice", name});
  }
  db::MirrorRecord PullState(int64_t repo_id) {
    auto m = mirrors_->PullOf(repo_id);
    EXPECT_TRUE(m && *m);
    return m && *m ? **m : db::MirrorRecord{};
  }
  // Whether the blob store holds `p` and the repo links it.
  bool Has(int64_t repo_id, const git::Pointer& p) {
    auto linked = stores_.lfs->IsLinked(repo_id, p.oid);
    return blobs_.Stat(p.oid).has_value() && linked && linked->has_value();
  }

  storage::MemoryBlobStore blobs_;
  std::unique_ptr<ImportService> imports_;
  std::unique_ptr<MirrorService> mirrors_;
  fs::path roots_, upstream_;
  git::Pointer weights_;
  int64_t now_ = 1'800'000'000;
  std::vector<std::string> queued_;
  Principal alice_, bob_;
};

TEST_F(MirrorServiceTest, APullMirrorFollowsItsUpstreamWithItsLfsObjects) {
  auto made = mirrors_->CreatePull(alice_, Pull(upstream_.string()));
  ASSERT_TRUE(made) << made.error().message;
  auto& [repo, mirror] = *made;
  EXPECT_TRUE(repo.is_mirror);
  EXPECT_EQ(mirror.interval_s, 600);
  EXPECT_EQ(mirror.next_sync_at, now_ + 600);
  ASSERT_EQ(queued_, std::vector<std::string>{"mirror.pull:" + std::to_string(repo.id)});
  // The import copied the refs, not the LFS objects: the first sync brings them.
  EXPECT_FALSE(Has(repo.id, weights_));
  ASSERT_TRUE(mirrors_->Pull(repo.id, {}));
  EXPECT_TRUE(Has(repo.id, weights_));
  auto state = PullState(repo.id);
  EXPECT_EQ(state.last_error, "");
  EXPECT_EQ(state.last_success_at, now_);
  EXPECT_EQ(state.next_sync_at, now_ + 600);
  EXPECT_EQ(Refs(GitPath("m")), Refs((upstream_ / ".git").string()));

  // The upstream moves on: a new LFS file, a deleted branch, a new tag, a rewritten main.
  auto more = CommitLfsFile(upstream_, "more.bin", "more weights", "more");
  Sh(upstream_.string(), "git branch -q -D dev && git tag v2 && git commit -q --amend -m amended");
  now_ += 700;
  ASSERT_TRUE(mirrors_->Pull(repo.id, {}));
  EXPECT_EQ(PullState(repo.id).last_error, "");
  EXPECT_EQ(Refs(GitPath("m")), Refs((upstream_ / ".git").string()));
  EXPECT_TRUE(Has(repo.id, more));
  // The row's head follows (RepoService::AfterPush ran).
  auto row = repos_->FindById(repo.id);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->last_commit, Sh(upstream_.string(), "git rev-parse HEAD").substr(0, 40));
  // The bookkeeping refs are hidden from clients.
  EXPECT_EQ(Sh(GitPath("m"), "git --git-dir=. config --get uploadpack.hideRefs"), "refs/hangar\n");
}

TEST_F(MirrorServiceTest, AFailedSyncKeepsTheLastGoodStateAndBacksOff) {
  auto made = mirrors_->CreatePull(alice_, Pull(upstream_.string()));
  ASSERT_TRUE(made) << made.error().message;
  const int64_t id = made->first.id;
  ASSERT_TRUE(mirrors_->Pull(id, {}));
  const std::string good = Refs(GitPath("m"));

  // An LFS object the upstream lost: the sync fails and no ref moves.
  auto lost = CommitLfsFile(upstream_, "lost.bin", "lost bytes", "lost");
  fs::remove(LfsObjectPath(upstream_ / ".git", lost.oid));
  ASSERT_TRUE(mirrors_->Pull(id, {}));
  auto state = PullState(id);
  EXPECT_NE(state.last_error.find("lacks LFS object " + lost.oid.Hex()), std::string::npos)
      << state.last_error;
  EXPECT_EQ(state.failures, 1);
  EXPECT_EQ(state.next_sync_at, now_ + 2 * 600);  // backs off
  EXPECT_EQ(Refs(GitPath("m")), good);

  // The upstream gone: its error, a longer wait, the same refs.
  fs::rename(upstream_, roots_ / "away");
  ASSERT_TRUE(mirrors_->Pull(id, {}));
  state = PullState(id);
  EXPECT_EQ(state.failures, 2);
  EXPECT_EQ(state.next_sync_at, now_ + 4 * 600);
  EXPECT_NE(state.last_error.find("local_roots"), std::string::npos) << state.last_error;
  EXPECT_EQ(Refs(GitPath("m")), good);

  // Back, with the object: the next sync succeeds and the count starts again.
  fs::rename(roots_ / "away", upstream_);
  Sh(upstream_.string(), "git reset -q --hard HEAD~1");
  ASSERT_TRUE(mirrors_->Pull(id, {}));
  state = PullState(id);
  EXPECT_EQ(state.failures, 0);
  EXPECT_EQ(state.last_error, "");
}

TEST_F(MirrorServiceTest, SourcesOutsideTheRootsAreRefusedAndNothingIsMade) {
  fs::create_directories(fs::path(dir_.path()) / "outside");
  Sh(dir_.path() + "/outside",
     "git init -q -b main r && cd r && echo x > x && git add x && git commit -q -m x");
  fs::create_symlink(fs::path(dir_.path()) / "outside" / "r", roots_ / "link");
  const std::string outside = dir_.path() + "/outside/r";
  for (const std::string& url : {outside, "file://" + outside, roots_.string() + "/../outside/r",
                                 (roots_ / "link").string(), roots_.string() + "/missing"}) {
    auto made = mirrors_->CreatePull(alice_, Pull(url, "bad"));
    ASSERT_FALSE(made) << url;
    EXPECT_EQ(made.error().code, ErrorCode::BadRequest) << url;
    EXPECT_NE(made.error().message.find("local_roots"), std::string::npos) << made.error().message;
  }
  // Inside the roots, but leading git elsewhere: a .git that is a link or a gitfile,
  // objects borrowed through alternates.
  Sh(roots_.string(),
     "mkdir dotgit gitfile && ln -s " + outside + "/.git dotgit/.git && echo 'gitdir: " + outside +
         "/.git' > gitfile/.git && git clone -q --shared " + outside + " borrowed");
  for (const char* name : {"dotgit", "gitfile", "borrowed"}) {
    auto made = mirrors_->CreatePull(alice_, Pull((roots_ / name).string(), "bad"));
    ASSERT_FALSE(made) << name;
    EXPECT_EQ(made.error().code, ErrorCode::BadRequest) << name;
    EXPECT_NE(made.error().message.find(name), std::string::npos) << made.error().message;
  }
  auto yearly = Pull(upstream_.string(), "bad");
  yearly.interval_s = INT64_MAX;  // would overflow next_sync_at
  EXPECT_EQ(mirrors_->CreatePull(alice_, yearly).error().code, ErrorCode::BadRequest);
  for (const std::string& url : {std::string("ext::sh -c id"), std::string("relative/path"),
                                 std::string("http://169.254.169.254/x")}) {
    auto made = mirrors_->CreatePull(alice_, Pull(url, "bad"));
    ASSERT_FALSE(made) << url;
    EXPECT_EQ(made.error().code, ErrorCode::BadRequest) << url;
  }
  auto short_interval = Pull(upstream_.string(), "bad");
  short_interval.interval_s = 5;
  EXPECT_EQ(mirrors_->CreatePull(alice_, short_interval).error().code, ErrorCode::BadRequest);
  auto bad_credential = Pull("https://example.org/r.git", "bad");
  bad_credential.credential = "token\r\nX-Evil: 1";
  EXPECT_EQ(mirrors_->CreatePull(alice_, bad_credential).error().code, ErrorCode::BadRequest);
  // Nothing of it was made.
  EXPECT_EQ(stores_.repos->Find({RepoType::Model, "alice", "bad"}).error().code,
            ErrorCode::RepoNotFound);
  EXPECT_FALSE(fs::exists(GitPath("bad")));
  EXPECT_TRUE(queued_.empty());
}

TEST_F(MirrorServiceTest, APushMirrorGetsEachPushWithItsLfsObjects) {
  // A repo of alice's (a pull mirror made ordinary again, for its LFS objects).
  auto made = mirrors_->CreatePull(alice_, Pull(upstream_.string(), "own"));
  ASSERT_TRUE(made) << made.error().message;
  const RepoId id{RepoType::Model, "alice", "own"};
  ASSERT_TRUE(mirrors_->Pull(made->first.id, {}));
  ASSERT_TRUE(mirrors_->Remove(alice_, id, made->second.id));
  ASSERT_TRUE(repos_->Open(alice_, id, Access::Write)) << "an ordinary repo again";

  const fs::path remote = roots_ / "remote.git";
  Sh(roots_.string(), "git init -q --bare remote.git");
  EXPECT_EQ(mirrors_->AddPush(bob_, id, {remote.string(), ""}).error().code, ErrorCode::Forbidden);
  queued_.clear();
  auto push = mirrors_->AddPush(alice_, id, {remote.string(), ""});
  ASSERT_TRUE(push) << push.error().message;
  EXPECT_EQ(queued_, std::vector<std::string>{"mirror.push:" + std::to_string(push->id)});
  ASSERT_TRUE(mirrors_->Push(push->id, {}));
  EXPECT_EQ(Refs(remote.string()), Refs(GitPath("own")));
  EXPECT_TRUE(fs::exists(LfsObjectPath(remote, weights_.oid)));
  auto listed = mirrors_->List(alice_, id);
  ASSERT_TRUE(listed && listed->size() == 1);
  EXPECT_EQ(listed->front().last_error, "");
  EXPECT_TRUE(listed->front().last_sync_at.has_value());

  // A push to the repo (here: straight into its repository) and AfterPush queue it again.
  Sh(GitPath("own"), "git --git-dir=. branch -q extra main && git --git-dir=. tag -d v1");
  queued_.clear();
  auto handle = repos_->Open(alice_, id, Access::Admin);
  ASSERT_TRUE(handle);
  mirrors_->AfterPush(*handle);
  EXPECT_EQ(queued_, std::vector<std::string>{"mirror.push:" + std::to_string(push->id)});
  ASSERT_TRUE(mirrors_->Push(push->id, {}));
  EXPECT_EQ(Refs(remote.string()), Refs(GitPath("own")));  // extra added, v1 pruned
  // Readers who are not admins do not see push mirrors (their URLs may be internal).
  EXPECT_EQ(mirrors_->List(bob_, id)->size(), 0u);
}

TEST_F(MirrorServiceTest, AnObjectIsLinkedOnlyWhenTheUpstreamSendsItsBytes) {
  // Another repo's private object is in the store; the upstream names it in a pointer but
  // does not have it. The mirror must not link it on the hash alone.
  const std::string secret = "another repo's private bytes";
  git::Pointer stolen{Sha256::Of(secret), secret.size()};
  auto writer = blobs_.Create(stolen.oid, stolen.size);
  ASSERT_TRUE(writer && (*writer)->Append(secret) && (*writer)->Commit());
  std::ofstream(upstream_ / "stolen.bin", std::ios::binary) << git::FormatPointer(stolen);
  Sh(upstream_.string(), "git add stolen.bin && git commit -q -m bait");
  auto made = mirrors_->CreatePull(alice_, Pull(upstream_.string()));
  ASSERT_TRUE(made) << made.error().message;
  ASSERT_TRUE(mirrors_->Pull(made->first.id, {}));
  auto state = PullState(made->first.id);
  EXPECT_NE(state.last_error.find("lacks LFS object " + stolen.oid.Hex()), std::string::npos)
      << state.last_error;
  EXPECT_FALSE(stores_.lfs->IsLinked(made->first.id, stolen.oid)->has_value());

  // Nor does a cache's repo, which links an object when it is read (FetchObject fetches
  // the bytes first).
  auto cache_req = Pull(upstream_.string(), "cached");
  cache_req.for_cache = true;
  auto cached = mirrors_->CreatePull(alice_, cache_req);
  ASSERT_TRUE(cached) << cached.error().message;
  EXPECT_TRUE(cached->second.lazy_lfs);
  ASSERT_TRUE(mirrors_->Pull(cached->first.id, {}));
  EXPECT_EQ(PullState(cached->first.id).last_error, "");
  EXPECT_FALSE(stores_.lfs->IsLinked(cached->first.id, weights_.oid)->has_value());
  auto fetched = mirrors_->FetchObject(cached->first.id, stolen.oid, stolen.size);
  ASSERT_FALSE(fetched);
  EXPECT_NE(fetched.error().message.find("lacks LFS object"), std::string::npos);
  EXPECT_FALSE(stores_.lfs->IsLinked(cached->first.id, stolen.oid)->has_value());
  ASSERT_TRUE(mirrors_->FetchObject(cached->first.id, weights_.oid, weights_.size));
  EXPECT_TRUE(Has(cached->first.id, weights_));
}

TEST_F(MirrorServiceTest, APushMirrorNeverWritesThroughALinkInTheRemote) {
  auto made = mirrors_->CreatePull(alice_, Pull(upstream_.string(), "own"));
  ASSERT_TRUE(made) << made.error().message;
  const RepoId id{RepoType::Model, "alice", "own"};
  ASSERT_TRUE(mirrors_->Pull(made->first.id, {}));
  ASSERT_TRUE(mirrors_->Remove(alice_, id, made->second.id));
  const fs::path outside = fs::path(dir_.path()) / "outside-lfs";
  fs::create_directories(outside);
  Sh(roots_.string(),
     "git init -q --bare remote.git && ln -s " + outside.string() + " remote.git/lfs");
  auto push = mirrors_->AddPush(alice_, id, {(roots_ / "remote.git").string(), ""});
  ASSERT_TRUE(push) << push.error().message;
  ASSERT_TRUE(mirrors_->Push(push->id, {}));
  auto listed = mirrors_->List(alice_, id);
  ASSERT_TRUE(listed && listed->size() == 1);
  EXPECT_NE(listed->front().last_error.find("symbolic link"), std::string::npos)
      << listed->front().last_error;
  EXPECT_TRUE(fs::is_empty(outside));
}

TEST(LfsRemoteDeadline, AnUpstreamThatTricklesBytesCannotHoldASync) {
  TempDir dir;
  // An LFS endpoint whose batch answer sends the download to itself, and whose download
  // then sends a byte a second.
  Sh(dir.path(), R"SH(cat > trickle.py <<'PY'
import http.server, json, socketserver, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0)); req = json.loads(self.rfile.read(n))
        o = req["objects"][0]; port = self.server.server_address[1]
        body = json.dumps({"objects": [{"oid": o["oid"], "size": o["size"], "actions": {"download": {"href": "http://127.0.0.1:%d/o" % port}}}]}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "1000"); self.end_headers()
        for _ in range(1000):
            self.wfile.write(b"x"); self.wfile.flush(); time.sleep(1)
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
s = S(("127.0.0.1", 0), H); open("port", "w").write(str(s.server_address[1])); s.serve_forever()
PY
(timeout 60 python3 trickle.py >/dev/null 2>&1 &)
for i in $(seq 100); do test -s port && break; sleep 0.05; done
)SH");
  std::string port;
  std::ifstream(dir.path() + "/port") >> port;
  ASSERT_FALSE(port.empty());
  storage::MemoryBlobStore blobs;
  LfsRemoteOptions options;
  options.endpoint = "http://127.0.0.1:" + port + "/r.git/info/lfs";
  options.private_hosts = {"127.0.0.1"};
  options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  const auto start = std::chrono::steady_clock::now();
  auto fetched = LfsRemote(options).Fetch({git::Pointer{Sha256::Of("x"), 1000}}, blobs);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(fetched);
  EXPECT_TRUE(fetched.error().code == ErrorCode::Unavailable ||
              fetched.error().code == ErrorCode::GatewayTimeout)
      << fetched.error().message;
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(LfsBatchResponse, ParsesActionsAndRefusesWhatCannotBeSent) {
  const std::string oid(64, 'a');
  auto ok = ParseLfsBatchResponse(
      R"({"transfer":"basic","objects":[{"oid":")" + oid +
      R"(","size":3,"actions":{"download":{"href":"https://h/o","header":{"A":"b"}}}},{"oid":")" +
      oid + R"(","size":0,"error":{"code":404,"message":"gone"}}]})");
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].size, 3u);
  ASSERT_TRUE((*ok)[0].download);
  EXPECT_EQ((*ok)[0].download->href, "https://h/o");
  EXPECT_EQ((*ok)[0].download->headers.size(), 1u);
  EXPECT_EQ((*ok)[1].error, "gone");
  for (
      const std::string& bad :
      {std::string("[]"), std::string("{}"), std::string(R"({"objects":[{"oid":"x","size":1}]})"),
       R"({"objects":[{"oid":")" + oid + R"(","size":-1}]})",
       R"({"objects":[{"oid":")" + oid +
           R"(","size":1,"actions":{"download":{"href":"file:///etc/passwd"}}}]})",
       R"({"objects":[{"oid":")" + oid +
           R"(","size":1,"actions":{"download":{"href":"https://h","header":{"A":"b\r\nC: d"}}}}]})"}) {
    auto r = ParseLfsBatchResponse(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
    }
  }
}

TEST(LfsEndpoint, FollowsGitLfsDerivation) {
  EXPECT_EQ(*LfsEndpointOf("https://hub.example/alice/m"),
            "https://hub.example/alice/m.git/info/lfs");
  EXPECT_EQ(*LfsEndpointOf("https://hub.example/alice/m.git/"),
            "https://hub.example/alice/m.git/info/lfs");
  EXPECT_EQ(*LfsEndpointOf("ssh://git@hub.example:2222/alice/m.git"),
            "https://hub.example/alice/m.git/info/lfs");
  EXPECT_EQ(*LfsEndpointOf("git://hub.example/alice/m"),
            "https://hub.example/alice/m.git/info/lfs");
  EXPECT_FALSE(LfsEndpointOf("/local/path"));
  EXPECT_FALSE(LfsEndpointOf("ftp://h/x"));
}

}  // namespace
}  // namespace hangar::services
