// CollectionStore's conformance suite (db/collection_store.h), on each engine: collections
// in their owner's list, their items in order with what they name joined, the visibility
// of private repos and collections, listings, and what deletions of repos and collections
// leave behind.

#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class CollectionStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    for (auto [name, id] : {std::pair{"ann", &ann_}, std::pair{"bob", &bob_}}) {
      UserRecord u;
      u.name = name;
      u.fullname = std::string(name) + " full";
      *id = users().CreateUser(u).value().id;
    }
    OrgRecord org;
    org.name = "acme";
    acme_ = users().CreateOrg(org, ann_).value().id;
    pub_ = MakeRepo(RepoType::Model, "ann", "pub", false);
    priv_ = MakeRepo(RepoType::Model, "ann", "priv", true);
    data_ = MakeRepo(RepoType::Dataset, "bob", "data", false);
  }
  RepoRecord MakeRepo(RepoType type, const char* ns, const char* name, bool is_private) {
    RepoRecord r;
    r.type = type;
    r.ns = ns;
    r.name = name;
    r.is_private = is_private;
    return repos().Create(r).value();
  }
  CollectionRecord Make(int64_t owner, const std::string& title, bool is_private = false,
                        int64_t now = 100, int64_t max = 100) {
    CollectionRecord c;
    c.owner_id = owner;
    c.title = title;
    c.is_private = is_private;
    c.created_at = now;
    auto made = collections().Create(c, max);
    EXPECT_TRUE(made.has_value()) << made.error().message;
    return made ? *made : CollectionRecord{};
  }
  CollectionItemRecord Add(int64_t id, CollectionItemKind kind, int64_t target,
                           const std::string& note = "", int64_t now = 200) {
    auto added = collections().AddItem(id, kind, target, note, now, 100);
    EXPECT_TRUE(added.has_value()) << added.error().message;
    return added ? *added : CollectionItemRecord{};
  }
  std::vector<std::string> Names(const std::vector<CollectionItemRecord>& items) {
    std::vector<std::string> out;
    for (const auto& i : items) {
      out.push_back(i.kind == CollectionItemKind::Collection ? "c:" + i.ref_title
                                                             : i.repo_ns + "/" + i.repo_name);
      out.back() += "@" + std::to_string(i.position);
    }
    return out;
  }
  std::vector<std::string> Titles(const std::vector<CollectionRecord>& list) {
    std::vector<std::string> out;
    for (const auto& c : list) out.push_back(c.title);
    return out;
  }

  const CollectionVisibility everyone_{};  // public things only
  int64_t ann_ = 0, bob_ = 0, acme_ = 0;
  RepoRecord pub_, priv_, data_;
};

TEST_P(CollectionStoreTest, CreateReadsBackWithOwnerPlaceAndCount) {
  auto first = Make(ann_, "Recent models", false, 100);
  EXPECT_GT(first.id, 0);
  EXPECT_EQ(first.owner_id, ann_);
  EXPECT_EQ(first.owner, "ann");
  EXPECT_EQ(first.owner_fullname, "ann full");
  EXPECT_FALSE(first.owner_is_org);
  EXPECT_EQ(first.title, "Recent models");
  EXPECT_EQ(first.description, "");
  EXPECT_FALSE(first.is_private);
  EXPECT_EQ(first.theme, "default");
  EXPECT_EQ(first.position, 0);
  EXPECT_EQ(first.created_at, 100);
  EXPECT_EQ(first.updated_at, 100);
  EXPECT_EQ(first.item_count, 0);

  auto second = Make(ann_, "Other", true, 150);
  EXPECT_EQ(second.position, 1) << "appended to the owner's list";
  EXPECT_TRUE(second.is_private);
  auto org = Make(acme_, "Recent models", false, 160);
  EXPECT_EQ(org.position, 0) << "another owner's list";
  EXPECT_TRUE(org.owner_is_org);

  auto found = collections().Find(second.id).value();
  EXPECT_EQ(found.title, "Other");
  EXPECT_EQ(found.position, 1);
  EXPECT_EQ(collections().FindByTitle(ann_, "Other").value(), second.id);
  EXPECT_FALSE(collections().FindByTitle(ann_, "other").value().has_value()) << "exact title";
  EXPECT_EQ(collections().Find(999999).error().code, ErrorCode::NotFound);
}

