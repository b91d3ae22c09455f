// DiscussionStore's conformance suite (db/discussion_store.h), on each engine: discussions
// and pull requests, their events, comment versions, conditional updates and the cascade
// of a repo's deletion.

#include <gtest/gtest.h>

#include <algorithm>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class DiscussionStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    for (auto [name, id] : {std::pair{"ann", &ann_}, std::pair{"bob", &bob_}}) {
      UserRecord u;
      u.name = name;
      u.fullname = std::string(name) + " full";
      *id = users().CreateUser(u).value().id;
    }
    RepoRecord r;
    r.ns = "ann";
    r.name = "m";
    repo_ = repos().Create(r).value();
    r.name = "other";
    other_ = repos().Create(r).value();
  }

  DiscussionRecord Disc(int num, bool pr, DiscussionStatus status, const char* author,
                        int64_t at) const {
    DiscussionRecord d;
    d.repo_id = repo_.id;
    d.num = num;
    d.pull_request = pr;
    d.title = "title " + std::to_string(num);
    d.status = status;
    d.author_id = std::string(author) == "ann" ? ann_ : bob_;
    d.author_name = author;
    if (pr) {
      d.base_ref = "refs/heads/main";
      d.head_oid = std::string(40, 'a');
    }
    d.created_at = at;
    return d;
  }
  DiscussionEventRecord Comment(const char* author, const char* body, int64_t at) const {
    DiscussionEventRecord e;
    e.kind = DiscussionEventKind::Comment;
    e.author_id = std::string(author) == "ann" ? ann_ : bob_;
    e.author_name = author;
    e.body = body;
    e.created_at = at;
    return e;
  }
  DiscussionEventRecord StatusEvent(DiscussionStatus s, int64_t at) const {
    DiscussionEventRecord e;
    e.kind = DiscussionEventKind::StatusChange;
    e.author_id = ann_;
    e.author_name = "ann";
    e.body = std::string(DiscussionStatusName(s));
    e.created_at = at;
    return e;
  }
  // The nums of `v`, in order.
  static std::vector<int> Nums(const std::vector<DiscussionRecord>& v) {
    std::vector<int> out;
    for (const auto& d : v) out.push_back(d.num);
    return out;
  }
  // Creates 1: open discussion (ann), 2: draft PR (bob), 3: closed discussion (bob),
  // 4: merged PR (ann), 5: open PR (ann), in repo_.
  void MakeFive() {
    ASSERT_TRUE(
        discussions().Create(Disc(1, false, DiscussionStatus::Open, "ann", 10), {}).has_value());
    ASSERT_TRUE(
        discussions().Create(Disc(2, true, DiscussionStatus::Draft, "bob", 20), {}).has_value());
    ASSERT_TRUE(
        discussions().Create(Disc(3, false, DiscussionStatus::Closed, "bob", 30), {}).has_value());
    ASSERT_TRUE(
        discussions().Create(Disc(4, true, DiscussionStatus::Merged, "ann", 40), {}).has_value());
    ASSERT_TRUE(
        discussions().Create(Disc(5, true, DiscussionStatus::Open, "ann", 50), {}).has_value());
  }

  int64_t ann_ = 0, bob_ = 0;
  RepoRecord repo_, other_;
};

TEST_P(DiscussionStoreTest, StatusNamesRoundTrip) {
  for (auto s : {DiscussionStatus::Open, DiscussionStatus::Closed, DiscussionStatus::Merged,
                 DiscussionStatus::Draft}) {
    EXPECT_EQ(ParseDiscussionStatus(DiscussionStatusName(s)), s);
  }
  EXPECT_EQ(DiscussionStatusName(DiscussionStatus::Open), "open");
  EXPECT_EQ(DiscussionStatusName(DiscussionStatus::Closed), "closed");
  EXPECT_EQ(DiscussionStatusName(DiscussionStatus::Merged), "merged");
  EXPECT_EQ(DiscussionStatusName(DiscussionStatus::Draft), "draft");
  EXPECT_EQ(ParseDiscussionStatus("Open"), std::nullopt);
  EXPECT_EQ(ParseDiscussionStatus(""), std::nullopt);
  EXPECT_EQ(ParseDiscussionStatus("merge"), std::nullopt);
  EXPECT_EQ(DiscussionEventKindName(DiscussionEventKind::StatusChange), "status-change");
  EXPECT_EQ(DiscussionEventKindName(DiscussionEventKind::TitleChange), "title-change");
  EXPECT_EQ(DiscussionEventKindName(DiscussionEventKind::Commit), "commit");
  EXPECT_EQ(DiscussionEventKindName(DiscussionEventKind::Comment), "comment");
}

