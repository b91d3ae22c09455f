// git/history (issue #4): log paging and path history, commit diffs (renames, binaries,
// root and merge commits, limits), blame, grep, archives, refs, tags and signatures, all
// against real repositories made with the git binary.

#include "git/history.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Quote;
using testing::Sh;
using testing::TempDir;

// main: c1 (root) → c2 → c3 → c4 → c5 → merge of side (c4 → s1); tags light (c2), v1 (c4).
constexpr std::string_view kHistoryScript = R"SH(
git init -q -b main work
cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
printf 'one\ntwo\nthree\n' > a.txt
mkdir dir && printf 'x1\nx2\nx3\nx4\n' > dir/x.txt
printf '\000\001\002bin' > bin.dat
git add -A && commit 1700000001 -m 'c1 root' -m 'root body'
printf 'one\nTWO\nthree\n' > a.txt && git add -A && commit 1700000002 -m 'c2 two'
git mv dir/x.txt dir/y.txt && printf '\000\003bin' > bin.dat && git add -A && commit 1700000003 -m 'c3 rename'
printf 'one\nTWO\nTHREE\n' > a.txt && printf -- '-x foo\n(a+b)* literal\n' > s.txt
git add -A && commit 1700000004 -m 'c4 three'
git tag light HEAD~2
GIT_COMMITTER_DATE="@1700000004 +0000" git tag -a v1 -m 'release one' -m 'notes'
git checkout -q -b side && printf 'side\n' > side.txt && git add -A && commit 1700000005 -m 's1 side'
git checkout -q main && printf 'ONE\nTWO\nTHREE\n' > a.txt && git add -A && commit 1700000006 -m 'c5 one'
GIT_AUTHOR_DATE="@1700000007 +0000" GIT_COMMITTER_DATE="@1700000007 +0000" git merge -q --no-ff -m 'merge side' side
cd .. && git clone -q --bare work repo.git
git -C repo.git commit-graph write --reachable --changed-paths
)SH";

// The fixture repository is built once and only read by the tests.
class HistoryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    Sh(dir_->path(), std::string(kHistoryScript));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { repo_ = dir_->path() + "/repo.git"; }
  // The commit `rev` names in the fixture.
  Oid Rev(const std::string& rev) {
    std::string hex = Sh(repo_, "git rev-parse " + Quote(rev + "^{commit}"));
    return Oid::ParseHex(hex.substr(0, 40)).value_or(Oid{});
  }
  std::vector<std::string> Subjects(const LogPage& page) {
    std::vector<std::string> out;
    for (const auto& e : page.entries) out.push_back(e.subject);
    return out;
  }
  const FileDiff* Find(const CommitDetail& d, std::string_view path) {
    for (const auto& f : d.files)
      if (f.path == path) return &f;
    return nullptr;
  }

  static TempDir* dir_;
  std::string repo_;
};
TempDir* HistoryTest::dir_ = nullptr;

TEST_F(HistoryTest, LogPagesWithHasMore) {
  auto first = Log(repo_, Rev("main"), "", 0, 3);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(Subjects(*first), (std::vector<std::string>{"merge side", "c5 one", "s1 side"}));
  EXPECT_TRUE(first->has_more);
  const LogEntry& merge = first->entries[0];
  EXPECT_EQ(merge.id, Rev("main"));
  ASSERT_EQ(merge.parents.size(), 2u);
  EXPECT_EQ(merge.parents[0], Rev("main^1"));
  EXPECT_EQ(merge.author.name, "Alice Author");
  EXPECT_EQ(merge.author.email, "alice@example.com");
  EXPECT_EQ(merge.committer.name, "Bob Committer");
  EXPECT_EQ(merge.committer.time, 1700000007);
  EXPECT_FALSE(merge.signature.has_value());

  auto last = Log(repo_, Rev("main"), "", 3, 4);
  ASSERT_TRUE(last) << last.error().message;
  EXPECT_EQ(Subjects(*last),
            (std::vector<std::string>{"c4 three", "c3 rename", "c2 two", "c1 root"}));
  EXPECT_FALSE(last->has_more);
  EXPECT_TRUE(last->entries.back().parents.empty());

  auto past = Log(repo_, Rev("main"), "", 50, 10);
  ASSERT_TRUE(past);
  EXPECT_TRUE(past->entries.empty());
  EXPECT_FALSE(past->has_more);
}

