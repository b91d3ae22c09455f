// DiscussionService (issue 19 §2, docs/discussions.md): the rules of discussions and pull
// requests — titles and comments, who may write, change and merge, numbers shared with
// refs/pr/<n>, commits recorded from pushes, merges (fast-forward, merge commit, conflict)
// and the create_pr path — on a real repo made by RepoService and a SQLite database.

#include "services/discussion/discussion_service.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fixtures.h"
#include "git/ref_writer.h"
#include "service_test.h"
#include "storage/memory/memory_blob_store.h"

namespace hangar::services {
namespace {

using db::DiscussionEventKind;
using db::DiscussionStatus;
using git::testing::Quote;
using git::testing::Sh;

// `n` copies of `s`.
std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

class DiscussionTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    ContentOptions options;
    options.cache_entries = 100;
    content_ = std::make_unique<ContentService>(reader_, blobs_, *stores_.lfs, options);
    discussions_ = std::make_unique<DiscussionService>(*repos_, *content_, *stores_.discussions);
    // As the app wires it (cli/app.cc): pushes reach the pull requests.
    repos_->AddPushListener(
        [this](const RepoHandle& repo, const std::string&) { discussions_->AfterPush(repo); });
    ann_ = testing::MakeUser(*accounts_, "ann");  // owns the repo: a writer
    bob_ = testing::MakeUser(*accounts_, "bob");  // may read it only
    cat_ = testing::MakeUser(*accounts_, "cat");  // may read it only
    auto made = repos_->Create(ann_, id_, false);
    ASSERT_TRUE(made.has_value()) << made.error().message;
    git_ = repos_->GitPath(id_);
  }

  RepoHandle Handle() {
    auto repo = repos_->Open(ann_, id_, Access::Write);
    EXPECT_TRUE(repo.has_value()) << repo.error().message;
    return repo ? *repo : RepoHandle{};
  }
  // The commit `ref` names, or "" when there is no such ref.
  std::string Ref(const std::string& ref) {
    int code = 0;
    std::string out = Sh(git_, "git rev-parse -q --verify " + Quote(ref + "^{commit}"), &code);
    return code == 0 ? out.substr(0, 40) : "";
  }
  // Commits `file` = `content` with `subject` on top of `from` and pushes it to `ref` (as a
  // client's git push would; no listener is told). Returns the commit.
  Oid Push(const std::string& from, const std::string& ref, const std::string& file,
           const std::string& content, const std::string& subject) {
    std::string out = Sh(dir_.path(),
                         "rm -rf w && git init -q w && cd w\n"
                         "git fetch -q " +
                             Quote(git_) + " " + Quote(from) +
                             " && git checkout -q FETCH_HEAD\n"
                             "printf '%s' " +
                             Quote(content) + " > " + Quote(file) +
                             "\n"
                             "git add -A && git commit -q -m " +
                             Quote(subject) + "\ngit push -q " + Quote(git_) +
                             " HEAD:" + Quote(ref) + "\ngit rev-parse HEAD\n");
    return Oid::ParseHex(out.substr(0, 40)).value_or(Oid{});
  }
  Result<int> Open(const Principal& who, const std::string& title, bool pr = false,
                   const std::string& description = "") {
    return discussions_->Create(who, id_, NewDiscussion{title, description, pr});
  }
  DiscussionDetails Details(int num) {
    auto d = discussions_->Details(ann_, id_, num, false);
    EXPECT_TRUE(d.has_value()) << d.error().message;
    return d ? std::move(*d) : DiscussionDetails{};
  }
  int64_t Count() {
    auto page = discussions_->List(ann_, id_, {}, 0);
    EXPECT_TRUE(page.has_value()) << page.error().message;
    return page ? page->count : -1;
  }
  static std::vector<DiscussionEventKind> Kinds(const DiscussionDetails& d) {
    std::vector<DiscussionEventKind> out;
    for (const auto& e : d.events) out.push_back(e.record.kind);
    return out;
  }
  // A pull request with one commit changing `file`, recorded by a push: open.
  int PullRequestWith(const std::string& file, const std::string& content,
                      const std::string& subject) {
    auto n = Open(ann_, "pr " + subject, /*pr=*/true);
    EXPECT_TRUE(n.has_value()) << n.error().message;
    if (!n) return 0;
    const std::string ref = "refs/pr/" + std::to_string(*n);
    Push(ref, ref, file, content, subject);
    repos_->AfterPush(Handle());
    EXPECT_EQ(Details(*n).discussion.status, DiscussionStatus::Open);
    return *n;
  }