TEST_P(DiscussionStoreTest, CreateStoresTheRecordAndItsEvents) {
  EXPECT_EQ(discussions().HighestNum(repo_.id).value(), 0);
  EXPECT_FALSE(discussions().Get(repo_.id, 1).value().has_value());

  DiscussionEventRecord commit;
  commit.kind = DiscussionEventKind::Commit;
  commit.author_name = "someone";  // no account
  commit.body = "Add weights";
  commit.detail = std::string(40, 'b');
  commit.created_at = 101;
  auto ids =
      discussions()
          .Create(Disc(1, true, DiscussionStatus::Open, "bob", 100),
                  {Comment("bob", "please merge", 100), commit, Comment("ann", "looks good", 102)})
          .value();
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_LT(ids[0], ids[1]);
  EXPECT_LT(ids[1], ids[2]);

  auto d = discussions().Get(repo_.id, 1).value();
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->repo_id, repo_.id);
  EXPECT_EQ(d->num, 1);
  EXPECT_TRUE(d->pull_request);
  EXPECT_EQ(d->title, "title 1");
  EXPECT_EQ(d->status, DiscussionStatus::Open);
  EXPECT_EQ(d->author_id, bob_);
  EXPECT_EQ(d->author_name, "bob");
  EXPECT_EQ(d->base_ref, "refs/heads/main");
  EXPECT_EQ(d->head_oid, std::string(40, 'a'));
  EXPECT_EQ(d->merge_oid, "");
  EXPECT_EQ(d->created_at, 100);
  EXPECT_EQ(d->updated_at, 100);
  EXPECT_EQ(d->comments, 2) << "the commit event is no comment";
  EXPECT_EQ(discussions().HighestNum(repo_.id).value(), 1);
  EXPECT_EQ(discussions().HighestNum(other_.id).value(), 0) << "numbers are per repo";

  // A discussion without events, and an author whose account does not exist.
  auto plain = Disc(2, false, DiscussionStatus::Closed, "ann", 200);
  plain.author_id = 9999999;
  plain.author_name = "ghost";
  EXPECT_TRUE(discussions().Create(plain, {}).value().empty());
  auto p = discussions().Get(repo_.id, 2).value();
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->pull_request);
  EXPECT_EQ(p->status, DiscussionStatus::Closed);
  EXPECT_EQ(p->author_id, 0);
  EXPECT_EQ(p->author_name, "ghost");
  EXPECT_EQ(p->base_ref, "");
  EXPECT_EQ(p->head_oid, "");
  EXPECT_EQ(p->comments, 0);
  EXPECT_EQ(discussions().HighestNum(repo_.id).value(), 2);

  // The same num in another repo is free.
  auto elsewhere = Disc(1, false, DiscussionStatus::Open, "ann", 300);
  elsewhere.repo_id = other_.id;
  EXPECT_TRUE(discussions().Create(elsewhere, {}).has_value());
  EXPECT_EQ(discussions().Get(other_.id, 1).value()->title, "title 1");
  EXPECT_FALSE(discussions().Get(other_.id, 1).value()->pull_request);
}