TEST_F(HistoryTest, LogOfAFileAndOfADirectory) {
  auto file = Log(repo_, Rev("main"), "a.txt", 0, 10);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(Subjects(*file), (std::vector<std::string>{"c5 one", "c4 three", "c2 two", "c1 root"}));
  auto dir = Log(repo_, Rev("main"), "dir/", 0, 10);
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(Subjects(*dir), (std::vector<std::string>{"c3 rename", "c1 root"}));
  auto none = Log(repo_, Rev("main"), "no/such", 0, 10);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->entries.empty());
  EXPECT_EQ(Log(repo_, Rev("main"), "a/../b", 0, 10).error().code, ErrorCode::BadRequest);
}

TEST_F(HistoryTest, LogOfAnUnknownCommitIsRevisionNotFound) {
  Oid missing = *Oid::ParseHex("0123456789abcdef0123456789abcdef01234567");
  auto r = Log(repo_, missing, "", 0, 10);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::RevisionNotFound) << r.error().message;
  EXPECT_EQ(Log(repo_ + "/nope", Rev("main"), "", 0, 1).error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(ListRefs(repo_ + "/nope").error().code, ErrorCode::RepoNotFound);
}

TEST_F(HistoryTest, ShowCommitDetectsRenamesAndBinaries) {
  auto d = ShowCommit(repo_, Rev("main~1~1~1"), DiffLimits{});  // c3
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->commit.subject, "c3 rename");
  ASSERT_EQ(d->files.size(), 2u);
  EXPECT_EQ(d->total_files, 2u);
  EXPECT_FALSE(d->truncated);
  const FileDiff* bin = Find(*d, "bin.dat");
  ASSERT_NE(bin, nullptr);
  EXPECT_TRUE(bin->binary);
  EXPECT_EQ(bin->change, FileDiff::Change::Modified);
  EXPECT_EQ(bin->patch, "");
  const FileDiff* moved = Find(*d, "dir/y.txt");
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->change, FileDiff::Change::Renamed);
  EXPECT_EQ(moved->old_path, "dir/x.txt");
  EXPECT_EQ(moved->additions + moved->deletions, 0u);
}

TEST_F(HistoryTest, ShowRootCommitDiffsAgainstTheEmptyTree) {
  auto d = ShowCommit(repo_, Rev("light~1"), DiffLimits{});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->message, "c1 root\n\nroot body\n");
  EXPECT_TRUE(d->commit.parents.empty());
  ASSERT_EQ(d->files.size(), 3u);
  const FileDiff* a = Find(*d, "a.txt");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->change, FileDiff::Change::Added);
  EXPECT_EQ(a->new_mode, 0100644u);
  EXPECT_EQ(a->additions, 3u);
  EXPECT_EQ(a->patch, "@@ -0,0 +1,3 @@\n+one\n+two\n+three\n");
  EXPECT_TRUE(Find(*d, "bin.dat")->binary);
}

TEST_F(HistoryTest, ShowMergeDiffsAgainstTheFirstParent) {
  auto d = ShowCommit(repo_, Rev("main"), DiffLimits{});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->commit.parents.size(), 2u);
  ASSERT_EQ(d->files.size(), 1u);
  EXPECT_EQ(d->files[0].path, "side.txt");
  EXPECT_EQ(d->files[0].change, FileDiff::Change::Added);
}

