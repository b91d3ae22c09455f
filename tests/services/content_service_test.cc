// ContentService's history side (issue #4, merged in issue #14): revision resolution, the
// caches of immutable results, and the history calls end to end on a repo made by
// RepoService, opened through it as a web page does.

#include "services/content/content_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "git/test_repo.h"
#include "services/auth/account_service.h"
#include "services/repo/repo_service.h"
#include "storage/memory/memory_blob_store.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;
using git::testing::Quote;
using git::testing::Sh;

class ContentServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = fs::path(::testing::TempDir()) / "hangar-content-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = db::OpenSqliteStores(dir_ / "hangar.db");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
    access_ = std::make_unique<AccessPolicy>(*stores_.users);
    accounts_ = std::make_unique<AccountService>(*stores_.users, *access_);
    repos_ = std::make_unique<RepoService>(*stores_.repos, *access_, reader_, dir_ / "repos");
    alice_ = testing::MakeUser(*accounts_, "alice");
    ASSERT_TRUE(repos_->Create(alice_, public_, false).has_value());
    ASSERT_TRUE(repos_->Create(alice_, private_, true).has_value());
    // Two more commits on main: a.txt (two lines, each from its own commit), dir/b.txt.
    Sh(dir_.string(),
       "git clone -q " + Quote(repos_->GitPath(public_)) +
           " work && cd work\n"
           "printf 'one\\n' > a.txt && git add a.txt && git commit -q -m 'add a'\n"
           "printf 'one\\ntwo\\n' > a.txt && mkdir dir && echo b > dir/b.txt\n"
           "git add -A && git commit -q -m 'two and b' && git push -q origin HEAD:main\n"
           "git tag -a v1 -m 'version one' HEAD~1 && git push -q origin v1\n");
    options_.gnupg_home = (dir_ / "gpg").string();
    options_.cache_entries = 100;
    content_ = std::make_unique<ContentService>(reader_, blobs_, *stores_.lfs, options_);
  }
  void TearDown() override {
    content_.reset();
    repos_.reset();
    accounts_.reset();
    access_.reset();
    stores_ = db::Stores{};
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // `id` opened for reading by `who`, as every caller of ContentService does first.
  RepoHandle Open(const RepoId& id, const Principal& who = Principal::Anonymous()) {
    auto repo = repos_->Open(who, id, Access::Read);
    EXPECT_TRUE(repo) << repo.error().message;
    return repo ? *repo : RepoHandle{};
  }
  RepoHandle Public() { return Open(public_); }
  std::string Head() { return Sh(repos_->GitPath(public_), "git rev-parse main").substr(0, 40); }

  fs::path dir_;
  db::Stores stores_;
  git::RepoReader reader_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<RepoService> repos_;
  storage::MemoryBlobStore blobs_;
  ContentOptions options_;
  std::unique_ptr<ContentService> content_;
  Principal alice_;
  const RepoId public_{RepoType::Model, "alice", "open"};
  const RepoId private_{RepoType::Model, "alice", "secret"};
};

TEST_F(ContentServiceTest, PrivateRepoIsOpenedOnlyByThoseWhoMayRead) {
  auto anon = repos_->Open(Principal::Anonymous(), private_, Access::Read);
  ASSERT_FALSE(anon);
  EXPECT_EQ(anon.error().code, ErrorCode::RepoNotFound);
  auto owner = content_->History(Open(private_, alice_), "main", "", 0, 10, false);
  ASSERT_TRUE(owner) << owner.error().message;
  EXPECT_EQ(owner->value.entries.size(), 1u);
}

TEST_F(ContentServiceTest, UnknownRevisionNamesTheRevisionAndRepo) {
  auto r = content_->ShowCommit(Public(), "nope");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(r.error().message, "revision 'nope' not found in alice/open");
  EXPECT_EQ(content_->Tag(Public(), "v9").error().code, ErrorCode::RevisionNotFound);
}

TEST_F(ContentServiceTest, RevisionsResolveToTheSameCachedCommit) {
  auto by_branch = content_->ShowCommit(Public(), "main");
  ASSERT_TRUE(by_branch) << by_branch.error().message;
  EXPECT_EQ(by_branch->commit.Hex(), Head());
  EXPECT_EQ(by_branch->value->commit.subject, "two and b");
  EXPECT_EQ(by_branch->value->files.size(), 2u);
  ASSERT_TRUE(by_branch->value->commit.signature.has_value());
  EXPECT_EQ(by_branch->value->commit.signature->status, git::SignatureInfo::Status::None);
  auto by_sha = content_->ShowCommit(Public(), Head().substr(0, 10));
  ASSERT_TRUE(by_sha) << by_sha.error().message;
  EXPECT_EQ(by_sha->value.get(), by_branch->value.get());  // the cached object itself

  auto tag = content_->ShowCommit(Public(), "v1");
  ASSERT_TRUE(tag) << tag.error().message;
  EXPECT_EQ(tag->value->commit.subject, "add a");
}

TEST_F(ContentServiceTest, CachesAreBoundedInBytes) {
  ContentOptions off = options_;
  off.commit_cache_bytes = 0;
  ContentService uncached(reader_, blobs_, *stores_.lfs, off);
  auto a = uncached.ShowCommit(Public(), "main");
  auto b = uncached.ShowCommit(Public(), "main");
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->value.get(), b->value.get());

  ContentOptions one = options_;
  one.commit_cache_bytes = 700;  // room for one of these small commit pages (~500 B), not two
  ContentService small(reader_, blobs_, *stores_.lfs, one);
  auto first = small.ShowCommit(Public(), "main");
  ASSERT_TRUE(first);
  EXPECT_EQ(small.ShowCommit(Public(), "main")->value.get(), first->value.get());
  ASSERT_TRUE(small.ShowCommit(Public(), "v1"));  // evicts main's
  EXPECT_NE(small.ShowCommit(Public(), "main")->value.get(), first->value.get());
}