TEST_P(DiscussionStoreTest, CreateRefusesATakenNumAndAMissingRepo) {
  ASSERT_TRUE(
      discussions()
          .Create(Disc(1, false, DiscussionStatus::Open, "ann", 10), {Comment("ann", "first", 10)})
          .has_value());
  auto again = Disc(1, true, DiscussionStatus::Draft, "bob", 20);
  again.title = "intruder";
  auto taken = discussions().Create(again, {Comment("bob", "second", 20)});
  ASSERT_FALSE(taken.has_value());
  EXPECT_EQ(taken.error().code, ErrorCode::Conflict);
  auto d = discussions().Get(repo_.id, 1).value();
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->title, "title 1") << "the first one is kept";
  EXPECT_EQ(d->comments, 1) << "the refused one's events are not added";
  EXPECT_EQ(discussions().Events(repo_.id, 1).value().size(), 1u);

  auto orphan = Disc(1, false, DiscussionStatus::Open, "ann", 30);
  orphan.repo_id = 9999999;
  auto gone = discussions().Create(orphan, {Comment("ann", "hello", 30)});
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::NotFound);
  EXPECT_EQ(discussions().HighestNum(9999999).value(), 0);
  EXPECT_TRUE(discussions().Events(9999999, 1).value().empty());
}

TEST_P(DiscussionStoreTest, ListIsNewestFirstAndFiltersAgreeWithCount) {
  MakeFive();
  DiscussionFilter all;
  EXPECT_EQ(Nums(discussions().List(repo_.id, all, 0, 100).value()),
            (std::vector<int>{5, 4, 3, 2, 1}));
  EXPECT_EQ(discussions().Count(repo_.id, all).value(), 5);
  EXPECT_EQ(Nums(discussions().List(repo_.id, all, 1, 2).value()), (std::vector<int>{4, 3}));
  EXPECT_EQ(Nums(discussions().List(repo_.id, all, 4, 2).value()), (std::vector<int>{1}));
  EXPECT_TRUE(discussions().List(repo_.id, all, 5, 2).value().empty());
  EXPECT_TRUE(discussions().List(other_.id, all, 0, 100).value().empty());
  EXPECT_EQ(discussions().Count(other_.id, all).value(), 0);

  auto listed = discussions().List(repo_.id, all, 0, 1).value();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].title, "title 5");
  EXPECT_EQ(listed[0].status, DiscussionStatus::Open);
  EXPECT_TRUE(listed[0].pull_request);
  EXPECT_EQ(listed[0].author_name, "ann");

  struct Case {
    const char* what;
    DiscussionFilter f;
    std::vector<int> nums;
  };
  std::vector<Case> cases;
  {
    DiscussionFilter f;
    f.pull_request = true;
    cases.push_back({"pull requests", f, {5, 4, 2}});
    f.pull_request = false;
    cases.push_back({"discussions", f, {3, 1}});
  }
  {
    DiscussionFilter f;
    f.open = true;
    cases.push_back({"open (draft counts)", f, {5, 2, 1}});
    f.open = false;
    cases.push_back({"closed (merged counts)", f, {4, 3}});
  }
  {
    DiscussionFilter f;
    f.author = "bob";
    cases.push_back({"by bob", f, {3, 2}});
    f.author = "nobody";
    cases.push_back({"by nobody", f, {}});
  }
  {
    DiscussionFilter f;
    f.pull_request = true;
    f.open = true;
    f.author = "ann";
    cases.push_back({"ann's open pull requests", f, {5}});
    f.open = false;
    cases.push_back({"ann's closed pull requests", f, {4}});
    f.pull_request = false;
    f.open = true;
    cases.push_back({"ann's open discussions", f, {1}});
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(Nums(discussions().List(repo_.id, c.f, 0, 100).value()), c.nums);
    EXPECT_EQ(discussions().Count(repo_.id, c.f).value(), static_cast<int64_t>(c.nums.size()));
  }
  // Paging within a filter.
  DiscussionFilter prs;
  prs.pull_request = true;
  EXPECT_EQ(Nums(discussions().List(repo_.id, prs, 1, 1).value()), (std::vector<int>{4}));
  EXPECT_EQ(Nums(discussions().List(repo_.id, prs, 2, 5).value()), (std::vector<int>{2}));
}

TEST_P(DiscussionStoreTest, OpenPullRequestsAreTheOpenAndDraftOnes) {
  MakeFive();
  auto open = discussions().OpenPullRequests(repo_.id).value();
  auto nums = Nums(open);
  std::sort(nums.begin(), nums.end());
  EXPECT_EQ(nums, (std::vector<int>{2, 5}));
  for (const auto& d : open) {
    EXPECT_TRUE(d.pull_request);
    EXPECT_EQ(d.base_ref, "refs/heads/main");
  }
  EXPECT_TRUE(discussions().OpenPullRequests(other_.id).value().empty());
  DiscussionUpdate close;
  close.status = DiscussionStatus::Closed;
  ASSERT_TRUE(discussions().Update(repo_.id, 5, close, {}, 60).value().has_value());
  EXPECT_EQ(Nums(discussions().OpenPullRequests(repo_.id).value()), (std::vector<int>{2}));
}