TEST_F(HistoryTest, ShowCommitHonoursTheLimits) {
  DiffLimits few;
  few.max_files = 1;
  auto d = ShowCommit(repo_, Rev("light~1"), few);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->files.size(), 1u);
  EXPECT_EQ(d->total_files, 3u);
  EXPECT_TRUE(d->truncated);

  DiffLimits small;
  small.max_file_bytes = 22;  // "@@ -0,0 +1,3 @@\n+one\n" is 21 bytes
  d = ShowCommit(repo_, Rev("light~1"), small);
  ASSERT_TRUE(d) << d.error().message;
  const FileDiff* a = Find(*d, "a.txt");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->patch, "@@ -0,0 +1,3 @@\n+one\n");
  EXPECT_TRUE(a->truncated);
  EXPECT_TRUE(d->truncated);

  DiffLimits total;
  total.max_total_bytes = 0;
  d = ShowCommit(repo_, Rev("light~1"), total);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->files.size(), 3u);
  for (const auto& f : d->files) EXPECT_EQ(f.patch, "") << f.path;
  EXPECT_TRUE(d->truncated);
}

TEST_F(HistoryTest, BlameGivesTheLastCommitOfEachLine) {
  auto b = Blame(repo_, Rev("main"), "a.txt", BlameLimits{});
  ASSERT_TRUE(b) << b.error().message;
  ASSERT_EQ(b->lines.size(), 3u);
  auto commit_of = [&](size_t i) { return b->commits[b->lines[i].commit]; };
  EXPECT_EQ(commit_of(0).summary, "c5 one");
  EXPECT_EQ(commit_of(1).summary, "c2 two");
  EXPECT_EQ(commit_of(1).id, Rev("light"));
  EXPECT_EQ(commit_of(2).summary, "c4 three");
  EXPECT_EQ(commit_of(2).author.email, "alice@example.com");
  EXPECT_EQ(commit_of(2).author.time, 1700000004);
  EXPECT_EQ(b->lines[1].text, "TWO");
  EXPECT_EQ(b->lines[2].number, 3u);
  EXPECT_EQ(b->commits.size(), 3u);
}

TEST_F(HistoryTest, BlameRefusesMissingAndLargeFiles) {
  EXPECT_EQ(Blame(repo_, Rev("main"), "nope.txt", {}).error().code, ErrorCode::EntryNotFound);
  EXPECT_EQ(Blame(repo_, Rev("main"), "", {}).error().code, ErrorCode::BadRequest);
  BlameLimits tiny;
  tiny.max_lines = 2;
  auto r = Blame(repo_, Rev("main"), "a.txt", tiny);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::PayloadTooLarge);
  EXPECT_NE(r.error().message.find("2 lines"), std::string::npos) << r.error().message;
}

TEST_F(HistoryTest, GrepFindsLinesAndNoMatchIsEmpty) {
  auto none = Grep(repo_, Rev("main"), "absent-text", {});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->matches.empty());
  EXPECT_FALSE(none->truncated);

  GrepOptions regex;
  auto two = Grep(repo_, Rev("main"), "T[WH]", regex);
  ASSERT_TRUE(two) << two.error().message;
  ASSERT_EQ(two->matches.size(), 2u);
  EXPECT_EQ(two->matches[0].path, "a.txt");
  EXPECT_EQ(two->matches[0].line, 2u);
  EXPECT_EQ(two->matches[0].text, "TWO");

  GrepOptions fixed;
  fixed.fixed_string = true;
  auto dash = Grep(repo_, Rev("main"), "-x", fixed);
  ASSERT_TRUE(dash) << dash.error().message;
  ASSERT_EQ(dash->matches.size(), 1u);
  EXPECT_EQ(dash->matches[0].path, "s.txt");
  auto special = Grep(repo_, Rev("main"), "(a+b)*", fixed);
  ASSERT_TRUE(special) << special.error().message;
  ASSERT_EQ(special->matches.size(), 1u);
  EXPECT_EQ(special->matches[0].line, 2u);

  GrepOptions icase;
  icase.ignore_case = true;
  icase.path = "a.txt";
  auto ci = Grep(repo_, Rev("main"), "one", icase);
  ASSERT_TRUE(ci) << ci.error().message;
  EXPECT_EQ(ci->matches.size(), 1u);
}

