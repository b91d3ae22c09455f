#include "services/collection/collection_service.h"

#include <algorithm>
#include <cctype>

#include "core/util.h"

namespace hangar::services {

using db::CollectionItemKind;
using db::CollectionRecord;

namespace {

// list_collections' filters, at most.
constexpr size_t kMaxFilterValues = 100;
constexpr size_t kMaxOwnerName = 96;

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

Error NoSuchCollection(std::string_view slug) {
  return MakeError(ErrorCode::NotFound,
                   "collection '" + FirstCodePoints(ValidUtf8(slug), 200) + "' not found");
}

// The title as collections keep it: trimmed, core's TitleProblem rules. Errors: BadRequest.
Result<std::string> CheckTitle(std::string_view title) {
  std::string t(TrimBlanks(title));
  if (auto problem = TitleProblem(t, kMaxCollectionTitle)) return Bad("the title " + *problem);
  return t;
}

// Plain text shown on pages (a description, a note): line breaks allowed, at most `max`
// characters. Errors: BadRequest naming `what`.
Result<std::string> CheckText(std::string_view text, size_t max, std::string_view what) {
  std::string t(TrimBlanks(text));
  if (auto problem = ShownTextProblem(t, true)) {
    return Bad("the " + std::string(what) + " " + std::string(*problem));
  }
  if (CodePoints(t) > max) {
    return Bad("the " + std::string(what) + " is over " + std::to_string(max) + " characters");
  }
  return t;
}

Result<void> CheckTheme(std::string_view theme) {
  for (std::string_view t : kCollectionThemes) {
    if (t == theme) return {};
  }
  std::string known;
  for (std::string_view t : kCollectionThemes)
    known += (known.empty() ? "" : ", ") + std::string(t);
  return Bad("'theme' is one of: " + known);
}

Result<void> CheckPosition(const std::optional<int64_t>& position) {
  if (position && *position < 0) return Bad("'position' is an index from 0");
  return {};
}

// The id of a slug "<ns>/<words>-<24 hex>" and its namespace; nullopt when malformed.
std::optional<std::pair<std::string_view, int64_t>> ParseSlug(std::string_view slug) {
  const size_t slash = slug.find('/');
  const size_t dash = slug.rfind('-');
  if (slash == std::string_view::npos || slash == 0 || dash == std::string_view::npos ||
      dash < slash) {
    return std::nullopt;
  }
  // The words may be empty ("<ns>/-<hex>" is not made, but "<ns>/<hex>" is refused).
  auto id = ParseObjectId(slug.substr(dash + 1), kCollectionIdKind);
  if (!id) return std::nullopt;
  return std::pair{slug.substr(0, slash), *id};
}

}  // namespace

std::string CollectionSlug(std::string_view owner, std::string_view title, int64_t id) {
  std::string words;
  bool gap = false;
  for (char ch : title) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) && c < 0x80) {
      if (gap && !words.empty()) words += '-';
      words += static_cast<char>(std::tolower(c));
      gap = false;
    } else {
      gap = true;
    }
  }
  // A title of no ASCII letter or digit still makes a slug the hub reads back.
  if (words.empty()) words = "collection";
  return std::string(owner) + "/" + words + "-" + ObjectId(id, kCollectionIdKind);
}

std::string CollectionSlug(const CollectionRecord& c) {
  return CollectionSlug(c.owner, c.title, c.id);
}

std::string RefSlug(const db::CollectionItemRecord& item) {
  return CollectionSlug(item.ref_owner, item.ref_title, item.ref_id);
}

CollectionService::CollectionService(RepoService& repos, AccessPolicy& access,
                                     AccountService& accounts, db::CollectionStore& store,
                                     CollectionOptions options)
    : repos_(repos),
      access_(access),
      accounts_(accounts),
      store_(store),
      options_(std::move(options)) {}

int64_t CollectionService::Now() const { return options_.now ? options_.now() : NowUnix(); }

bool CollectionService::MaySee(const Principal& who, const CollectionRecord& c) {
  if (!c.is_private) return true;
  return who.repo_scope == 0 && access_.NamespaceAccess(who, c.owner) >= Access::Read;
}