TEST_P(DiscussionStoreTest, EventsAreOldestFirstAndLookedUpInTheirDiscussion) {
  ASSERT_TRUE(
      discussions().Create(Disc(1, false, DiscussionStatus::Open, "ann", 10), {}).has_value());
  DiscussionEventRecord title;
  title.kind = DiscussionEventKind::TitleChange;
  title.author_id = bob_;
  title.author_name = "bob";
  title.body = "new title";
  title.detail = "old title";
  title.created_at = 12;
  auto ids =
      discussions()
          .Create(Disc(2, false, DiscussionStatus::Open, "bob", 11),
                  {Comment("bob", "hello", 11), title, StatusEvent(DiscussionStatus::Closed, 13)})
          .value();
  ASSERT_EQ(ids.size(), 3u);

  auto events = discussions().Events(repo_.id, 2).value();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, ids[0]);
  EXPECT_EQ(events[1].id, ids[1]);
  EXPECT_EQ(events[2].id, ids[2]);
  EXPECT_EQ(events[0].repo_id, repo_.id);
  EXPECT_EQ(events[0].num, 2);
  EXPECT_EQ(events[0].kind, DiscussionEventKind::Comment);
  EXPECT_EQ(events[0].author_id, bob_);
  EXPECT_EQ(events[0].author_name, "bob");
  EXPECT_EQ(events[0].body, "hello");
  EXPECT_FALSE(events[0].edited);
  EXPECT_FALSE(events[0].hidden);
  EXPECT_EQ(events[0].editor_name, "bob");
  EXPECT_EQ(events[0].created_at, 11);
  EXPECT_EQ(events[0].updated_at, 11);
  EXPECT_EQ(events[1].kind, DiscussionEventKind::TitleChange);
  EXPECT_EQ(events[1].body, "new title");
  EXPECT_EQ(events[1].detail, "old title");
  EXPECT_EQ(events[2].kind, DiscussionEventKind::StatusChange);
  EXPECT_EQ(events[2].body, "closed");
  EXPECT_EQ(events[2].author_name, "ann");
  EXPECT_TRUE(discussions().Events(repo_.id, 1).value().empty());
  EXPECT_TRUE(discussions().Events(repo_.id, 3).value().empty());

  auto one = discussions().Event(repo_.id, 2, ids[1]).value();
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->id, ids[1]);
  EXPECT_EQ(one->kind, DiscussionEventKind::TitleChange);
  EXPECT_EQ(one->detail, "old title");
  EXPECT_FALSE(discussions().Event(repo_.id, 1, ids[1]).value().has_value()) << "wrong num";
  EXPECT_FALSE(discussions().Event(other_.id, 2, ids[1]).value().has_value()) << "wrong repo";
  EXPECT_FALSE(discussions().Event(repo_.id, 2, ids[2] + 1000).value().has_value());

  // The first version of a comment is recorded; other kinds have none.
  auto versions = discussions().Versions(ids[0]).value();
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].body, "hello");
  EXPECT_EQ(versions[0].author_name, "bob");
  EXPECT_EQ(versions[0].created_at, 11);
  EXPECT_TRUE(discussions().Versions(ids[1]).value().empty());
}

