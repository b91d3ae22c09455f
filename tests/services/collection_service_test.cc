// CollectionService (issue 19 §6, docs/collections.md): who may see and change a
// collection, slugs, titles and limits, items and what a reader sees of private ones,
// listings and their filters. Bad input changes nothing.

#include "services/collection/collection_service.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/util.h"
#include "fixtures.h"
#include "service_test.h"

namespace hangar::services {
namespace {

class CollectionTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    Open({});
    ann_ = testing::MakeUser(*accounts_, "ann");
    bob_ = testing::MakeUser(*accounts_, "bob");
    carol_ = testing::MakeUser(*accounts_, "carol");
    ASSERT_TRUE(accounts_->CreateOrg("acme", "ann").has_value());
    ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Read).has_value());
    ASSERT_TRUE(accounts_->AddMember("acme", "carol", db::OrgRole::Write).has_value());
    testing::MakeRepoRow(*stores_.repos, "ann", "pub");
    testing::MakeRepoRow(*stores_.repos, "ann", "priv", /*is_private=*/true);
    testing::MakeRepoRow(*stores_.repos, "acme", "secret", /*is_private=*/true);
    db::RepoRecord d;
    d.type = RepoType::Dataset;
    d.ns = "bob";
    d.name = "data";
    ASSERT_TRUE(stores_.repos->Create(d).has_value());
  }
  // The service with `options` and a clock that ticks a second at each reading, so the
  // order of changes is the order of their times.
  void Open(CollectionOptions options) {
    options.now = [this] { return ++clock_; };
    collections_ = std::make_unique<CollectionService>(*repos_, *access_, *accounts_,
                                                       *stores_.collections, options);
  }
  CollectionView Make(const Principal& who, const std::string& title, bool is_private = false,
                      const std::string& ns = "") {
    auto made = collections_->Create(who, {ns, title, "", is_private});
    EXPECT_TRUE(made.has_value()) << made.error().message;
    EXPECT_FALSE(made.has_value() && made->existed);
    return made ? made->view : CollectionView{};
  }
  ErrorCode AddError(const Principal& who, const std::string& slug, NewCollectionItem in) {
    auto r = collections_->AddItem(who, slug, in);
    return r ? ErrorCode::Internal : r.error().code;  // Internal: it was added
  }
  // "<type>:<id>@<position>" of each item `who` sees.
  std::vector<std::string> Items(const Principal& who, const std::string& slug) {
    std::vector<std::string> out;
    auto v = collections_->Get(who, slug);
    EXPECT_TRUE(v.has_value()) << v.error().message;
    if (!v) return out;
    for (const auto& i : v->items) {
      out.push_back(std::string(db::CollectionItemKindName(i.kind)) + ":" +
                    (i.kind == db::CollectionItemKind::Collection ? RefSlug(i)
                                                                  : i.repo_ns + "/" + i.repo_name) +
                    "@" + std::to_string(i.position));
    }
    return out;
  }
  size_t CountAll() {
    auto page = collections_->List(Principal::Hub(), {});
    EXPECT_TRUE(page.has_value());
    return page ? page->items.size() : 0;
  }

  int64_t clock_ = 1000;
  std::unique_ptr<CollectionService> collections_;
  Principal ann_, bob_, carol_;
};

TEST_F(CollectionTest, SlugsNameTheOwnerTheTitleAndTheId) {
  EXPECT_EQ(CollectionSlug("ann", "My cool stuff 42!", 255),
            "ann/my-cool-stuff-42-c000000000000000000000ff");
  EXPECT_EQ(CollectionSlug("ann", "  --Ünïcode  Tïtle--", 1),
            "ann/n-code-t-tle-c00000000000000000000001");
  EXPECT_EQ(CollectionSlug("ann", "\xe6\xa8\xa1\xe5\x9e\x8b", 1),
            "ann/collection-c00000000000000000000001");
}