Result<void> CollectionService::CheckWriter(const Principal& who, std::string_view ns) {
  if (who.anonymous || who.user_id == 0) {
    return MakeError(ErrorCode::Unauthorized, "sign in to change collections");
  }
  if (who.deploy_key_id != 0 || who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "a key bound to one repo cannot change collections");
  }
  if (who.role == TokenRole::Read) {
    return MakeError(ErrorCode::Forbidden,
                     "a read token cannot change collections; use a write token");
  }
  if (access_.NamespaceAccess(who, ns) < Access::Write) {
    return MakeError(ErrorCode::Forbidden,
                     "you may not change the collections of '" + std::string(ns) + "'");
  }
  return {};
}

Result<CollectionRecord> CollectionService::Find(const Principal& who, std::string_view slug) {
  auto parsed = ParseSlug(slug);
  if (!parsed) return NoSuchCollection(slug);
  auto c = store_.Find(parsed->second);
  if (!c) {
    if (c.error().code == ErrorCode::NotFound) return NoSuchCollection(slug);
    return std::move(c).error();
  }
  // The namespace part must be the owner's; the words after it are not read.
  if (c->owner != parsed->first || !MaySee(who, *c)) return NoSuchCollection(slug);
  return std::move(*c);
}

Result<CollectionRecord> CollectionService::FindToWrite(const Principal& who,
                                                        std::string_view slug) {
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord c, Find(who, slug));
  HANGAR_TRY(CheckWriter(who, c.owner));
  return c;
}

Result<void> CollectionService::CheckMayChange(const Principal& who, std::string_view slug) {
  HANGAR_TRY(FindToWrite(who, slug));
  return {};
}

Result<CollectionView> CollectionService::View(const Principal& who, CollectionRecord c,
                                               int limit) {
  CollectionView v;
  HANGAR_ASSIGN_OR_RETURN(db::CollectionVisibility visible, access_.VisibilityOf(who));
  HANGAR_ASSIGN_OR_RETURN(v.items, store_.Items(c.id, visible, limit));
  v.slug = CollectionSlug(c);
  v.may_write = CheckWriter(who, c.owner).has_value();
  v.collection = std::move(c);
  return v;
}

Result<CollectionView> CollectionService::Get(const Principal& who, std::string_view slug) {
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord c, Find(who, slug));
  return View(who, std::move(c), static_cast<int>(options_.max_items));
}

Result<CreatedCollection> CollectionService::Create(const Principal& who, const NewCollection& in) {
  const std::string ns = in.ns.empty() ? who.name : in.ns;
  HANGAR_TRY(CheckWriter(who, ns));
  HANGAR_ASSIGN_OR_RETURN(std::string title, CheckTitle(in.title));
  HANGAR_ASSIGN_OR_RETURN(std::string description,
                          CheckText(in.description, kMaxCollectionDescription, "description"));
  CollectionRecord c;
  HANGAR_ASSIGN_OR_RETURN(db::NamespaceKind kind, accounts_.NamespaceKind(ns));
  if (kind == db::NamespaceKind::User) {
    HANGAR_ASSIGN_OR_RETURN(auto user, accounts_.FindUser(ns));
    c.owner_id = user.id;
  } else if (kind == db::NamespaceKind::Org) {
    HANGAR_ASSIGN_OR_RETURN(auto org, accounts_.FindOrg(ns));
    c.owner_id = org.id;
  } else {
    return MakeError(ErrorCode::NotFound, "no user or organization named '" + ns + "'");
  }
  c.title = std::move(title);
  c.description = std::move(description);
  c.is_private = in.is_private;
  c.theme = std::string(kCollectionThemes[0]);
  c.created_at = Now();
  auto made = store_.Create(c, options_.max_per_namespace);
  if (!made && made.error().code == ErrorCode::Conflict) {
    // The namespace has that title: the client's exists_ok reads its slug from the 409.
    HANGAR_ASSIGN_OR_RETURN(auto id, store_.FindByTitle(c.owner_id, c.title));
    if (!id) return std::move(made).error();  // deleted meanwhile: the client may try again
    HANGAR_ASSIGN_OR_RETURN(CollectionRecord existing, store_.Find(*id));
    HANGAR_ASSIGN_OR_RETURN(auto view, View(who, std::move(existing), 0));
    return CreatedCollection{std::move(view), true};
  }
  if (!made) return std::move(made).error();
  HANGAR_ASSIGN_OR_RETURN(auto view, View(who, std::move(*made), 0));
  return CreatedCollection{std::move(view), false};
}