TEST_P(DiscussionStoreTest, UpdateAppliesItsChangesAndAppendsEvents) {
  auto created =
      discussions()
          .Create(Disc(1, true, DiscussionStatus::Draft, "bob", 10), {Comment("bob", "wip", 10)})
          .value();
  ASSERT_EQ(created.size(), 1u);

  // The first commit: draft → open, a new head.
  DiscussionUpdate push;
  push.status = DiscussionStatus::Open;
  push.head_oid = std::string(40, 'c');
  push.if_status = {DiscussionStatus::Draft};
  push.if_head_oid = std::string(40, 'a');
  DiscussionEventRecord commit;
  commit.kind = DiscussionEventKind::Commit;
  commit.author_id = bob_;
  commit.author_name = "bob";
  commit.body = "Add config";
  commit.detail = std::string(40, 'c');
  commit.created_at = 20;
  auto ids = discussions().Update(repo_.id, 1, push, {commit}, 20).value();
  ASSERT_TRUE(ids.has_value());
  ASSERT_EQ(ids->size(), 1u);
  EXPECT_GT((*ids)[0], created[0]);
  auto d = discussions().Get(repo_.id, 1).value().value();
  EXPECT_EQ(d.status, DiscussionStatus::Open);
  EXPECT_EQ(d.head_oid, std::string(40, 'c'));
  EXPECT_EQ(d.title, "title 1") << "not named, kept";
  EXPECT_EQ(d.merge_oid, "");
  EXPECT_EQ(d.base_ref, "refs/heads/main");
  EXPECT_EQ(d.created_at, 10);
  EXPECT_EQ(d.updated_at, 20);

  // A title change alone.
  DiscussionUpdate retitle;
  retitle.title = "Better title";
  DiscussionEventRecord title;
  title.kind = DiscussionEventKind::TitleChange;
  title.author_id = ann_;
  title.author_name = "ann";
  title.body = "Better title";
  title.detail = "title 1";
  title.created_at = 30;
  ASSERT_TRUE(discussions().Update(repo_.id, 1, retitle, {title}, 30).value().has_value());
  d = discussions().Get(repo_.id, 1).value().value();
  EXPECT_EQ(d.title, "Better title");
  EXPECT_EQ(d.status, DiscussionStatus::Open);
  EXPECT_EQ(d.head_oid, std::string(40, 'c'));
  EXPECT_EQ(d.updated_at, 30);

  // The merge.
  DiscussionUpdate merge;
  merge.status = DiscussionStatus::Merged;
  merge.merge_oid = std::string(40, 'd');
  merge.if_status = {DiscussionStatus::Open, DiscussionStatus::Draft};
  merge.if_head_oid = std::string(40, 'c');
  auto merged = discussions()
                    .Update(repo_.id, 1, merge, {StatusEvent(DiscussionStatus::Merged, 40)}, 40)
                    .value();
  ASSERT_TRUE(merged.has_value());
  ASSERT_EQ(merged->size(), 1u);
  d = discussions().Get(repo_.id, 1).value().value();
  EXPECT_EQ(d.status, DiscussionStatus::Merged);
  EXPECT_EQ(d.merge_oid, std::string(40, 'd'));
  EXPECT_EQ(d.head_oid, std::string(40, 'c'));
  EXPECT_EQ(d.title, "Better title");
  EXPECT_EQ(d.updated_at, 40);
  EXPECT_EQ(d.comments, 1);

  auto events = discussions().Events(repo_.id, 1).value();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind, DiscussionEventKind::Comment);
  EXPECT_EQ(events[1].kind, DiscussionEventKind::Commit);
  EXPECT_EQ(events[1].id, (*ids)[0]);
  EXPECT_EQ(events[1].detail, std::string(40, 'c'));
  EXPECT_EQ(events[2].kind, DiscussionEventKind::TitleChange);
  EXPECT_EQ(events[3].kind, DiscussionEventKind::StatusChange);
  EXPECT_EQ(events[3].id, (*merged)[0]);
  EXPECT_EQ(events[3].body, "merged");

  // An update with no events still applies.
  DiscussionUpdate quiet;
  quiet.title = "Final";
  auto none = discussions().Update(repo_.id, 1, quiet, {}, 50).value();
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(discussions().Get(repo_.id, 1).value()->title, "Final");
  EXPECT_EQ(discussions().Events(repo_.id, 1).value().size(), 4u);
}