TEST_F(CollectionTest, CreateAndGetAnswerTheWholeCollection) {
  auto made = collections_->Create(ann_, {"", "  Recent models ", "Cool stuff", false});
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_FALSE(made->existed);
  const auto& c = made->view.collection;
  EXPECT_EQ(c.title, "Recent models") << "trimmed";
  EXPECT_EQ(c.description, "Cool stuff");
  EXPECT_EQ(c.owner, "ann");
  EXPECT_FALSE(c.is_private);
  EXPECT_EQ(c.theme, "default");
  EXPECT_EQ(c.position, 0);
  EXPECT_TRUE(made->view.items.empty());
  EXPECT_TRUE(made->view.may_write);
  EXPECT_EQ(made->view.slug, "ann/recent-models-" + ObjectId(c.id, 'c'));

  auto got = collections_->Get(Principal(), made->view.slug);
  ASSERT_TRUE(got.has_value()) << got.error().message;
  EXPECT_EQ(got->collection.title, "Recent models");
  EXPECT_FALSE(got->may_write);
  // The words of a slug are not read: an old title's slug still finds it; the namespace is.
  EXPECT_TRUE(collections_->Get(Principal(), "ann/old-title-" + ObjectId(c.id, 'c')).has_value());
  for (std::string bad : {"bob/recent-models-" + ObjectId(c.id, 'c'), std::string("ann/recent"),
                          "ann/recent-models-" + ObjectId(c.id, 'b'), std::string("x"),
                          "ann/recent-models-" + ObjectId(c.id + 100, 'c')}) {
    EXPECT_EQ(collections_->Get(ann_, bad).error().code, ErrorCode::NotFound) << bad;
  }

  // An org's collection: its writers make it; it goes last in the org's list.
  auto org = collections_->Create(carol_, {"acme", "Team picks", "", false});
  ASSERT_TRUE(org.has_value()) << org.error().message;
  EXPECT_EQ(org->view.collection.owner, "acme");
  EXPECT_TRUE(org->view.collection.owner_is_org);
  EXPECT_TRUE(org->view.slug.starts_with("acme/team-picks-"));
}

TEST_F(CollectionTest, ASecondCollectionOfATitleIsTheFirstOne) {
  auto first = Make(ann_, "Recent models");
  auto again = collections_->Create(ann_, {"", "Recent models", "other", true});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_TRUE(again->existed);
  EXPECT_EQ(again->view.slug, first.slug);
  EXPECT_EQ(again->view.collection.description, "") << "not updated";
  EXPECT_FALSE(again->view.collection.is_private);
  EXPECT_EQ(CountAll(), 1u);
  // Another namespace may have that title.
  Make(bob_, "Recent models");
}