TEST_F(ContentServiceTest, LogPagesAndCountsFollowNewCommits) {
  auto log = content_->History(Public(), "main", "a.txt", 0, 1, true);
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_EQ(log->value.entries.size(), 1u);
  EXPECT_TRUE(log->value.has_more);
  EXPECT_EQ(log->value.entries[0].signature->status, git::SignatureInfo::Status::None);
  auto again = content_->History(Public(), "main", "a.txt", 0, 1, false);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->value.entries[0].id, log->value.entries[0].id);
  EXPECT_FALSE(again->value.entries[0].signature.has_value());

  const Oid head = *content_->ResolveRevision(Public(), "main");
  auto count = content_->CountCommits(Public(), head);
  ASSERT_TRUE(count) << count.error().message;
  EXPECT_EQ(*count, 3u);
  Sh(dir_.string(),
     "cd work && git commit -q --allow-empty -m more && git push -q origin HEAD:main");
  const Oid next = *content_->ResolveRevision(Public(), "main");
  EXPECT_NE(next, head);
  auto after = content_->CountCommits(Public(), next);  // counts only the new commit
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, 4u);
  EXPECT_EQ(content_->CountCommits(Public(), head).value(), 3u);
}

TEST_F(ContentServiceTest, BlameChecksTheEntryFirstAndIsCached) {
  auto blame = content_->Blame(Public(), "main", "a.txt");
  ASSERT_TRUE(blame) << blame.error().message;
  ASSERT_EQ(blame->value->lines.size(), 2u);
  EXPECT_EQ(blame->value->commits[blame->value->lines[0].commit].summary, "add a");
  EXPECT_EQ(blame->value->commits[blame->value->lines[1].commit].summary, "two and b");
  auto again = content_->Blame(Public(), "main", "a.txt");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->value.get(), blame->value.get());

  EXPECT_EQ(content_->Blame(Public(), "main", "dir").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(content_->Blame(Public(), "main", "nope").error().code, ErrorCode::EntryNotFound);
  EXPECT_EQ(content_->Blame(Public(), "main", "../x").error().code, ErrorCode::BadRequest);

  // A binary file (a NUL in its first 8,000 bytes) is refused before git blames it.
  Sh(dir_.string(),
     "cd work && printf 'a\\000b\\n' > bin.dat && git add bin.dat && git commit -q -m bin && "
     "git push -q origin HEAD:main");
  auto binary = content_->Blame(Public(), "main", "bin.dat");
  ASSERT_FALSE(binary);
  EXPECT_EQ(binary.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(binary.error().message, "'bin.dat' is a binary file; blame shows text files only");
}

TEST_F(ContentServiceTest, GrepArchiveRefsAndTags) {
  git::GrepOptions grep;
  grep.max_matches = 100000;  // lowered to max_grep_matches
  auto found = content_->Grep(Public(), "main", "two", grep);
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found->value.matches.size(), 1u);
  EXPECT_EQ(found->value.matches[0].path, "a.txt");

  auto archive = content_->Archive(Public(), "v1", git::ArchiveFormat::Zip);
  ASSERT_TRUE(archive) << archive.error().message;
  EXPECT_EQ(archive->filename, "open-v1.zip");
  EXPECT_EQ(archive->content_type, "application/zip");
  auto bytes = ReadAll(*archive->body, 1 << 20);
  ASSERT_TRUE(bytes) << bytes.error().message;
  EXPECT_EQ(bytes->substr(0, 2), "PK");

  auto tag = content_->Tag(Public(), "v1");
  ASSERT_TRUE(tag) << tag.error().message;
  EXPECT_EQ((*tag)->message, "version one\n");
  EXPECT_EQ((*tag)->signature->status, git::SignatureInfo::Status::None);
}

TEST_F(ContentServiceTest, RefsAreKeptUntilARefMoves) {
  auto refs = content_->RefInfos(Public());
  ASSERT_TRUE(refs) << refs.error().message;
  ASSERT_EQ((*refs)->size(), 2u);
  EXPECT_EQ((**refs)[0].name, "refs/heads/main");
  EXPECT_EQ((**refs)[1].name, "refs/tags/v1");
  auto again = content_->RefInfos(Public());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->get(), refs->get());

  Sh(dir_.string(), "cd work && git push -q origin HEAD:refs/heads/other");
  auto moved = content_->RefInfos(Public());
  ASSERT_TRUE(moved);
  EXPECT_EQ((*moved)->size(), 3u);
}

TEST_F(ContentServiceTest, DescribedRefsDescribeOnlyTheirPage) {
  auto all = content_->DescribedRefs(Public(), 0, 10);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->total, 2u);
  ASSERT_EQ(all->refs.size(), 2u);
  EXPECT_EQ(all->refs[1].name, "refs/tags/v1");
  EXPECT_TRUE(all->refs[1].annotated);
  EXPECT_FALSE(all->refs[1].subject.empty());
  auto second = content_->DescribedRefs(Public(), 1, 1);
  ASSERT_TRUE(second) << second.error().message;
  ASSERT_EQ(second->refs.size(), 1u);
  EXPECT_EQ(second->refs[0].name, "refs/tags/v1");
  EXPECT_EQ(second->refs[0].commit, all->refs[1].commit);
  auto past = content_->DescribedRefs(Public(), 5, 10);
  ASSERT_TRUE(past);
  EXPECT_TRUE(past->refs.empty());
  EXPECT_EQ(past->total, 2u);
}

}  // namespace
}  // namespace hangar::services