  const RepoId id_{RepoType::Model, "ann", "m"};
  storage::MemoryBlobStore blobs_;
  std::unique_ptr<ContentService> content_;
  std::unique_ptr<DiscussionService> discussions_;
  Principal ann_, bob_, cat_;
  std::string git_;
};

TEST_F(DiscussionTest, TitlesAreCheckedAndTrimmed) {
  EXPECT_EQ(Open(bob_, "").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Open(bob_, "  \t ").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Open(bob_, Repeat("a", 201)).error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Open(bob_, Repeat("\xC3\xA9", 201)).error().code, ErrorCode::BadRequest);
  auto ctrl = Open(bob_, "bad\x01title");
  ASSERT_FALSE(ctrl);
  EXPECT_EQ(ctrl.error().code, ErrorCode::BadRequest);
  EXPECT_NE(ctrl.error().message.find("control character"), std::string::npos)
      << ctrl.error().message;
  EXPECT_EQ(Open(bob_, "two\nlines").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Open(bob_, "tab\there").error().code, ErrorCode::BadRequest);
  auto bad_utf8 = Open(bob_, "caf\xC3");
  ASSERT_FALSE(bad_utf8);
  EXPECT_EQ(bad_utf8.error().code, ErrorCode::BadRequest);
  EXPECT_NE(bad_utf8.error().message.find("UTF-8"), std::string::npos) << bad_utf8.error().message;
  EXPECT_EQ(Open(bob_, "overlong \xC0\xAF").error().code, ErrorCode::BadRequest);
  // Titles that read as another, or as nothing.
  for (const char* spoof : {"abc\xE2\x80\xAEtxt.exe",
                            "a\xE2\x80\xA8"
                            "b",
                            "a\xC2\x85"
                            "b",
                            "\xE2\x80\x8B\xE2\x80\x8B", "\xC2\xA0", "\xEF\xBB\xBF"}) {
    auto r = Open(bob_, spoof);
    ASSERT_FALSE(r.has_value()) << "accepted: " << spoof;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << spoof;
  }
  EXPECT_EQ(Count(), 0) << "nothing refused was stored";

  // 200 code points pass however many bytes they take.
  const std::string two_byte = Repeat("\xC3\xA9", 200), four_byte = Repeat("\xF0\x9F\x98\x80", 200);
  auto a = Open(bob_, two_byte);
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(Details(*a).discussion.title, two_byte);
  auto b = Open(bob_, four_byte);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(Details(*b).discussion.title, four_byte);
  auto c = Open(bob_, "  padded\t");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(Details(*c).discussion.title, "padded");
  EXPECT_EQ(Details(*c).discussion.author_name, "bob");
}

TEST_F(DiscussionTest, CommentsTakeUpTo64KiB) {
  auto n = Open(bob_, "sizes");
  ASSERT_TRUE(n.has_value()) << n.error().message;
  auto full = discussions_->Comment(bob_, id_, *n, std::string(65536, 'x'));
  ASSERT_TRUE(full.has_value()) << full.error().message;
  EXPECT_EQ(full->body.size(), 65536u);
  EXPECT_EQ(full->kind, DiscussionEventKind::Comment);
  EXPECT_EQ(full->author_name, "bob");
  EXPECT_EQ(discussions_->Comment(bob_, id_, *n, std::string(65537, 'x')).error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(discussions_->Comment(bob_, id_, *n, " \t ").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(discussions_->Comment(bob_, id_, *n, "bell\x07").error().code, ErrorCode::BadRequest);
  auto lines = discussions_->Comment(bob_, id_, *n, "line one\r\n\tline two\n");
  EXPECT_TRUE(lines.has_value()) << "line breaks and tabs pass in comments";
  EXPECT_EQ(discussions_->Comment(bob_, id_, 99, "hi").error().code, ErrorCode::NotFound);
  EXPECT_EQ(Details(*n).discussion.comments, 2);

  EXPECT_EQ(Open(bob_, "long description", false, std::string(65537, 'y')).error().code,
            ErrorCode::BadRequest);
  auto described = Open(bob_, "with description", false, std::string(65536, 'y'));
  ASSERT_TRUE(described.has_value()) << described.error().message;
  auto d = Details(*described);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].record.body.size(), 65536u);
}