TEST_F(CollectionTest, WhoMayCreate) {
  EXPECT_EQ(collections_->Create(Principal(), {"ann", "T", "", false}).error().code,
            ErrorCode::Unauthorized);
  Principal read_token = ann_;
  read_token.role = TokenRole::Read;
  EXPECT_EQ(collections_->Create(read_token, {"", "T", "", false}).error().code,
            ErrorCode::Forbidden);
  Principal key = ann_;
  key.deploy_key_id = 3;
  key.repo_scope = 1;
  EXPECT_EQ(collections_->Create(key, {"", "T", "", false}).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(collections_->Create(bob_, {"ann", "T", "", false}).error().code, ErrorCode::Forbidden)
      << "another user's namespace";
  EXPECT_EQ(collections_->Create(bob_, {"acme", "T", "", false}).error().code, ErrorCode::Forbidden)
      << "an org where bob only reads";
  Principal site_admin = carol_;
  site_admin.is_admin = true;  // may write anywhere: the namespace must still exist
  EXPECT_EQ(collections_->Create(site_admin, {"nobody", "T", "", false}).error().code,
            ErrorCode::NotFound);
  EXPECT_EQ(CountAll(), 0u);
}

TEST_F(CollectionTest, BadTitlesAndDescriptionsAreRefusedAndChangeNothing) {
  const std::string sixty(60, 'x');
  EXPECT_TRUE(collections_->Create(ann_, {"", sixty, std::string(150, 'd'), false}).has_value());
  struct Case {
    std::string title, description, says;
  };
  for (const auto& k : std::vector<Case>{
           {sixty + "y", "", "the title is over 60 characters"},
           {"", "", "the title is empty"},
           {" \xe2\x80\x8b ", "", "the title is empty"},
           {"evil\xe2\x80\xaetxt.exe", "",
            "the title holds a line separator or a direction override"},
           {"two\nlines", "", "the title holds a control character"},
           {"bad \xff", "", "the title is not valid UTF-8"},
           {"fine", std::string(151, 'd'), "the description is over 150 characters"},
           {"fine", "bell\x07", "the description holds a control character"},
       }) {
    auto r = collections_->Create(ann_, {"", k.title, k.description, false});
    ASSERT_FALSE(r.has_value()) << k.says;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
    EXPECT_EQ(r.error().message, k.says);
  }
  EXPECT_EQ(CountAll(), 1u);
}

TEST_F(CollectionTest, PrivateCollectionsShowOnlyToReadersOfTheirNamespace) {
  auto mine = Make(ann_, "Mine", /*is_private=*/true);
  auto team = Make(ann_, "Team", /*is_private=*/true, "acme");
  EXPECT_EQ(collections_->Get(Principal(), mine.slug).error().code, ErrorCode::NotFound);
  EXPECT_EQ(collections_->Get(bob_, mine.slug).error().code, ErrorCode::NotFound);
  EXPECT_TRUE(collections_->Get(ann_, mine.slug).has_value());
  EXPECT_TRUE(collections_->Get(Principal::Hub(), mine.slug).has_value()) << "site admin";
  auto seen = collections_->Get(bob_, team.slug);
  ASSERT_TRUE(seen.has_value()) << "bob reads acme";
  EXPECT_FALSE(seen->may_write);
  // bob cannot change what he may only read; he cannot tell a private one he cannot see.
  EXPECT_EQ(collections_->Update(bob_, team.slug, {.title = "x"}).error().code,
            ErrorCode::Forbidden);
  EXPECT_EQ(collections_->Delete(bob_, mine.slug).error().code, ErrorCode::NotFound);

  ASSERT_TRUE(collections_->Update(ann_, mine.slug, {.is_private = false}).has_value());
  EXPECT_TRUE(collections_->Get(Principal(), mine.slug).has_value());
}

TEST_F(CollectionTest, UpdateChangesOnlyWhatItIsGivenAndChecksEverythingFirst) {
  auto a = Make(ann_, "First");
  auto b = Make(ann_, "Second");
  auto updated = collections_->Update(ann_, a.slug,
                                      {.title = "New title",
                                       .description = "New description",
                                       .theme = "pink",
                                       .is_private = true});
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  EXPECT_EQ(updated->collection.title, "New title");
  EXPECT_EQ(updated->collection.description, "New description");
  EXPECT_EQ(updated->collection.theme, "pink");
  EXPECT_TRUE(updated->collection.is_private);
  EXPECT_NE(updated->slug, a.slug);
  EXPECT_EQ(updated->slug.substr(updated->slug.rfind('-')), a.slug.substr(a.slug.rfind('-')))
      << "same id";
  EXPECT_EQ(collections_->Get(ann_, a.slug).value().slug, updated->slug);

  auto cleared = collections_->Update(ann_, a.slug, {.description = ""});
  ASSERT_TRUE(cleared.has_value());
  EXPECT_EQ(cleared->collection.description, "");
  EXPECT_EQ(cleared->collection.title, "New title") << "unchanged";
  EXPECT_EQ(cleared->collection.theme, "pink");

  // A bad field refuses the whole update.
  EXPECT_EQ(collections_->Update(ann_, a.slug, {.title = "ok", .theme = "rainbow"}).error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(collections_->Update(ann_, a.slug, {.title = "ok", .position = -1}).error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(collections_->Update(ann_, a.slug, {.title = std::string(61, 't')}).error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(collections_->Update(ann_, a.slug, {.title = "Second"}).error().code,
            ErrorCode::Conflict);
  EXPECT_EQ(collections_->Get(ann_, a.slug).value().collection.title, "New title");

  // Position moves it in its owner's list.
  auto moved = collections_->Update(ann_, b.slug, {.position = 0});
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->collection.position, 0);
  EXPECT_EQ(collections_->Get(ann_, a.slug).value().collection.position, 1);
}

TEST_F(CollectionTest, ItemsAreAddedMovedNotedAndRemoved) {
  auto c = Make(ann_, "Mine");
  auto nested = Make(bob_, "Bobs");
  auto added = collections_->AddItem(ann_, c.slug, {"ann/pub", "model", "This is my model"});
  ASSERT_TRUE(added.has_value()) << added.error().message;
  ASSERT_EQ(added->items.size(), 1u);
  EXPECT_EQ(added->items[0].note, "This is my model");
  EXPECT_EQ(added->items[0].repo_type, RepoType::Model);
  ASSERT_TRUE(collections_->AddItem(ann_, c.slug, {"bob/data", "dataset", ""}).has_value());
  ASSERT_TRUE(collections_->AddItem(ann_, c.slug, {nested.slug, "collection", ""}).has_value());
  EXPECT_EQ(Items(Principal(), c.slug),
            (std::vector<std::string>{"model:ann/pub@0", "dataset:bob/data@1",
                                      "collection:" + nested.slug + "@2"}));

  // The same item twice is a conflict; a repo of another type is another (missing) item.
  EXPECT_EQ(AddError(ann_, c.slug, {"ann/pub", "model", ""}), ErrorCode::Conflict);
  EXPECT_EQ(AddError(ann_, c.slug, {"ann/pub", "dataset", ""}), ErrorCode::RepoNotFound);
  EXPECT_EQ(AddError(ann_, c.slug, {"ann/nope", "model", ""}), ErrorCode::RepoNotFound);
  EXPECT_EQ(AddError(ann_, c.slug, {"acme/secret", "model", ""}), ErrorCode::Internal)
      << "ann reads acme's private repo";
  EXPECT_EQ(AddError(ann_, c.slug, {"2307.09288", "paper", ""}), ErrorCode::BadRequest);
  EXPECT_EQ(AddError(ann_, c.slug, {"ann/pub", "widget", ""}), ErrorCode::BadRequest);
  EXPECT_EQ(AddError(ann_, c.slug, {"no-slash", "model", ""}), ErrorCode::BadRequest);
  EXPECT_EQ(AddError(ann_, c.slug, {"ann/..", "model", ""}), ErrorCode::BadRequest);
  EXPECT_EQ(AddError(ann_, c.slug, {c.slug, "collection", ""}), ErrorCode::BadRequest);
  EXPECT_EQ(AddError(ann_, c.slug, {"bob/x-c000000000000000000000ff", "collection", ""}),
            ErrorCode::NotFound);
  EXPECT_EQ(AddError(ann_, c.slug, {"bob/data", "space", std::string(501, 'n')}),
            ErrorCode::BadRequest);
  EXPECT_EQ(AddError(bob_, c.slug, {"bob/data", "space", ""}), ErrorCode::Forbidden);
  EXPECT_EQ(collections_->Get(ann_, c.slug).value().items.size(), 4u);

  // update_collection_item(position=1) of the first: it goes second.
  auto first = collections_->Get(ann_, c.slug).value().items[0];
  auto item_id = ObjectId(first.id, 'b');
  ASSERT_TRUE(collections_->UpdateItem(ann_, c.slug, item_id, {.note = "New note", .position = 1})
                  .has_value());
  auto now = collections_->Get(ann_, c.slug).value();
  EXPECT_EQ(now.items[0].repo_name, "data");
  EXPECT_EQ(now.items[1].repo_name, "pub");
  EXPECT_EQ(now.items[1].note, "New note");
  EXPECT_EQ(
      collections_->UpdateItem(ann_, c.slug, item_id, {.note = std::string(501, 'n')}).error().code,
      ErrorCode::BadRequest);
  EXPECT_EQ(collections_->UpdateItem(ann_, c.slug, item_id, {.position = -2}).error().code,
            ErrorCode::BadRequest);
  EXPECT_EQ(collections_->UpdateItem(ann_, c.slug, "nonsense", {.note = "x"}).error().code,
            ErrorCode::NotFound);
  EXPECT_EQ(collections_->UpdateItem(ann_, nested.slug, item_id, {.note = "x"}).error().code,
            ErrorCode::Forbidden)
      << "bob's collection";
  EXPECT_EQ(collections_->Get(ann_, c.slug).value().items[1].note, "New note");

  ASSERT_TRUE(collections_->DeleteItem(ann_, c.slug, item_id).has_value());
  EXPECT_EQ(collections_->DeleteItem(ann_, c.slug, item_id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(collections_->DeleteItem(ann_, c.slug, "zzz").error().code, ErrorCode::NotFound);
  auto left = collections_->Get(ann_, c.slug).value();
  ASSERT_EQ(left.items.size(), 3u);
  EXPECT_EQ(left.items[0].repo_name, "data");
  EXPECT_EQ(left.items[1].position, 1) << "renumbered";

  // Deleting the nested collection takes it out of this one.
  ASSERT_TRUE(collections_->Delete(bob_, nested.slug).has_value());
  EXPECT_EQ(collections_->Delete(bob_, nested.slug).error().code, ErrorCode::NotFound);
  EXPECT_EQ(collections_->Get(ann_, c.slug).value().items.size(), 2u);
}

TEST_F(CollectionTest, APrivateRepoInAPublicCollectionIsShownOnlyToItsReaders) {
  auto c = Make(ann_, "Public list");
  ASSERT_TRUE(collections_->AddItem(ann_, c.slug, {"ann/priv", "model", "secret"}).has_value());
  ASSERT_TRUE(collections_->AddItem(ann_, c.slug, {"acme/secret", "model", ""}).has_value());
  ASSERT_TRUE(collections_->AddItem(ann_, c.slug, {"ann/pub", "model", ""}).has_value());
  EXPECT_EQ(
      Items(ann_, c.slug),
      (std::vector<std::string>{"model:ann/priv@0", "model:acme/secret@1", "model:ann/pub@2"}));
  EXPECT_EQ(Items(bob_, c.slug),
            (std::vector<std::string>{"model:acme/secret@1", "model:ann/pub@2"}))
      << "bob reads acme, not ann's private repos";
  EXPECT_EQ(Items(Principal(), c.slug), std::vector<std::string>{"model:ann/pub@2"});
  // bob may not add a repo he cannot see; it reads as missing.
  auto bobs = Make(bob_, "Bobs");
  EXPECT_EQ(AddError(bob_, bobs.slug, {"ann/priv", "model", ""}), ErrorCode::RepoNotFound);
  // Nor a private collection he cannot see.
  auto hidden = Make(ann_, "Hidden", true);
  EXPECT_EQ(AddError(bob_, bobs.slug, {hidden.slug, "collection", ""}), ErrorCode::NotFound);
  // Listing by a private repo's id shows nothing to whoever cannot see it.
  CollectionListing by_item;
  by_item.items = {"models/ann/priv"};
  EXPECT_TRUE(collections_->List(bob_, by_item).value().items.empty());
  EXPECT_EQ(collections_->List(ann_, by_item).value().items.size(), 1u);
  // A deleted repo leaves the collection.
  ASSERT_TRUE(stores_.repos->Delete({RepoType::Model, "ann", "priv"}).has_value());
  EXPECT_EQ(Items(ann_, c.slug),
            (std::vector<std::string>{"model:acme/secret@0", "model:ann/pub@1"}));
}

TEST_F(CollectionTest, LimitsOfItemsAndOfCollectionsPerNamespace) {
  Open({.max_items = 2, .max_per_namespace = 2});
  auto c = Make(ann_, "One");
  Make(ann_, "Two");
  auto third = collections_->Create(ann_, {"", "Three", "", false});
  ASSERT_FALSE(third.has_value());
  EXPECT_EQ(third.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(third.error().message, "a namespace holds at most 2 collections");
  ASSERT_TRUE(collections_->AddItem(ann_, c.slug, {"ann/pub", "model", ""}).has_value());
  ASSERT_TRUE(collections_->AddItem(ann_, c.slug, {"bob/data", "dataset", ""}).has_value());
  auto over = collections_->AddItem(ann_, c.slug, {"ann/priv", "model", ""});
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().message, "a collection holds at most 2 items");
  EXPECT_EQ(collections_->Get(ann_, c.slug).value().items.size(), 2u);
}

TEST_F(CollectionTest, ListingsFilterSortPageAndPreviewFourItems) {
  auto a = Make(ann_, "A");
  auto b = Make(bob_, "B");
  auto p = Make(ann_, "P", /*is_private=*/true);
  for (const char* id : {"ann/pub", "ann/priv", "acme/secret"}) {
    ASSERT_TRUE(collections_->AddItem(ann_, a.slug, {id, "model", ""}).has_value());
  }
  ASSERT_TRUE(collections_->AddItem(ann_, a.slug, {"bob/data", "dataset", ""}).has_value());
  ASSERT_TRUE(collections_->AddItem(ann_, a.slug, {b.slug, "collection", ""}).has_value());
  ASSERT_TRUE(collections_->AddItem(bob_, b.slug, {"bob/data", "dataset", ""}).has_value());

  auto all = collections_->List(ann_, {}).value();
  ASSERT_EQ(all.items.size(), 3u);
  EXPECT_EQ(all.items[0].collection.title, "B") << "most recently updated first";
  for (const auto& v : all.items) {
    if (v.collection.title == "A") {
      EXPECT_EQ(v.items.size(), 4u) << "a preview of 4 of 5";
      EXPECT_EQ(v.collection.item_count, 5);
    }
  }
  EXPECT_EQ(collections_->List(Principal(), {}).value().items.size(), 2u) << "P is private";

  CollectionListing owners;
  owners.owners = {"ann"};
  EXPECT_EQ(collections_->List(bob_, owners).value().items.size(), 1u);
  CollectionListing by_item;
  by_item.items = {"datasets/bob/data"};
  EXPECT_EQ(collections_->List(Principal(), by_item).value().items.size(), 2u);
  by_item.items = {"collections/" + b.slug};
  auto holding = collections_->List(Principal(), by_item).value();
  ASSERT_EQ(holding.items.size(), 1u);
  EXPECT_EQ(holding.items[0].collection.title, "A");
  by_item.items = {"models/ann/nothing"};
  EXPECT_TRUE(collections_->List(Principal(), by_item).value().items.empty());

  CollectionListing paged;
  paged.limit = 2;
  paged.sort = "upvotes";
  auto first = collections_->List(ann_, paged).value();
  ASSERT_EQ(first.items.size(), 2u);
  ASSERT_FALSE(first.next_cursor.empty());
  paged.cursor = first.next_cursor;
  auto second = collections_->List(ann_, paged).value();
  ASSERT_EQ(second.items.size(), 1u);
  EXPECT_TRUE(second.next_cursor.empty());

  for (auto bad : std::vector<CollectionListing>{
           {.sort = "likes"},
           {.items = {"papers/2311.12983"}},
           {.items = {"models/only-one-part"}},
           {.items = {"model/ann/pub"}},
           {.cursor = "x"},
           {.owners = {std::string(97, 'o')}},
       }) {
    EXPECT_EQ(collections_->List(ann_, bad).error().code, ErrorCode::BadRequest);
  }

  // A profile: the namespace's collections in its order, as the viewer may see them.
  auto profile = collections_->OfNamespace(Principal(), "ann", 100).value();
  ASSERT_EQ(profile.size(), 1u);
  EXPECT_EQ(profile[0].collection.title, "A");
  EXPECT_EQ(collections_->OfNamespace(ann_, "ann", 100).value().size(), 2u);
  (void)p;
}

}  // namespace
}  // namespace hangar::services