TEST_F(HistoryTest, GrepRefusesRegexesThatRepeatTooMuch) {
  // glibc copies {m,n} repetitions out: these cost minutes of CPU or crash git grep -E.
  for (std::string_view bomb : {"((.*){99}){99}", "((a*)*){30000}", "(a{200}){200}"}) {
    auto r = Grep(repo_, Rev("main"), bomb, {});
    ASSERT_FALSE(r) << bomb;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << bomb;
  }
  // Ordinary bounded repetitions, and any fixed string, still search.
  EXPECT_TRUE(Grep(repo_, Rev("main"), "T[WH]{1,3}", {}));
  GrepOptions fixed;
  fixed.fixed_string = true;
  EXPECT_TRUE(Grep(repo_, Rev("main"), "((.*){99}){99}", fixed));
}

TEST_F(HistoryTest, GrepBoundsAndBadPatterns) {
  GrepOptions few;
  few.max_matches = 2;
  few.max_line_bytes = 2;
  auto r = Grep(repo_, Rev("main"), ".", few);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->matches.size(), 2u);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->matches[0].text.size(), 2u);
  EXPECT_TRUE(r->matches[0].text_truncated);

  auto bad = Grep(repo_, Rev("main"), "(unclosed", {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::BadRequest);
  EXPECT_NE(bad.error().message.find("invalid search pattern"), std::string::npos);
  EXPECT_EQ(Grep(repo_, Rev("main"), "", {}).error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Grep(repo_, Rev("main"), "a\nb", {}).error().code, ErrorCode::BadRequest);
}

TEST_F(HistoryTest, ArchivesStreamTarGzAndZip) {
  auto tgz = Archive(repo_, Rev("main"), ArchiveFormat::TarGz, "repo-main/");
  ASSERT_TRUE(tgz) << tgz.error().message;
  auto bytes = ReadAll(**tgz, 1 << 20);
  ASSERT_TRUE(bytes) << bytes.error().message;
  TempDir out;
  std::ofstream(out.path() + "/a.tgz", std::ios::binary) << *bytes;
  std::string listing = Sh(out.path(), "tar tzf a.tgz | sort");
  EXPECT_NE(listing.find("repo-main/a.txt\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("repo-main/dir/y.txt\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("repo-main/side.txt\n"), std::string::npos) << listing;

  auto zip = Archive(repo_, Rev("main"), ArchiveFormat::Zip, "repo-main/");
  ASSERT_TRUE(zip) << zip.error().message;
  auto zbytes = ReadAll(**zip, 1 << 20);
  ASSERT_TRUE(zbytes) << zbytes.error().message;
  EXPECT_EQ(zbytes->substr(0, 2), "PK");

  EXPECT_EQ(Archive(repo_, Rev("main"), ArchiveFormat::Zip, "x").error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(Archive(repo_, Rev("main"), ArchiveFormat::Zip, "../x/").error().code,
            ErrorCode::BadRequest);
}

TEST_F(HistoryTest, ListRefsPeelsTagsAndCountsCommits) {
  auto refs = ListRefs(repo_);
  ASSERT_TRUE(refs) << refs.error().message;
  ASSERT_TRUE(DescribeRefs(repo_, *refs));
  std::vector<std::string> names;
  for (const auto& r : *refs) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"refs/heads/main", "refs/heads/side",
                                             "refs/tags/light", "refs/tags/v1"}));
  const RefInfo& light = (*refs)[2];
  EXPECT_FALSE(light.annotated);
  EXPECT_EQ(light.commit, Rev("light"));
  EXPECT_EQ(light.object, Rev("light"));
  EXPECT_EQ(light.subject, "c2 two");
  EXPECT_EQ(light.commit_time, 1700000002);
  EXPECT_FALSE(light.tagger.has_value());
  const RefInfo& v1 = (*refs)[3];
  EXPECT_TRUE(v1.annotated);
  EXPECT_NE(v1.object, v1.commit);
  EXPECT_EQ(v1.commit, Rev("v1"));
  EXPECT_EQ(v1.subject, "c4 three");
  EXPECT_EQ(v1.tag_subject, "release one");
  ASSERT_TRUE(v1.tagger.has_value());
  EXPECT_EQ(v1.tagger->email, "bob@example.com");
  EXPECT_EQ(v1.tagger->time, 1700000004);

  auto count = CountCommits(repo_, Rev("main"));
  ASSERT_TRUE(count) << count.error().message;
  EXPECT_EQ(*count, 7u);
  auto after = CountCommitsAfter(repo_, Rev("v1"), Rev("main"));
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->value_or(0), 3u);  // s1, c5, the merge
  EXPECT_EQ(CountCommitsAfter(repo_, Rev("main"), Rev("main")).value(), 0u);
  EXPECT_FALSE(CountCommitsAfter(repo_, Rev("side"), Rev("main~1")).value().has_value());
}

