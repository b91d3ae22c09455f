#include "services/maintenance/maintenance_service.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "git/search_snapshot.h"
#include "git/test_repo.h"
#include "service_test.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;
using git::testing::Quote;
using git::testing::Sh;
using git::testing::TempDir;

// Appends `commits` commits to refs/heads/main of the bare repository `repo` (created when
// missing) with git fast-import, as bench/forge/make_repo.sh does: `files` files, each
// growing by a line per commit, so fast-import stores every file's newest version at the
// end of a forward delta chain. Each call writes one new pack. A tag and a branch mark the
// first commit of the first call.
void FastImport(const std::string& repo, int commits, int files = 3, int start = 0) {
  fs::create_directories(fs::path(repo).parent_path());
  Sh(fs::path(repo).parent_path().string(),
     "test -d " + Quote(repo) + " || git init -q --bare -b main " + Quote(repo) + "\ncd " +
         Quote(repo) + R"SH(
python3 - )SH" +
         std::to_string(commits) + " " + std::to_string(files) + " " + std::to_string(start) +
         R"SH( <<'PY' | git -c fastimport.unpackLimit=1 fast-import --quiet
import sys
n, files, start = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
w = sys.stdout.buffer.write
if start:
    w(b"reset refs/heads/main\nfrom refs/heads/main^0\n\n")
for i in range(start + 1, start + n + 1):
    w(b"commit refs/heads/main\nmark :%d\ncommitter A <a@example.com> %d +0000\n" % (i, 1700000000 + i))
    msg = b"step %d" % i
    w(b"data %d\n%s\n" % (len(msg), msg))
    for f in range(files):
        body = b"".join(b"file %d line %d omega step\n" % (f, k) for k in range(1, i + 1))
        w(b"M 100644 inline src/f%d.txt\ndata %d\n%s\n" % (f, len(body), body))
    if i == 1:
        w(b"reset refs/heads/first\nfrom :1\n\n")
        w(b"tag v1\nfrom :1\ntagger A <a@example.com> 1700000001 +0000\ndata 3\nv1\n\n")
PY
)SH");
}

std::string Refs(const std::string& repo) {
  return Sh(repo, "git --git-dir=. for-each-ref --format='%(objectname) %(objecttype) %(refname)'");
}
std::string AllObjects(const std::string& repo) {
  return Sh(repo, "git --git-dir=. rev-list --all --objects | sort");
}
// Delta base of the newest src/f0.txt, 40 zeros when stored whole.
std::string TipDeltaBase(const std::string& repo) {
  return Sh(repo, "echo main:src/f0.txt | git --git-dir=. cat-file --batch-check='%(deltabase)'");
}
int CountFiles(const std::string& dir, const std::string& suffix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().string().ends_with(suffix);
  }
  return n;
}
// Every file under objects/ with its size: equal before and after (with equal refs) means
// the repository is as it was.
std::string ObjectFiles(const std::string& repo) {
  return Sh(repo, "find objects -type f | sort | xargs ls -l | awk '{print $5, $9}'");
}

// The service as `hangar serve` configures it by default (config.h's [maintenance] numbers
// and gc.grace_s).
MaintenanceOptions Configured() {
  MaintenanceOptions o;
  o.timeout = std::chrono::hours(1);
  o.unreachable_grace = std::chrono::hours(24);
  o.policy.full_growth_percent = 25;
  o.policy.light_packs = 16;
  return o;
}

class MaintenanceServiceTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    Make(Configured());
    repo_ = dir_.path() + "/r.git";
  }
  void Make(MaintenanceOptions options) {
    maint_ = std::make_unique<MaintenanceService>(*stores_.repos, *repos_, options);
  }
  std::string PackDir() const { return repo_ + "/objects/pack"; }

  std::unique_ptr<MaintenanceService> maint_;
  std::string repo_;
};