Result<CollectionView> CollectionService::Update(const Principal& who, std::string_view slug,
                                                 const CollectionChanges& ch) {
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord c, FindToWrite(who, slug));
  // Every field is checked before anything is stored: a bad one changes nothing.
  if (ch.title) {
    HANGAR_ASSIGN_OR_RETURN(c.title, CheckTitle(*ch.title));
  }
  if (ch.description) {
    HANGAR_ASSIGN_OR_RETURN(c.description,
                            CheckText(*ch.description, kMaxCollectionDescription, "description"));
  }
  if (ch.theme) {
    HANGAR_TRY(CheckTheme(*ch.theme));
    c.theme = *ch.theme;
  }
  HANGAR_TRY(CheckPosition(ch.position));
  if (ch.is_private) c.is_private = *ch.is_private;
  c.updated_at = Now();
  HANGAR_TRY(store_.Update(c));
  if (ch.position) HANGAR_TRY(store_.Move(c.id, *ch.position, c.updated_at));
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord updated, store_.Find(c.id));
  return View(who, std::move(updated), static_cast<int>(options_.max_items));
}

Result<void> CollectionService::Delete(const Principal& who, std::string_view slug) {
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord c, FindToWrite(who, slug));
  HANGAR_ASSIGN_OR_RETURN(bool deleted, store_.Delete(c.id));
  if (!deleted) return NoSuchCollection(slug);
  return {};
}

Result<CollectionView> CollectionService::AddItem(const Principal& who, std::string_view slug,
                                                  const NewCollectionItem& in) {
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord c, FindToWrite(who, slug));
  auto kind = db::ParseCollectionItemKind(in.type);
  if (!kind) {
    if (in.type == "paper" || in.type == "bucket") {
      return Bad("this hub has no " + in.type +
                 "s: an item is a model, dataset, space or collection");
    }
    return Bad("unknown item type '" + FirstCodePoints(ValidUtf8(in.type), 40) +
               "': an item is a model, dataset, space or collection");
  }
  HANGAR_ASSIGN_OR_RETURN(std::string note, CheckText(in.note, kMaxCollectionNote, "note"));
  int64_t target = 0;
  if (*kind == CollectionItemKind::Collection) {
    HANGAR_ASSIGN_OR_RETURN(CollectionRecord ref, Find(who, in.id));
    if (ref.id == c.id) return Bad("a collection cannot hold itself");
    target = ref.id;
  } else {
    const size_t slash = in.id.find('/');
    const RepoType type = *kind == CollectionItemKind::Model     ? RepoType::Model
                          : *kind == CollectionItemKind::Dataset ? RepoType::Dataset
                                                                 : RepoType::Space;
    if (slash == std::string::npos) {
      return Bad("'" + FirstCodePoints(ValidUtf8(in.id), 200) + "' is not a repo id (ns/name)");
    }
    HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoId::Parse(type, std::string_view(in.id).substr(0, slash),
                                                     std::string_view(in.id).substr(slash + 1)));
    // Only a repo the caller may see: RepoNotFound for the others, as for a missing one.
    HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.OpenMetadata(who, id));
    target = repo.record.id;
  }
  HANGAR_TRY(store_.AddItem(c.id, *kind, target, note, Now(), options_.max_items));
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord updated, store_.Find(c.id));
  return View(who, std::move(updated), static_cast<int>(options_.max_items));
}

Result<CollectionView> CollectionService::UpdateItem(const Principal& who, std::string_view slug,
                                                     std::string_view item_id,
                                                     const CollectionItemChanges& ch) {
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord c, FindToWrite(who, slug));
  auto item = ParseObjectId(item_id, kCollectionItemIdKind);
  if (!item) return MakeError(ErrorCode::NotFound, "no item with that id in the collection");
  db::CollectionItemUpdate u;
  if (ch.note) {
    HANGAR_ASSIGN_OR_RETURN(u.note, CheckText(*ch.note, kMaxCollectionNote, "note"));
  }
  HANGAR_TRY(CheckPosition(ch.position));
  u.position = ch.position;
  auto updated = store_.UpdateItem(c.id, *item, u, Now());
  if (!updated && updated.error().code == ErrorCode::NotFound) {
    return MakeError(ErrorCode::NotFound, "no item with that id in the collection");
  }
  HANGAR_TRY(std::move(updated));
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord now, store_.Find(c.id));
  return View(who, std::move(now), static_cast<int>(options_.max_items));
}