TEST_P(DiscussionStoreTest, UpdateWhoseConditionFailsChangesNothing) {
  ASSERT_TRUE(
      discussions()
          .Create(Disc(1, true, DiscussionStatus::Open, "bob", 10), {Comment("bob", "please", 10)})
          .has_value());
  const auto before = discussions().Get(repo_.id, 1).value().value();

  DiscussionUpdate wrong_status;
  wrong_status.status = DiscussionStatus::Open;
  wrong_status.title = "changed";
  wrong_status.if_status = {DiscussionStatus::Closed, DiscussionStatus::Merged};
  EXPECT_FALSE(discussions()
                   .Update(repo_.id, 1, wrong_status, {StatusEvent(DiscussionStatus::Open, 20)}, 20)
                   .value()
                   .has_value());

  DiscussionUpdate wrong_head;
  wrong_head.status = DiscussionStatus::Merged;
  wrong_head.merge_oid = std::string(40, 'd');
  wrong_head.if_status = {DiscussionStatus::Open};  // holds
  wrong_head.if_head_oid = std::string(40, 'e');    // does not
  EXPECT_FALSE(discussions()
                   .Update(repo_.id, 1, wrong_head, {StatusEvent(DiscussionStatus::Merged, 30)}, 30)
                   .value()
                   .has_value());

  auto after = discussions().Get(repo_.id, 1).value().value();
  EXPECT_EQ(after.status, before.status);
  EXPECT_EQ(after.title, before.title);
  EXPECT_EQ(after.head_oid, before.head_oid);
  EXPECT_EQ(after.merge_oid, "");
  EXPECT_EQ(after.updated_at, 10);
  auto events = discussions().Events(repo_.id, 1).value();
  ASSERT_EQ(events.size(), 1u) << "no event appended";
  EXPECT_EQ(events[0].kind, DiscussionEventKind::Comment);

  // A condition on the right head holds.
  DiscussionUpdate right_head;
  right_head.status = DiscussionStatus::Closed;
  right_head.if_head_oid = std::string(40, 'a');
  EXPECT_TRUE(discussions().Update(repo_.id, 1, right_head, {}, 40).value().has_value());
  EXPECT_EQ(discussions().Get(repo_.id, 1).value()->status, DiscussionStatus::Closed);

  auto missing = discussions().Update(repo_.id, 2, right_head, {}, 50);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
  auto other_repo = discussions().Update(other_.id, 1, DiscussionUpdate{}, {}, 50);
  ASSERT_FALSE(other_repo.has_value());
  EXPECT_EQ(other_repo.error().code, ErrorCode::NotFound);
  EXPECT_TRUE(discussions().Events(repo_.id, 2).value().empty());
}

TEST_P(DiscussionStoreTest, EditCommentAddsAVersion) {
  auto ids = discussions()
                 .Create(Disc(1, false, DiscussionStatus::Open, "bob", 10),
                         {Comment("bob", "frist", 10), StatusEvent(DiscussionStatus::Closed, 11)})
                 .value();
  ASSERT_EQ(ids.size(), 2u);

  ASSERT_TRUE(discussions().EditComment(ids[0], "first", "bob", 20).has_value());
  ASSERT_TRUE(discussions().EditComment(ids[0], "first!", "ann", 30).has_value());
  auto e = discussions().Event(repo_.id, 1, ids[0]).value();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->body, "first!");
  EXPECT_TRUE(e->edited);
  EXPECT_FALSE(e->hidden);
  EXPECT_EQ(e->editor_name, "ann");
  EXPECT_EQ(e->author_name, "bob") << "the author stays";
  EXPECT_EQ(e->author_id, bob_);
  EXPECT_EQ(e->created_at, 10);
  EXPECT_EQ(e->updated_at, 30);

  auto versions = discussions().Versions(ids[0]).value();
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_EQ(versions[0].body, "first!");
  EXPECT_EQ(versions[0].author_name, "ann");
  EXPECT_EQ(versions[0].created_at, 30);
  EXPECT_EQ(versions[1].body, "first");
  EXPECT_EQ(versions[1].author_name, "bob");
  EXPECT_EQ(versions[1].created_at, 20);
  EXPECT_EQ(versions[2].body, "frist") << "the original is kept";
  EXPECT_EQ(versions[2].created_at, 10);

  auto not_comment = discussions().EditComment(ids[1], "text", "ann", 40);
  ASSERT_FALSE(not_comment.has_value());
  EXPECT_EQ(not_comment.error().code, ErrorCode::NotFound);
  EXPECT_EQ(discussions().Event(repo_.id, 1, ids[1]).value()->body, "closed");
  EXPECT_TRUE(discussions().Versions(ids[1]).value().empty());
  auto missing = discussions().EditComment(ids[1] + 1000, "text", "ann", 40);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
}