TEST_F(MaintenanceServiceTest, FullKeepsEveryRefAndObjectAndStoresTheTipWhole) {
  FastImport(repo_, 60);
  Sh(repo_, "git --git-dir=. update-ref refs/pr/1 main~3");
  const std::string refs = Refs(repo_), objects = AllObjects(repo_);
  ASSERT_NE(TipDeltaBase(repo_), std::string(40, '0') + "\n");  // fast-import's chain

  auto report = maint_->Maintain(repo_, MaintenanceLevel::Full);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_EQ(report->level, MaintenanceLevel::Full);
  ASSERT_EQ(report->steps.size(), 5u);
  EXPECT_EQ(report->steps[0].name, "pack-refs");
  EXPECT_EQ(report->steps[1].name, "repack");
  EXPECT_EQ(report->steps[2].name, "prune");
  EXPECT_EQ(report->steps[3].name, "commit-graph");
  EXPECT_EQ(report->steps[4].name, "search-snapshot");
  // The default branch's search snapshot is in place for the first search.
  auto head = git::RepoReader().ResolveRevision(repo_, "HEAD");
  ASSERT_TRUE(head);
  auto snap = git::SearchSnapshot::OpenExisting(repo_, *head);
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_NE(snap->get(), nullptr);

  Sh(repo_, "git --git-dir=. fsck --full --no-progress");
  EXPECT_EQ(Refs(repo_), refs);
  EXPECT_EQ(AllObjects(repo_), objects);
  EXPECT_EQ(TipDeltaBase(repo_), std::string(40, '0') + "\n");
  EXPECT_EQ(CountFiles(PackDir(), ".pack"), 1);
  EXPECT_EQ(CountFiles(PackDir(), ".bitmap"), 1);
  EXPECT_EQ(Sh(repo_, "ls refs/heads refs/tags refs/pr | grep -v : | grep . || true"), "");
  // One commit-graph file with changed-path Bloom filters, no split chain.
  EXPECT_EQ(Sh(repo_, "grep -c BDAT objects/info/commit-graph"), "1\n");
  EXPECT_FALSE(fs::exists(repo_ + "/objects/info/commit-graphs"));
  Sh(repo_, "git --git-dir=. commit-graph verify --no-progress");
  // Recorded for the policy.
  auto state = ReadMaintenanceState(repo_);
  EXPECT_GT(state.last_full_unix, 0);
  EXPECT_EQ(state.objects_at_full, report->after.objects);
  EXPECT_EQ(report->after.objects,
            std::stoll(Sh(repo_, "git --git-dir=. count-objects -v | sed -n 's/in-pack: //p'")));
  EXPECT_EQ(report->after.packs, 1);
  EXPECT_TRUE(report->after.bitmap);
}

TEST_F(MaintenanceServiceTest, IsIdempotent) {
  FastImport(repo_, 30);
  ASSERT_TRUE(maint_->Maintain(repo_, MaintenanceLevel::Full).has_value());
  const std::string refs = Refs(repo_), objects = AllObjects(repo_);
  auto again = maint_->Maintain(repo_, MaintenanceLevel::Full);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(Refs(repo_), refs);
  EXPECT_EQ(AllObjects(repo_), objects);
  EXPECT_EQ(CountFiles(PackDir(), ".pack"), 1);
  EXPECT_EQ(CountFiles(PackDir(), ".bitmap"), 1);
  EXPECT_EQ(TipDeltaBase(repo_), std::string(40, '0') + "\n");
  EXPECT_EQ(again->before.objects, again->after.objects);
  Sh(repo_, "git --git-dir=. fsck --full --no-progress");
}