Result<CollectionView> CollectionService::DeleteItem(const Principal& who, std::string_view slug,
                                                     std::string_view item_id) {
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord c, FindToWrite(who, slug));
  auto item = ParseObjectId(item_id, kCollectionItemIdKind);
  HANGAR_ASSIGN_OR_RETURN(bool deleted,
                          item ? store_.DeleteItem(c.id, *item, Now()) : Result<bool>(false));
  // The client's missing_ok reads a 404.
  if (!deleted) return MakeError(ErrorCode::NotFound, "no item with that id in the collection");
  HANGAR_ASSIGN_OR_RETURN(CollectionRecord now, store_.Find(c.id));
  return View(who, std::move(now), static_cast<int>(options_.max_items));
}

Result<CollectionPage> CollectionService::List(const Principal& who, const CollectionListing& in) {
  if (in.sort != "" && in.sort != "lastModified" && in.sort != "trending" && in.sort != "upvotes") {
    return Bad("'sort' is one of: lastModified, trending, upvotes");
  }
  if (in.owners.size() > kMaxFilterValues || in.items.size() > kMaxFilterValues) {
    return Bad("at most " + std::to_string(kMaxFilterValues) + " owners and items");
  }
  db::CollectionQuery q;
  for (const auto& o : in.owners) {
    if (o.size() > kMaxOwnerName || ShownTextProblem(o)) return Bad("'owner' is not a name");
    q.owners.push_back(o);
  }
  q.by_item = !in.items.empty();
  for (const auto& item : in.items) {
    const size_t slash = item.find('/');
    const std::string_view prefix = std::string_view(item).substr(0, slash);
    const std::string_view rest =
        slash == std::string::npos ? std::string_view() : std::string_view(item).substr(slash + 1);
    if (prefix == "collections") {
      // A collection the caller may not see matches nothing, as one that does not exist.
      if (auto ref = Find(who, rest)) q.collection_ids.push_back(ref->id);
      continue;
    }
    const size_t inner = rest.find('/');
    auto type = ParseRepoType(prefix);
    if (!type || prefix.back() != 's' || inner == std::string_view::npos) {
      return Bad("'item' is <models|datasets|spaces>/<ns>/<name> or collections/<slug>, not '" +
                 FirstCodePoints(ValidUtf8(item), 200) + "'");
    }
    HANGAR_ASSIGN_OR_RETURN(RepoId id,
                            RepoId::Parse(*type, rest.substr(0, inner), rest.substr(inner + 1)));
    auto repo = repos_.OpenMetadata(who, id);
    if (repo) {
      q.repo_ids.push_back(repo->record.id);
    } else if (repo.error().code != ErrorCode::RepoNotFound) {
      return std::move(repo).error();
    }
  }
  if (!in.cursor.empty()) {
    auto parsed = ParseKeysetCursor(in.cursor);
    if (!parsed) return Bad("malformed cursor");
    q.after = {parsed->first, parsed->second, true};
  }
  HANGAR_ASSIGN_OR_RETURN(q.visible, access_.VisibilityOf(who));
  // The hub keeps no upvotes: every collection has 0, so trending and upvotes order as
  // lastModified does (ties broken by the most recent change).
  q.limit = std::clamp(in.limit, 1, 1000) + 1;
  HANGAR_ASSIGN_OR_RETURN(auto rows, store_.List(q));
  CollectionPage page;
  if (static_cast<int>(rows.size()) >= q.limit) {
    rows.pop_back();
    page.next_cursor = KeysetCursor(rows.back().updated_at, rows.back().id);
  }
  for (auto& c : rows) {
    HANGAR_ASSIGN_OR_RETURN(auto view, View(who, std::move(c), kCollectionPreviewItems));
    page.items.push_back(std::move(view));
  }
  return page;
}

Result<std::vector<CollectionView>> CollectionService::OfNamespace(const Principal& who,
                                                                   std::string_view ns, int limit) {
  db::CollectionQuery q;
  q.owners.emplace_back(ns);
  q.owner_order = true;
  q.limit = limit;
  HANGAR_ASSIGN_OR_RETURN(q.visible, access_.VisibilityOf(who));
  HANGAR_ASSIGN_OR_RETURN(auto rows, store_.List(q));
  std::vector<CollectionView> out;
  for (auto& c : rows) {
    HANGAR_ASSIGN_OR_RETURN(auto view, View(who, std::move(c), kCollectionPreviewItems));
    out.push_back(std::move(view));
  }
  return out;
}

}  // namespace hangar::services