TEST_P(DiscussionStoreTest, HideCommentErasesItsTextForGood) {
  auto ids = discussions()
                 .Create(Disc(1, false, DiscussionStatus::Open, "bob", 10),
                         {Comment("bob", "secret", 10), Comment("ann", "reply", 11),
                          StatusEvent(DiscussionStatus::Closed, 12)})
                 .value();
  ASSERT_EQ(ids.size(), 3u);
  ASSERT_TRUE(discussions().EditComment(ids[0], "secret 2", "bob", 20).has_value());
  ASSERT_EQ(discussions().Versions(ids[0]).value().size(), 2u);

  ASSERT_TRUE(discussions().HideComment(ids[0], 30).has_value());
  auto e = discussions().Event(repo_.id, 1, ids[0]).value();
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->hidden);
  EXPECT_EQ(e->body, "");
  EXPECT_EQ(e->updated_at, 30);
  EXPECT_EQ(e->kind, DiscussionEventKind::Comment);
  EXPECT_TRUE(discussions().Versions(ids[0]).value().empty());
  // The other comment is untouched; the hidden one still counts as a comment event.
  auto reply = discussions().Event(repo_.id, 1, ids[1]).value();
  ASSERT_TRUE(reply.has_value());
  EXPECT_FALSE(reply->hidden);
  EXPECT_EQ(reply->body, "reply");
  EXPECT_EQ(discussions().Versions(ids[1]).value().size(), 1u);
  EXPECT_EQ(discussions().Get(repo_.id, 1).value()->comments, 2);

  auto edit_hidden = discussions().EditComment(ids[0], "back", "bob", 40);
  ASSERT_FALSE(edit_hidden.has_value());
  EXPECT_EQ(edit_hidden.error().code, ErrorCode::Conflict);
  EXPECT_EQ(discussions().Event(repo_.id, 1, ids[0]).value()->body, "");
  EXPECT_TRUE(discussions().Versions(ids[0]).value().empty());

  auto not_comment = discussions().HideComment(ids[2], 50);
  ASSERT_FALSE(not_comment.has_value());
  EXPECT_EQ(not_comment.error().code, ErrorCode::NotFound);
  auto status = discussions().Event(repo_.id, 1, ids[2]).value();
  ASSERT_TRUE(status.has_value());
  EXPECT_FALSE(status->hidden);
  EXPECT_EQ(status->body, "closed");
  auto missing = discussions().HideComment(ids[2] + 1000, 50);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
}

TEST_P(DiscussionStoreTest, DeletingTheRepoDeletesItsDiscussions) {
  auto ids =
      discussions()
          .Create(Disc(1, true, DiscussionStatus::Open, "bob", 10), {Comment("bob", "hello", 10)})
          .value();
  ASSERT_EQ(ids.size(), 1u);
  auto elsewhere = Disc(1, false, DiscussionStatus::Open, "ann", 10);
  elsewhere.repo_id = other_.id;
  ASSERT_TRUE(discussions().Create(elsewhere, {Comment("ann", "kept", 10)}).has_value());

  ASSERT_TRUE(repos().Delete(repo_.Id()).has_value());
  EXPECT_FALSE(discussions().Get(repo_.id, 1).value().has_value());
  EXPECT_TRUE(discussions().Events(repo_.id, 1).value().empty());
  EXPECT_FALSE(discussions().Event(repo_.id, 1, ids[0]).value().has_value());
  EXPECT_TRUE(discussions().Versions(ids[0]).value().empty());
  EXPECT_EQ(discussions().HighestNum(repo_.id).value(), 0);
  EXPECT_EQ(discussions().Count(repo_.id, {}).value(), 0);

  auto kept = discussions().Get(other_.id, 1).value();
  ASSERT_TRUE(kept.has_value()) << "another repo's discussion stays";
  EXPECT_EQ(kept->comments, 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, DiscussionStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db