TEST_F(DiscussionTest, OnlySignedInWritersWithAWriteCredentialTakePart) {
  auto n = Open(bob_, "topic");
  ASSERT_TRUE(n.has_value()) << n.error().message;
  Principal read_token = bob_;
  read_token.role = TokenRole::Read;
  read_token.token_name = "ro";
  Principal key;
  key.anonymous = false;
  key.deploy_key_id = 4;
  key.repo_scope = Handle().record.id;
  key.role = TokenRole::Write;
  key.name = "deploy";

  EXPECT_EQ(Open(Principal::Anonymous(), "t").error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(Open(read_token, "t").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(Open(key, "t").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(Open(key, "t", /*pr=*/true).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(discussions_->Comment(Principal::Anonymous(), id_, *n, "hi").error().code,
            ErrorCode::Unauthorized);
  EXPECT_EQ(discussions_->Comment(read_token, id_, *n, "hi").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(discussions_->Comment(key, id_, *n, "hi").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(discussions_->ChangeStatus(read_token, id_, *n, "closed", "").error().code,
            ErrorCode::Forbidden);
  EXPECT_EQ(Count(), 1);
  EXPECT_TRUE(Details(*n).events.empty());

  auto seen = discussions_->Details(read_token, id_, *n, false);
  ASSERT_TRUE(seen.has_value()) << seen.error().message;
  EXPECT_FALSE(seen->can_comment);
  EXPECT_FALSE(seen->can_change) << "its author, but with a read token";
  EXPECT_TRUE(discussions_->Details(bob_, id_, *n, false)->can_change);
  EXPECT_FALSE(discussions_->Details(cat_, id_, *n, false)->can_change);
}

TEST_F(DiscussionTest, DiscussionsAndPullRequestsShareNumbersPastExistingPullRequestRefs) {
  const std::string main = Ref("refs/heads/main");
  ASSERT_EQ(main.size(), 40u);
  EXPECT_EQ(Open(bob_, "first").value(), 1);
  EXPECT_EQ(Ref("refs/pr/1"), "") << "a plain discussion makes no ref";
  EXPECT_EQ(Open(ann_, "second", /*pr=*/true).value(), 2);
  EXPECT_EQ(Ref("refs/pr/2"), main) << "a new pull request starts at the default branch";
  auto pr = Details(2).discussion;
  EXPECT_TRUE(pr.pull_request);
  EXPECT_EQ(pr.status, DiscussionStatus::Draft);
  EXPECT_EQ(pr.base_ref, "refs/heads/main");
  EXPECT_EQ(pr.head_oid, main);

  // A refs/pr/<n> made outside the service (e.g. before discussions existed).
  auto made = git::CreatePullRequestRef(git_, Oid::ParseHex(main).value(), 7);
  ASSERT_TRUE(made.has_value()) << made.error().message;
  ASSERT_EQ(*made, 7);
  EXPECT_EQ(Open(bob_, "third").value(), 8);
  EXPECT_EQ(Open(ann_, "fourth", /*pr=*/true).value(), 9);
  EXPECT_EQ(Ref("refs/pr/9"), main);
  EXPECT_EQ(Ref("refs/pr/8"), "");
  EXPECT_EQ(Open(bob_, "fifth").value(), 10);
  // A reader may open a discussion, not a pull request (only writers commit to it).
  EXPECT_EQ(Open(bob_, "bob's pr", /*pr=*/true).error().code, ErrorCode::Forbidden);
  // refs/pr/<n> past the largest number, or with leading zeros, are not counted; at the
  // largest, numbers run out (Conflict) rather than overflow.
  ASSERT_EQ(git::CreatePullRequestRef(git_, Oid::ParseHex(main).value(), 999'999'999).value(),
            999'999'999);
  EXPECT_EQ(Open(bob_, "sixth").error().code, ErrorCode::Conflict);
  EXPECT_EQ(Open(ann_, "seventh", /*pr=*/true).error().code, ErrorCode::Conflict);
  EXPECT_EQ(Count(), 5);
}

TEST_F(DiscussionTest, ADraftOpensWhenCommitsReachItsRef) {
  auto n = Open(ann_, "add weights", /*pr=*/true);
  ASSERT_TRUE(n.has_value()) << n.error().message;
  const std::string ref = "refs/pr/" + std::to_string(*n);
  // Nothing pushed yet: a push elsewhere records nothing.
  repos_->AfterPush(Handle());
  EXPECT_EQ(Details(*n).discussion.status, DiscussionStatus::Draft);
  EXPECT_TRUE(Details(*n).events.empty());

  const Oid c1 = Push(ref, ref, "a.txt", "a\n", "Add a");
  const Oid c2 = Push(ref, ref, "b.txt", "b\n", "Add b");
  repos_->AfterPush(Handle());
  auto d = Details(*n);
  EXPECT_EQ(d.discussion.status, DiscussionStatus::Open);
  EXPECT_EQ(d.discussion.head_oid, c2.Hex());
  ASSERT_EQ(d.events.size(), 2u);
  EXPECT_EQ(d.events[0].record.kind, DiscussionEventKind::Commit);
  EXPECT_EQ(d.events[0].record.body, "Add a");
  EXPECT_EQ(d.events[0].record.detail, c1.Hex());
  EXPECT_EQ(d.events[0].record.author_name, "Alice Author");
  EXPECT_EQ(d.events[1].record.body, "Add b");
  EXPECT_EQ(d.events[1].record.detail, c2.Hex());
  EXPECT_TRUE(d.mergeable);
  EXPECT_TRUE(d.conflicts.empty());

  // Another push records only the new commit; one with nothing new records nothing.
  const Oid c3 = Push(ref, ref, "c.txt", "c\n", "Add c");
  repos_->AfterPush(Handle());
  repos_->AfterPush(Handle());
  d = Details(*n);
  ASSERT_EQ(d.events.size(), 3u);
  EXPECT_EQ(d.events[2].record.body, "Add c");
  EXPECT_EQ(d.events[2].record.detail, c3.Hex());
  EXPECT_EQ(d.discussion.head_oid, c3.Hex());
}

TEST_F(DiscussionTest, StatusChangesByItsAuthorOrAWriter) {
  auto n = Open(bob_, "question");
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(discussions_->ChangeStatus(cat_, id_, *n, "closed", "").error().code,
            ErrorCode::Forbidden);
  EXPECT_EQ(Details(*n).discussion.status, DiscussionStatus::Open);

  auto closed = discussions_->ChangeStatus(bob_, id_, *n, "closed", "answered, thanks");
  ASSERT_TRUE(closed.has_value()) << closed.error().message;
  EXPECT_EQ(closed->kind, DiscussionEventKind::StatusChange);
  EXPECT_EQ(closed->body, "closed");
  auto d = Details(*n);
  EXPECT_EQ(d.discussion.status, DiscussionStatus::Closed);
  EXPECT_EQ(Kinds(d),
            (std::vector{DiscussionEventKind::Comment, DiscussionEventKind::StatusChange}));
  EXPECT_EQ(d.events[0].record.body, "answered, thanks");

  auto again = discussions_->ChangeStatus(bob_, id_, *n, "closed", "");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Details(*n).events.size(), 2u);
  for (const char* status : {"merged", "draft", "bogus", ""}) {
    EXPECT_EQ(discussions_->ChangeStatus(ann_, id_, *n, status, "").error().code,
              ErrorCode::BadRequest)
        << status;
  }

  // ann writes to the repo: she may reopen what bob wrote.
  auto reopened = discussions_->ChangeStatus(ann_, id_, *n, "open", "");
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  EXPECT_EQ(reopened->author_name, "ann");
  EXPECT_EQ(Details(*n).discussion.status, DiscussionStatus::Open);
  EXPECT_EQ(discussions_->ChangeStatus(bob_, id_, 42, "closed", "").error().code,
            ErrorCode::NotFound);
}

TEST_F(DiscussionTest, RenameRecordsTheOldAndNewTitles) {
  auto n = Open(bob_, "old title");
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(discussions_->Rename(cat_, id_, *n, "cat's title").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(discussions_->Rename(bob_, id_, *n, "").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(discussions_->Rename(bob_, id_, *n, Repeat("z", 201)).error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(Details(*n).discussion.title, "old title");

  auto renamed = discussions_->Rename(bob_, id_, *n, " new title ");
  ASSERT_TRUE(renamed.has_value()) << renamed.error().message;
  EXPECT_EQ(renamed->kind, DiscussionEventKind::TitleChange);
  EXPECT_EQ(renamed->body, "new title");
  EXPECT_EQ(renamed->detail, "old title");
  EXPECT_EQ(Details(*n).discussion.title, "new title");

  auto by_writer = discussions_->Rename(ann_, id_, *n, "ann's title");
  ASSERT_TRUE(by_writer.has_value()) << by_writer.error().message;
  EXPECT_EQ(by_writer->detail, "new title");
  EXPECT_EQ(Details(*n).discussion.title, "ann's title");
}

TEST_F(DiscussionTest, OnlyItsAuthorEditsACommentAndVersionsAreNewestFirst) {
  auto n = Open(bob_, "edits", false, "v1");
  ASSERT_TRUE(n.has_value()) << n.error().message;
  auto first = Details(*n);
  ASSERT_EQ(first.events.size(), 1u);
  const int64_t comment = first.events[0].record.id;
  EXPECT_FALSE(first.events[0].record.edited);

  EXPECT_EQ(discussions_->EditComment(ann_, id_, *n, comment, "ann's words").error().code,
            ErrorCode::Forbidden)
      << "a writer may hide a comment, not put words in it";
  EXPECT_EQ(discussions_->EditComment(bob_, id_, *n, comment, "").error().code,
            ErrorCode::BadRequest);
  ASSERT_TRUE(discussions_->EditComment(bob_, id_, *n, comment, "v2").has_value());
  auto edited = discussions_->EditComment(bob_, id_, *n, comment, "v3");
  ASSERT_TRUE(edited.has_value()) << edited.error().message;
  EXPECT_EQ(edited->record.body, "v3");
  EXPECT_TRUE(edited->record.edited);
  ASSERT_EQ(edited->versions.size(), 3u);
  EXPECT_EQ(edited->versions[0].body, "v3");
  EXPECT_EQ(edited->versions[1].body, "v2");
  EXPECT_EQ(edited->versions[2].body, "v1");

  auto d = Details(*n);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].record.body, "v3");
  ASSERT_EQ(d.events[0].versions.size(), 3u);
  EXPECT_EQ(d.events[0].versions[0].body, "v3");

  // Only comments are edited, and only in their own discussion.
  auto closed = discussions_->ChangeStatus(bob_, id_, *n, "closed", "");
  ASSERT_TRUE(closed.has_value()) << closed.error().message;
  EXPECT_EQ(discussions_->EditComment(bob_, id_, *n, closed->id, "x").error().code,
            ErrorCode::NotFound);
  auto other = Open(bob_, "other");
  ASSERT_TRUE(other.has_value()) << other.error().message;
  EXPECT_EQ(discussions_->EditComment(bob_, id_, *other, comment, "x").error().code,
            ErrorCode::NotFound);
}

TEST_F(DiscussionTest, AWriterHidesACommentAndItsTextIsGone) {
  auto n = Open(bob_, "hide", false, "rude words");
  ASSERT_TRUE(n.has_value()) << n.error().message;
  const int64_t comment = Details(*n).events.at(0).record.id;
  ASSERT_TRUE(discussions_->EditComment(bob_, id_, *n, comment, "ruder words").has_value());

  EXPECT_EQ(discussions_->HideComment(cat_, id_, *n, comment).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(Details(*n).events.at(0).record.body, "ruder words");

  auto hidden = discussions_->HideComment(ann_, id_, *n, comment);
  ASSERT_TRUE(hidden.has_value()) << hidden.error().message;
  EXPECT_TRUE(hidden->hidden);
  EXPECT_EQ(hidden->body, "");
  auto d = Details(*n);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_TRUE(d.events[0].record.hidden);
  EXPECT_EQ(d.events[0].record.body, "");
  EXPECT_TRUE(d.events[0].versions.empty()) << "no earlier version keeps the text";
  auto versions = stores_.discussions->Versions(comment);
  ASSERT_TRUE(versions.has_value()) << versions.error().message;
  EXPECT_TRUE(versions->empty());
  EXPECT_EQ(discussions_->EditComment(bob_, id_, *n, comment, "back").error().code,
            ErrorCode::Conflict);
}

TEST_F(DiscussionTest, MergeNeedsWriteAnOpenPullRequestAndSomethingToMerge) {
  auto plain = Open(bob_, "not a pr");
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  EXPECT_EQ(discussions_->Merge(ann_, id_, *plain, "").error().code, ErrorCode::BadRequest);

  auto draft = Open(ann_, "empty", /*pr=*/true);
  ASSERT_TRUE(draft.has_value()) << draft.error().message;
  EXPECT_EQ(discussions_->Merge(ann_, id_, *draft, "").error().code, ErrorCode::BadRequest)
      << "no commit to merge";

  const std::string main = Ref("refs/heads/main");
  const int n = PullRequestWith("a.txt", "a\n", "Add a");
  ASSERT_NE(n, 0);
  EXPECT_EQ(discussions_->Merge(bob_, id_, n, "").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(discussions_->Merge(Principal::Anonymous(), id_, n, "").error().code,
            ErrorCode::Unauthorized);
  ASSERT_TRUE(discussions_->ChangeStatus(ann_, id_, n, "closed", "").has_value());
  EXPECT_EQ(discussions_->Merge(ann_, id_, n, "").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(Ref("refs/heads/main"), main);
  EXPECT_EQ(Details(n).discussion.status, DiscussionStatus::Closed);
  EXPECT_EQ(discussions_->Merge(ann_, id_, 77, "").error().code, ErrorCode::NotFound);
}

TEST_F(DiscussionTest, MergeFastForwardsTheBranchAndIsFinal) {
  const int n = PullRequestWith("a.txt", "a\n", "Add a");
  ASSERT_NE(n, 0);
  const std::string head = Ref("refs/pr/" + std::to_string(n));
  ASSERT_NE(head, Ref("refs/heads/main"));
  auto d = Details(n);
  EXPECT_TRUE(d.can_merge);
  EXPECT_TRUE(d.mergeable);

  auto merged = discussions_->Merge(ann_, id_, n, "ship it");
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(merged->kind, DiscussionEventKind::StatusChange);
  EXPECT_EQ(merged->body, "merged");
  EXPECT_EQ(Ref("refs/heads/main"), head) << "a fast-forward";
  d = Details(n);
  EXPECT_EQ(d.discussion.status, DiscussionStatus::Merged);
  EXPECT_EQ(d.discussion.merge_oid, head);
  EXPECT_EQ(d.discussion.head_oid, head);
  ASSERT_GE(d.events.size(), 2u);
  EXPECT_EQ(d.events[d.events.size() - 2].record.body, "ship it");
  EXPECT_FALSE(d.can_merge);
  EXPECT_EQ(Handle().record.last_commit, head) << "the push listeners heard the branch move";

  EXPECT_EQ(discussions_->Merge(ann_, id_, n, "").error().code, ErrorCode::BadRequest);
  auto reopen = discussions_->ChangeStatus(ann_, id_, n, "open", "");
  ASSERT_FALSE(reopen);
  EXPECT_EQ(reopen.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(discussions_->ChangeStatus(ann_, id_, n, "closed", "").error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(Details(n).discussion.status, DiscussionStatus::Merged);
}

TEST_F(DiscussionTest, MergeWritesAMergeCommitWhenTheBranchMoved) {
  const int n = PullRequestWith("a.txt", "a\n", "Add a");
  ASSERT_NE(n, 0);
  const std::string head = Ref("refs/pr/" + std::to_string(n));
  const Oid moved = Push("refs/heads/main", "refs/heads/main", "b.txt", "b\n", "Add b on main");
  auto merged = discussions_->Merge(ann_, id_, n, "");
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  const std::string main = Ref("refs/heads/main");
  EXPECT_NE(main, head);
  EXPECT_NE(main, moved.Hex());
  EXPECT_EQ(Sh(git_, "git log -1 --format=%P main"), moved.Hex() + " " + head + "\n");
  EXPECT_EQ(Sh(git_, "git log -1 --format=%an%n%s main"),
            "ann\nMerge pull request #" + std::to_string(n) + ": pr Add a\n");
  EXPECT_EQ(Sh(git_, "git ls-tree --name-only main"), ".gitattributes\na.txt\nb.txt\n");
  EXPECT_EQ(Details(n).discussion.merge_oid, main);
}

TEST_F(DiscussionTest, DetailsShowAnOpenPullRequestsChangesSinceItForked) {
  const int n = PullRequestWith("a.txt", "a\n", "Add a");
  ASSERT_NE(n, 0);
  Push("refs/heads/main", "refs/heads/main", "b.txt", "b\n", "Add b on main");
  auto d = discussions_->Details(bob_, id_, n, /*diff=*/true);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  ASSERT_TRUE(d->diff.has_value());
  ASSERT_EQ(d->diff->files.size(), 1u) << "b.txt is main's, not the pull request's";
  EXPECT_EQ(d->diff->files[0].path, "a.txt");
  EXPECT_EQ(d->diff->files[0].additions, 1u);
  EXPECT_FALSE(discussions_->Details(bob_, id_, n, /*diff=*/false)->diff.has_value());
}

TEST_F(DiscussionTest, DetailsShowAMergedPullRequestsChanges) {
  const int n = PullRequestWith("a.txt", "a\n", "Add a");
  ASSERT_NE(n, 0);
  Push("refs/heads/main", "refs/heads/main", "b.txt", "b\n", "Add b on main");
  ASSERT_TRUE(discussions_->Merge(ann_, id_, n, "").has_value());
  ASSERT_EQ(Details(n).discussion.status, DiscussionStatus::Merged);
  auto d = discussions_->Details(bob_, id_, n, /*diff=*/true);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  // "A merged pull request shows what it brought" (discussion_service.cc): a.txt.
  ASSERT_TRUE(d->diff.has_value());
  ASSERT_EQ(d->diff->files.size(), 1u);
  EXPECT_EQ(d->diff->files[0].path, "a.txt");
}

TEST_F(DiscussionTest, AConflictingMergeChangesNothing) {
  Push("refs/heads/main", "refs/heads/main", "x.txt", "base\n", "Add x");
  const int n = PullRequestWith("x.txt", "theirs\n", "Change x");
  ASSERT_NE(n, 0);
  Push("refs/heads/main", "refs/heads/main", "x.txt", "ours\n", "Change x on main");
  const std::string main = Ref("refs/heads/main");

  auto d = Details(n);
  EXPECT_EQ(d.conflicts, std::vector<std::string>{"x.txt"});
  EXPECT_FALSE(d.mergeable);

  auto merged = discussions_->Merge(ann_, id_, n, "trying");
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.error().code, ErrorCode::Conflict);
  EXPECT_NE(merged.error().message.find("x.txt"), std::string::npos) << merged.error().message;
  EXPECT_EQ(Ref("refs/heads/main"), main);
  d = Details(n);
  EXPECT_EQ(d.discussion.status, DiscussionStatus::Open);
  EXPECT_EQ(d.discussion.merge_oid, "");
  for (const auto& e : d.events) EXPECT_NE(e.record.body, "trying") << "no comment either";
}

TEST_F(DiscussionTest, OpenPullRequestCutsTheTitleAndRecordsItsCommit) {
  const Oid head = Push("refs/heads/main", "refs/heads/topic", "w.bin", "w\n", "Add weights");
  auto n = discussions_->OpenPullRequest(ann_, Handle(), "main", head, Repeat("\xC3\xA9", 250),
                                         "please review");
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(Ref("refs/pr/" + std::to_string(*n)), head.Hex());
  auto d = Details(*n);
  EXPECT_EQ(d.discussion.title, Repeat("\xC3\xA9", 200));
  EXPECT_TRUE(d.discussion.pull_request);
  EXPECT_EQ(d.discussion.status, DiscussionStatus::Open);
  EXPECT_EQ(d.discussion.base_ref, "refs/heads/main");
  EXPECT_EQ(d.discussion.head_oid, head.Hex());
  EXPECT_EQ(d.discussion.author_name, "ann");
  ASSERT_EQ(Kinds(d), (std::vector{DiscussionEventKind::Comment, DiscussionEventKind::Commit}));
  EXPECT_EQ(d.events[0].record.body, "please review");
  EXPECT_EQ(d.events[1].record.body, "Add weights");
  EXPECT_EQ(d.events[1].record.detail, head.Hex());

  // A push that changes nothing on the pull request records its commit no second time.
  repos_->AfterPush(Handle());
  EXPECT_EQ(Details(*n).events.size(), 2u);

  auto untitled = discussions_->OpenPullRequest(ann_, Handle(), "main", head, " \t", "");
  ASSERT_TRUE(untitled.has_value()) << untitled.error().message;
  EXPECT_EQ(*untitled, *n + 1);
  EXPECT_EQ(Details(*untitled).discussion.title, "Pull request from ann");
}

}  // namespace
}  // namespace hangar::services