TEST(History, RefsVersionChangesWhenARefMoves) {
  TempDir dir;
  Sh(dir.path(),
     "git init -q --bare r.git && git init -q -b main w && cd w\n"
     "git commit -q --allow-empty -m one && git push -q ../r.git main\n");
  const std::string repo = dir.path() + "/r.git";
  auto v1 = RefsVersion(repo);
  ASSERT_TRUE(v1) << v1.error().message;
  EXPECT_EQ(RefsVersion(repo).value(), *v1);
  Sh(dir.path(), "cd w && git commit -q --allow-empty -m two && git push -q ../r.git main");
  auto v2 = RefsVersion(repo).value();
  EXPECT_NE(v2, *v1);
  Sh(dir.path(), "git -C r.git pack-refs --all");
  auto v3 = RefsVersion(repo).value();
  EXPECT_NE(v3, v2);
  Sh(dir.path(), "cd w && git push -q ../r.git main:side");
  EXPECT_NE(RefsVersion(repo).value(), v3);
  EXPECT_EQ(RefsVersion(dir.path() + "/none").error().code, ErrorCode::RepoNotFound);
}

TEST_F(HistoryTest, ShowTagReadsAnnotatedTagsOnly) {
  auto v1 = ShowTag(repo_, "v1");
  ASSERT_TRUE(v1) << v1.error().message;
  EXPECT_EQ(v1->name, "v1");
  EXPECT_EQ(v1->target, Rev("v1"));
  EXPECT_EQ(v1->target_type, "commit");
  EXPECT_EQ(v1->tagger.name, "Bob Committer");
  EXPECT_EQ(v1->message, "release one\n\nnotes\n");
  EXPECT_FALSE(v1->signature.has_value());
  auto verified = ShowTag(repo_, "v1", SignatureCheck{true, dir_->path() + "/nogpg"});
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(verified->signature->status, SignatureInfo::Status::None);

  EXPECT_EQ(ShowTag(repo_, "light").error().code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(ShowTag(repo_, "v9").error().code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(ShowTag(repo_, "v1").value().id, ListRefs(repo_).value()[3].object);
  EXPECT_EQ(ShowTag(repo_, "-v").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(ShowTag(repo_, "a..b").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(ShowTag(repo_, "v*").error().code, ErrorCode::BadRequest);
}

// Signed objects: a throwaway ed25519 key in a temporary GNUPGHOME, made once.
class SignatureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int rc = 0;
    dir_ = new TempDir;
    Sh(dir_->path(), "command -v gpg", &rc);
    if (rc != 0) return;
    Sh(dir_->path(),
       "mkdir -m 700 keys empty && export GNUPGHOME=\"$PWD/keys\"\n"
       "gpg --batch --quiet --passphrase '' --quick-gen-key 'Test <t@example.com>' ed25519 "
       "sign never 2>/dev/null\n"
       "git init -q -b main work && cd work\n"
       "sign='-c user.signingkey=t@example.com -c gpg.program=gpg'\n"
       "echo a > a.txt && git add a.txt && git commit -q -m unsigned\n"
       "echo b > b.txt && git add b.txt && git $sign commit -q -S -m signed\n"
       "git $sign tag -s -m 'signed tag' v1\n"
       "git $sign tag -a -m 'plain tag' v0 HEAD~1\n"
       "cd .. && git clone -q --bare work repo.git\n"
       // A copy of the signed commit with another message and the same gpgsig header.
       "git -C repo.git cat-file commit main | sed 's/^signed$/tampered/' |"
       " git -C repo.git hash-object -t commit -w --stdin > tampered\n"
       "gpgconf --kill gpg-agent\n");
    have_gpg_ = true;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!have_gpg_) GTEST_SKIP() << "gpg is not installed";
    keys_ = dir_->path() + "/keys";
    empty_ = dir_->path() + "/empty";
    repo_ = dir_->path() + "/repo.git";
    signed_ = Rev("main");
    unsigned_ = Rev("main~1");
    tampered_ = *Oid::ParseHex(Sh(dir_->path(), "cat tampered").substr(0, 40));
  }
  Oid Rev(const std::string& rev) {
    return *Oid::ParseHex(Sh(repo_, "git rev-parse " + Quote(rev)).substr(0, 40));
  }

  static TempDir* dir_;
  static bool have_gpg_;
  std::string keys_, empty_, repo_;
  Oid signed_, unsigned_, tampered_;
};
TempDir* SignatureTest::dir_ = nullptr;
bool SignatureTest::have_gpg_ = false;

TEST_F(SignatureTest, CommitSignaturesAgainstTheKeyring) {
  auto known = VerifyCommits(repo_, std::vector<Oid>{signed_, unsigned_, tampered_}, keys_);
  ASSERT_TRUE(known) << known.error().message;
  ASSERT_EQ(known->size(), 3u);
  EXPECT_EQ((*known)[0].status, SignatureInfo::Status::Good);
  EXPECT_EQ((*known)[0].signer, "Test <t@example.com>");
  EXPECT_EQ((*known)[0].key_id.size(), 16u);
  EXPECT_EQ((*known)[1].status, SignatureInfo::Status::None);
  EXPECT_EQ((*known)[2].status, SignatureInfo::Status::Bad);

  auto unknown = VerifyCommits(repo_, std::vector<Oid>{signed_}, empty_);
  ASSERT_TRUE(unknown) << unknown.error().message;
  EXPECT_EQ((*unknown)[0].status, SignatureInfo::Status::UnknownKey);
  EXPECT_EQ((*unknown)[0].key_id, (*known)[0].key_id);
}

TEST_F(SignatureTest, LogAndShowVerifyOnlyWhenAsked) {
  auto plain = Log(repo_, signed_, "", 0, 10);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->entries[0].signature.has_value());
  auto log = Log(repo_, signed_, "", 0, 10, SignatureCheck{true, keys_});
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_EQ(log->entries.size(), 2u);
  EXPECT_EQ(log->entries[0].signature->status, SignatureInfo::Status::Good);
  EXPECT_EQ(log->entries[1].signature->status, SignatureInfo::Status::None);

  auto show = ShowCommit(repo_, tampered_, DiffLimits{}, SignatureCheck{true, keys_});
  ASSERT_TRUE(show) << show.error().message;
  EXPECT_EQ(show->commit.signature->status, SignatureInfo::Status::Bad);
  EXPECT_EQ(show->commit.subject, "tampered");
  ASSERT_EQ(show->files.size(), 1u);
}

TEST_F(SignatureTest, TagSignatures) {
  auto good = ShowTag(repo_, "v1", SignatureCheck{true, keys_});
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->message, "signed tag\n");
  EXPECT_EQ(good->signature->status, SignatureInfo::Status::Good);
  EXPECT_EQ(good->signature->signer, "Test <t@example.com>");
  auto unknown = ShowTag(repo_, "v1", SignatureCheck{true, empty_});
  ASSERT_TRUE(unknown) << unknown.error().message;
  EXPECT_EQ(unknown->signature->status, SignatureInfo::Status::UnknownKey);
  auto plain = ShowTag(repo_, "v0", SignatureCheck{true, keys_});
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->signature->status, SignatureInfo::Status::None);
  auto refs = ListRefs(repo_);
  ASSERT_TRUE(refs);
  EXPECT_EQ(refs->size(), 3u);
}

}  // namespace
}  // namespace hangar::git