TEST_F(MaintenanceServiceTest, ARepackThatDiedLeavesNothingBehindTheNextRun) {
  FastImport(repo_, 10);
  namespace fs = std::filesystem;
  // What a repack of a worker killed with -9 leaves: its renamed output, and pack-objects'
  // temporaries; a temporary that is not old may belong to something running now.
  const fs::path pack(PackDir());
  for (const char* name :
       {".tmp-4242-pack-1234.pack", ".tmp-4242-pack-1234.idx", "tmp_pack_old", "tmp_pack_new"}) {
    std::ofstream(pack / name) << "partial";
  }
  fs::last_write_time(pack / "tmp_pack_old",
                      fs::file_time_type::clock::now() - std::chrono::hours(2));
  auto report = maint_->Maintain(repo_, MaintenanceLevel::Light);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_FALSE(fs::exists(pack / ".tmp-4242-pack-1234.pack"));
  EXPECT_FALSE(fs::exists(pack / ".tmp-4242-pack-1234.idx"));
  EXPECT_FALSE(fs::exists(pack / "tmp_pack_old"));
  EXPECT_TRUE(fs::exists(pack / "tmp_pack_new"));
  Sh(repo_, "git --git-dir=. fsck --full --no-progress");
}

TEST_F(MaintenanceServiceTest, LightMergesPacks) {
  FastImport(repo_, 20);
  for (int i = 0; i < 4; ++i) FastImport(repo_, 2, 3, 20 + 2 * i);
  ASSERT_EQ(CountFiles(PackDir(), ".pack"), 5);
  const std::string refs = Refs(repo_), objects = AllObjects(repo_);
  auto report = maint_->Maintain(repo_, MaintenanceLevel::Light);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_EQ(report->before.packs, 5);
  EXPECT_EQ(report->after.packs, 1);
  EXPECT_EQ(CountFiles(PackDir(), ".pack"), 1);
  EXPECT_EQ(Refs(repo_), refs);
  EXPECT_EQ(AllObjects(repo_), objects);
  Sh(repo_, "git --git-dir=. fsck --full --no-progress");
  auto state = ReadMaintenanceState(repo_);
  EXPECT_GT(state.last_light_unix, 0);
  EXPECT_EQ(state.last_full_unix, 0);  // a light run is no full one
}

TEST_F(MaintenanceServiceTest, UnreachableObjectsWithinTheGraceStay) {
  FastImport(repo_, 10);
  const std::string loose = Sh(repo_, "echo dangling | git --git-dir=. hash-object -w --stdin");
  ASSERT_TRUE(maint_->Maintain(repo_, MaintenanceLevel::Full).has_value());
  EXPECT_EQ(Sh(repo_, "git --git-dir=. cat-file -t " + loose), "blob\n");
  EXPECT_EQ(CountFiles(PackDir(), ".mtimes"), 1);  // a cruft pack beside the main one
}

TEST_F(MaintenanceServiceTest, PolicyPicksFullLightOrNone) {
  const MaintenancePolicy p = Configured().policy;  // 25%, 16 packs
  MaintenanceState never;
  RepoLayout small{.objects = 10, .packs = 1};
  EXPECT_EQ(ChooseLevel(never, small, p), MaintenanceLevel::Full);
  MaintenanceState done{.last_full_unix = 1, .objects_at_full = 1000};
  EXPECT_EQ(ChooseLevel(done, {.objects = 1000, .packs = 1}, p), MaintenanceLevel::None);
  EXPECT_EQ(ChooseLevel(done, {.objects = 1249, .packs = 15}, p), MaintenanceLevel::None);
  EXPECT_EQ(ChooseLevel(done, {.objects = 1250, .packs = 2}, p), MaintenanceLevel::Full);
  EXPECT_EQ(ChooseLevel(done, {.objects = 1100, .packs = 16}, p), MaintenanceLevel::Light);
  EXPECT_EQ(ChooseLevel(done, {.objects = 5000, .packs = 40}, p), MaintenanceLevel::Full);
  MaintenanceState empty_full{.last_full_unix = 1, .objects_at_full = 0};
  EXPECT_EQ(ChooseLevel(empty_full, {.objects = 0, .packs = 0}, p), MaintenanceLevel::None);

  // On a real repository: never maintained → full; then nothing; 16 packs → light;
  // 25% more objects → full.
  FastImport(repo_, 100, 1);
  EXPECT_EQ(maint_->Due(repo_).value(), MaintenanceLevel::Full);
  ASSERT_TRUE(maint_->MaintainIfDue(repo_).has_value());
  EXPECT_EQ(maint_->Due(repo_).value(), MaintenanceLevel::None);
  auto none = maint_->MaintainIfDue(repo_);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->level, MaintenanceLevel::None);
  EXPECT_TRUE(none->steps.empty());
  for (int i = 0; i < 15; ++i) FastImport(repo_, 1, 1, 100 + i);
  EXPECT_EQ(ReadRepoLayout(repo_)->packs, 16);
  EXPECT_EQ(maint_->Due(repo_).value(), MaintenanceLevel::Light);
  auto light = maint_->MaintainIfDue(repo_);
  ASSERT_TRUE(light.has_value()) << light.error().message;
  EXPECT_EQ(light->level, MaintenanceLevel::Light);
  EXPECT_EQ(maint_->Due(repo_).value(), MaintenanceLevel::None);
  FastImport(repo_, 40, 1, 115);
  EXPECT_EQ(maint_->Due(repo_).value(), MaintenanceLevel::Full);
}