TEST_P(CollectionStoreTest, CreateRefusesATakenTitleTheLimitAndNoOwnerAndChangesNothing) {
  Make(ann_, "A");
  CollectionRecord c;
  c.owner_id = ann_;
  c.title = "A";
  EXPECT_EQ(collections().Create(c, 100).error().code, ErrorCode::Conflict);
  c.title = "B";
  EXPECT_EQ(collections().Create(c, 1).error().code, ErrorCode::BadRequest);
  c.owner_id = 999999;
  EXPECT_EQ(collections().Create(c, 100).error().code, ErrorCode::NotFound);
  CollectionQuery q;
  q.visible.all_private = true;
  EXPECT_EQ(Titles(collections().List(q).value()), std::vector<std::string>{"A"});
}

TEST_P(CollectionStoreTest, UpdateKeepsTitlesUniquePerOwner) {
  auto a = Make(ann_, "A");
  auto b = Make(ann_, "B");
  Make(bob_, "C");
  b.title = "A";
  EXPECT_EQ(collections().Update(b).error().code, ErrorCode::Conflict);
  b.title = "C";  // bob's title: fine for ann
  b.description = "about";
  b.is_private = true;
  b.theme = "pink";
  b.updated_at = 500;
  ASSERT_TRUE(collections().Update(b).has_value());
  auto read = collections().Find(b.id).value();
  EXPECT_EQ(read.title, "C");
  EXPECT_EQ(read.description, "about");
  EXPECT_TRUE(read.is_private);
  EXPECT_EQ(read.theme, "pink");
  EXPECT_EQ(read.updated_at, 500);
  a.updated_at = 600;
  ASSERT_TRUE(collections().Update(a).has_value()) << "its own title again";
  b.id = 999999;
  EXPECT_EQ(collections().Update(b).error().code, ErrorCode::NotFound);
}

TEST_P(CollectionStoreTest, MoveReordersTheOwnersList) {
  auto a = Make(ann_, "A");
  auto b = Make(ann_, "B");
  auto c = Make(ann_, "C");
  ASSERT_TRUE(collections().Move(c.id, 0, 300).has_value());
  EXPECT_EQ(collections().Find(c.id).value().position, 0);
  EXPECT_EQ(collections().Find(a.id).value().position, 1);
  EXPECT_EQ(collections().Find(b.id).value().position, 2);
  EXPECT_EQ(collections().Find(c.id).value().updated_at, 300);
  ASSERT_TRUE(collections().Move(a.id, 99, 300).has_value()) << "past the end: last";
  EXPECT_EQ(collections().Find(a.id).value().position, 2);
  EXPECT_EQ(collections().Find(b.id).value().position, 1);
  EXPECT_EQ(collections().Move(999999, 0, 1).error().code, ErrorCode::NotFound);
}