TEST_F(MaintenanceServiceTest, StoppedRepackLeavesTheRepositoryAsItWas) {
  FastImport(repo_, 600, 8);
  const std::string before = ObjectFiles(repo_), refs = Refs(repo_);
  ASSERT_FALSE(fs::exists(repo_ + "/packed-refs"));
  std::stop_source stop;
  // Stop as soon as pack-refs wrote packed-refs: the repack (which takes far longer than
  // a millisecond's poll on this repository) is then starting or running, and is killed.
  // Polling for its temporary files instead let a loaded machine finish the repack first.
  std::jthread stopper([&](std::stop_token done) {
    while (!done.stop_requested() && !fs::exists(repo_ + "/packed-refs")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stop.request_stop();
  });
  auto report = maint_->Maintain(repo_, MaintenanceLevel::Full, stop.get_token());
  stopper.request_stop();
  stopper.join();
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::Unavailable);
  EXPECT_EQ(Refs(repo_), refs);
  EXPECT_EQ(ObjectFiles(repo_), before);  // no temporaries, no new pack, the old one kept
  EXPECT_FALSE(fs::exists(repo_ + "/hangar-maintenance"));
  Sh(repo_, "git --git-dir=. fsck --full --no-progress");
}

TEST_F(MaintenanceServiceTest, TimeoutIsUnavailableAndChangesNothing) {
  FastImport(repo_, 20);
  const std::string before = ObjectFiles(repo_), refs = Refs(repo_);
  MaintenanceOptions o = Configured();
  o.timeout = std::chrono::milliseconds(1);
  Make(o);
  auto report = maint_->Maintain(repo_, MaintenanceLevel::Full);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::Unavailable);
  EXPECT_EQ(ObjectFiles(repo_), before);
  EXPECT_EQ(Refs(repo_), refs);
  EXPECT_FALSE(fs::exists(repo_ + "/packed-refs.lock"));
  Sh(repo_, "git --git-dir=. fsck --full --no-progress");
}

TEST_F(MaintenanceServiceTest, CorruptRepositoryFailsAndChangesNothing) {
  // Loose objects only (a push this small is unpacked), one blob missing: git cannot pack.
  Sh(dir_.path(), R"SH(
git init -q --bare -b main c.git
git init -q -b main work && cd work
echo a > a.txt && git add a.txt && git commit -q -m one
echo b > b.txt && git add b.txt && git commit -q -m two
git push -q ../c.git main
)SH");
  const std::string repo = dir_.path() + "/c.git";
  const std::string blob = Sh(repo, "git --git-dir=. rev-parse main:b.txt");
  ASSERT_TRUE(fs::remove(repo + "/objects/" + blob.substr(0, 2) + "/" + blob.substr(2, 38)));
  const std::string before = ObjectFiles(repo), refs = Refs(repo);
  // Loose objects count too (as `git count-objects` counts them).
  EXPECT_EQ(ReadRepoLayout(repo)->objects,
            std::stoll(Sh(repo, "git --git-dir=. count-objects | cut -d' ' -f1")));
  EXPECT_EQ(ReadRepoLayout(repo)->packs, 0);
  auto report = maint_->Maintain(repo, MaintenanceLevel::Full);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::Internal);
  EXPECT_NE(report.error().message.find("repack"), std::string::npos) << report.error().message;
  EXPECT_EQ(ObjectFiles(repo), before);
  EXPECT_EQ(Refs(repo), refs);
  EXPECT_FALSE(fs::exists(repo + "/hangar-maintenance"));
}

TEST_F(MaintenanceServiceTest, SecondMaintenanceOfOneRepoIsRefused) {
  FastImport(repo_, 5);
  int fd = ::open((repo_ + "/hangar-maintenance.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);  // as another process's run would hold it
  auto report = maint_->Maintain(repo_, MaintenanceLevel::Full);
  ::close(fd);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::Conflict);
  EXPECT_TRUE(maint_->Maintain(repo_, MaintenanceLevel::Full).has_value());
}

TEST_F(MaintenanceServiceTest, MissingRepositoryIsRepoNotFound) {
  auto report = maint_->Maintain(dir_.path() + "/nope.git", MaintenanceLevel::Full);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::RepoNotFound);
}

TEST_F(MaintenanceServiceTest, PushesDuringARepackLoseNothing) {
  FastImport(repo_, 300, 8);
  Sh(dir_.path(), "git clone -q " + Quote(repo_) + " client");
  const std::string client = dir_.path() + "/client";
  std::atomic<bool> done{false};
  Result<MaintenanceReport> report = MakeError(ErrorCode::Internal, "not run");
  std::thread runner([&] {
    report = maint_->Maintain(repo_, MaintenanceLevel::Full);
    done = true;
  });
  // Push commits (on main and on new branches) until the maintenance ends, at least 3.
  int pushes = 0;
  while (!done || pushes < 3) {
    ++pushes;
    Sh(client, "echo push " + std::to_string(pushes) +
                   " > p.txt && git add p.txt && "
                   "git -c user.name=P -c user.email=p@example.com commit -q -m 'push " +
                   std::to_string(pushes) + "' && git push -q origin HEAD:main HEAD:refs/heads/p" +
                   std::to_string(pushes) + " 2>&1");
  }
  runner.join();
  ASSERT_TRUE(report.has_value()) << report.error().message;
  Sh(repo_, "git --git-dir=. fsck --full --no-progress");
  EXPECT_EQ(Sh(repo_, "git --git-dir=. rev-parse main"), Sh(client, "git rev-parse HEAD"));
  for (int i = 1; i <= pushes; ++i) {
    EXPECT_EQ(Sh(repo_, "git --git-dir=. rev-parse p" + std::to_string(i)),
              Sh(client, "git rev-parse HEAD~" + std::to_string(pushes - i)));
  }
  EXPECT_EQ(Sh(repo_, "git --git-dir=. rev-list --all --objects | sort"),
            Sh(client, "git rev-list --all --objects | sort"));
}

TEST_F(MaintenanceServiceTest, MaintainDueVisitsEveryRepoRow) {
  for (const char* name : {"a", "b"}) {
    testing::MakeRepoRow(*stores_.repos, "alice", name);
    FastImport(repos_->GitPath({RepoType::Model, "alice", name}), 10);
  }
  testing::MakeRepoRow(*stores_.repos, "alice", "gone");  // a row without a repository
  auto sweep = maint_->MaintainDue();
  ASSERT_TRUE(sweep.has_value()) << sweep.error().message;
  EXPECT_EQ(sweep->repos, 3);
  EXPECT_EQ(sweep->full, 2);
  EXPECT_EQ(sweep->failed, 0);
  auto again = maint_->MaintainDue();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->full + again->light, 0);
}

}  // namespace
}  // namespace hangar::services