TEST_P(CollectionStoreTest, ItemsKeepTheirOrderNotesAndWhatTheyName) {
  auto col = Make(ann_, "Mine");
  auto other = Make(bob_, "Bobs");
  auto m = Add(col.id, CollectionItemKind::Model, pub_.id, "my model", 200);
  EXPECT_GT(m.id, 0);
  EXPECT_EQ(m.collection_id, col.id);
  EXPECT_EQ(m.kind, CollectionItemKind::Model);
  EXPECT_EQ(m.position, 0);
  EXPECT_EQ(m.note, "my model");
  EXPECT_EQ(m.repo_id, pub_.id);
  EXPECT_EQ(m.repo_type, RepoType::Model);
  EXPECT_EQ(m.repo_ns, "ann");
  EXPECT_EQ(m.repo_name, "pub");
  EXPECT_FALSE(m.repo_private);
  auto d = Add(col.id, CollectionItemKind::Dataset, data_.id);
  EXPECT_EQ(d.position, 1);
  EXPECT_EQ(d.repo_type, RepoType::Dataset);
  auto n = Add(col.id, CollectionItemKind::Collection, other.id);
  EXPECT_EQ(n.ref_id, other.id);
  EXPECT_EQ(n.ref_owner, "bob");
  EXPECT_EQ(n.ref_title, "Bobs");
  EXPECT_EQ(n.repo_id, 0);
  auto read = collections().Find(col.id).value();
  EXPECT_EQ(read.item_count, 3);
  EXPECT_EQ(read.updated_at, 200) << "adding marks the collection updated";

  EXPECT_EQ(Names(collections().Items(col.id, everyone_, 100).value()),
            (std::vector<std::string>{"ann/pub@0", "bob/data@1", "c:Bobs@2"}));
  EXPECT_EQ(Names(collections().Items(col.id, everyone_, 2).value()),
            (std::vector<std::string>{"ann/pub@0", "bob/data@1"}));

  ASSERT_TRUE(collections().UpdateItem(col.id, m.id, {"new note", 1}, 400).has_value());
  EXPECT_EQ(Names(collections().Items(col.id, everyone_, 100).value()),
            (std::vector<std::string>{"bob/data@0", "ann/pub@1", "c:Bobs@2"}));
  EXPECT_EQ(collections().FindItem(col.id, m.id).value().note, "new note");
  EXPECT_EQ(collections().Find(col.id).value().updated_at, 400);
  ASSERT_TRUE(collections().UpdateItem(col.id, m.id, {std::nullopt, 0}, 401).has_value());
  EXPECT_EQ(collections().FindItem(col.id, m.id).value().note, "new note") << "note kept";
  EXPECT_EQ(collections().FindItem(col.id, m.id).value().position, 0);
  ASSERT_TRUE(collections().UpdateItem(col.id, m.id, {"", std::nullopt}, 402).has_value());
  EXPECT_EQ(collections().FindItem(col.id, m.id).value().note, "") << "note cleared";

  EXPECT_TRUE(collections().DeleteItem(col.id, d.id, 500).value());
  EXPECT_FALSE(collections().DeleteItem(col.id, d.id, 500).value());
  EXPECT_EQ(Names(collections().Items(col.id, everyone_, 100).value()),
            (std::vector<std::string>{"ann/pub@0", "c:Bobs@1"}));
  EXPECT_EQ(collections().FindItem(col.id, d.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(collections().FindItem(other.id, m.id).error().code, ErrorCode::NotFound)
      << "an item is found only in its own collection";
  EXPECT_EQ(collections().UpdateItem(other.id, m.id, {"x", std::nullopt}, 1).error().code,
            ErrorCode::NotFound);
  EXPECT_FALSE(collections().DeleteItem(other.id, m.id, 1).value());
}

TEST_P(CollectionStoreTest, AddItemRefusesDuplicatesTheLimitAndWhatIsGone) {
  auto col = Make(ann_, "Mine");
  Add(col.id, CollectionItemKind::Model, pub_.id);
  EXPECT_EQ(
      collections().AddItem(col.id, CollectionItemKind::Model, pub_.id, "", 1, 100).error().code,
      ErrorCode::Conflict);
  EXPECT_EQ(
      collections().AddItem(col.id, CollectionItemKind::Dataset, data_.id, "", 1, 1).error().code,
      ErrorCode::BadRequest);
  EXPECT_EQ(
      collections().AddItem(col.id, CollectionItemKind::Model, 999999, "", 1, 100).error().code,
      ErrorCode::NotFound);
  EXPECT_EQ(collections()
                .AddItem(col.id, CollectionItemKind::Collection, 999999, "", 1, 100)
                .error()
                .code,
            ErrorCode::NotFound);
  EXPECT_EQ(
      collections().AddItem(999999, CollectionItemKind::Model, pub_.id, "", 1, 100).error().code,
      ErrorCode::NotFound);
  EXPECT_EQ(collections().Find(col.id).value().item_count, 1);
}

TEST_P(CollectionStoreTest, PrivateItemsShowOnlyToReadersOfTheirNamespace) {
  auto col = Make(bob_, "Public list");
  auto secret = Make(ann_, "Secret", /*is_private=*/true);
  Add(col.id, CollectionItemKind::Model, priv_.id);
  Add(col.id, CollectionItemKind::Dataset, data_.id);
  Add(col.id, CollectionItemKind::Collection, secret.id);
  Add(col.id, CollectionItemKind::Model, pub_.id);
  // Positions stay those of the whole list: what is hidden leaves a gap, never a name.
  EXPECT_EQ(Names(collections().Items(col.id, everyone_, 100).value()),
            (std::vector<std::string>{"bob/data@1", "ann/pub@3"}));
  CollectionVisibility ann;
  ann.readable_namespaces = {"ann", "acme"};
  EXPECT_EQ(Names(collections().Items(col.id, ann, 100).value()),
            (std::vector<std::string>{"ann/priv@0", "bob/data@1", "c:Secret@2", "ann/pub@3"}));
  CollectionVisibility admin;
  admin.all_private = true;
  EXPECT_EQ(collections().Items(col.id, admin, 100).value().size(), 4u);
  EXPECT_EQ(collections().Items(col.id, everyone_, 1).value().size(), 1u)
      << "the limit counts what is shown";
}

TEST_P(CollectionStoreTest, DeletedReposAndCollectionsLeaveTheCollectionsThatHeldThem) {
  auto col = Make(ann_, "Mine");
  auto nested = Make(bob_, "Nested");
  Add(col.id, CollectionItemKind::Model, pub_.id);
  Add(col.id, CollectionItemKind::Collection, nested.id);
  Add(col.id, CollectionItemKind::Dataset, data_.id);
  Add(nested.id, CollectionItemKind::Model, pub_.id);
  ASSERT_TRUE(repos().Delete(pub_.Id()).has_value());
  EXPECT_EQ(Names(collections().Items(col.id, everyone_, 100).value()),
            (std::vector<std::string>{"c:Nested@0", "bob/data@1"}));
  EXPECT_EQ(collections().Find(nested.id).value().item_count, 0);
  EXPECT_TRUE(collections().Delete(nested.id).value());
  EXPECT_FALSE(collections().Delete(nested.id).value());
  EXPECT_EQ(Names(collections().Items(col.id, everyone_, 100).value()),
            (std::vector<std::string>{"bob/data@0"}));
  EXPECT_TRUE(collections().Delete(col.id).value());
  EXPECT_EQ(collections().Find(col.id).error().code, ErrorCode::NotFound);
  // A new repo of the same name is another repo: not in any collection.
  MakeRepo(RepoType::Model, "ann", "pub", false);
  CollectionQuery q;
  q.visible.all_private = true;
  EXPECT_TRUE(collections().List(q).value().empty());
}

TEST_P(CollectionStoreTest, ListFiltersByOwnerItemAndVisibilityAndPages) {
  auto a = Make(ann_, "A", false, 100);
  auto b = Make(ann_, "B secret", true, 200);
  auto c = Make(bob_, "C", false, 300);
  auto o = Make(acme_, "O", false, 400);
  Add(a.id, CollectionItemKind::Model, pub_.id, "", 100);
  Add(c.id, CollectionItemKind::Model, pub_.id, "", 300);
  Add(c.id, CollectionItemKind::Collection, a.id, "", 300);
  Add(b.id, CollectionItemKind::Dataset, data_.id, "", 200);

  CollectionQuery q;
  EXPECT_EQ(Titles(collections().List(q).value()), (std::vector<std::string>{"O", "C", "A"}))
      << "most recently updated first, private ones hidden";
  q.visible.readable_namespaces = {"ann"};
  EXPECT_EQ(Titles(collections().List(q).value()),
            (std::vector<std::string>{"O", "C", "B secret", "A"}));
  q.owners = {"ann", "acme"};
  EXPECT_EQ(Titles(collections().List(q).value()),
            (std::vector<std::string>{"O", "B secret", "A"}));
  q.owners.clear();
  q.by_item = true;
  q.repo_ids = {pub_.id};
  EXPECT_EQ(Titles(collections().List(q).value()), (std::vector<std::string>{"C", "A"}));
  q.repo_ids = {data_.id};
  q.collection_ids = {a.id};
  EXPECT_EQ(Titles(collections().List(q).value()), (std::vector<std::string>{"C", "B secret"}));
  q.repo_ids.clear();
  q.collection_ids.clear();
  EXPECT_TRUE(collections().List(q).value().empty()) << "an item filter naming nothing";

  CollectionQuery pages;
  pages.limit = 2;
  auto first = collections().List(pages).value();
  EXPECT_EQ(Titles(first), (std::vector<std::string>{"O", "C"}));
  pages.after = {first.back().updated_at, first.back().id, true};
  EXPECT_EQ(Titles(collections().List(pages).value()), std::vector<std::string>{"A"});
  (void)o;
}

INSTANTIATE_TEST_SUITE_P(Engines, CollectionStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db
