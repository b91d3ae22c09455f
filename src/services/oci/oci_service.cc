// OciService: names → repos, access, blobs, tags and the catalog. Uploads are in
// oci_uploads.cc, manifests and referrers in oci_manifests.cc.

#include "services/oci/oci_service.h"

#include <algorithm>
#include <cctype>

#include "core/util.h"

namespace hangar::services {

namespace {

// Tags or names listed when the client gives no `n` (oci.md §6.1 wants all of them).
constexpr int kMaxList = 100000;
// Repos the catalog looks at (nice to have; docs/oci.md).
constexpr int kCatalogScan = 10000;

Error NameUnknown(std::string_view name) {
  return MakeError(ErrorCode::RepoNotFound,
                   "repository name not known to registry: " + std::string(name.substr(0, 300)));
}

}  // namespace

int64_t OciService::Now() const { return options_.now ? options_.now() : NowUnix(); }

Result<std::optional<RepoId>> OciService::FindRepo(const OciName& name) {
  HANGAR_ASSIGN_OR_RETURN(auto found, repo_store_.FindFolded(name.type, name.ns, name.name));
  if (found.empty()) return std::optional<RepoId>();
  if (found.size() > 1) {
    return MakeError(ErrorCode::NameInvalid, "registry name " + name.ns + "/" + name.name +
                                                 " matches " + found[0].Id().UrlPath() + " and " +
                                                 found[1].Id().UrlPath() +
                                                 ", which differ only in case");
  }
  return std::optional<RepoId>(found[0].Id());
}

std::optional<std::string> OciService::CreatableNamespace(const Principal& who,
                                                          std::string_view ns) {
  if (!who.CanWrite()) return std::nullopt;
  std::optional<std::string> spelled;
  if (AsciiLower(who.name) == ns) {
    spelled = who.name;
  } else if (auto orgs = users_.ListOrgsOfUser(who.user_id); orgs) {
    for (const auto& m : *orgs) {
      if (AsciiLower(m.org.name) == ns) spelled = m.org.name;
    }
  }
  if (!spelled && who.is_admin) {
    if (auto u = users_.FindUserByName(ns); u)
      spelled = u->name;
    else if (auto o = users_.FindOrgByName(ns); o)
      spelled = o->name;
  }
  if (!spelled || access_.NamespaceAccess(who, *spelled) < Access::Write) return std::nullopt;
  return spelled;
}

Result<RepoHandle> OciService::OpenRepo(const Principal& who, std::string_view name, Access needed,
                                        IfMissing if_missing) {
  const bool create = if_missing != IfMissing::Fail;
  auto parsed = ParseOciName(name);
  if (!parsed) {
    // A well-formed name that is no hub repo's ("conformance", "a/b/c") names nothing a
    // read could find: 404, as for any unknown repository. Writes learn why it is refused.
    if (!create && needed == Access::Read && MatchesOciNameGrammar(name)) {
      return NameUnknown(name);
    }
    return std::move(parsed).error();
  }
  auto cannot_create = [&] {
    return MakeError(ErrorCode::Forbidden,
                     "you cannot create repositories in namespace '" + parsed->ns + "'");
  };
  HANGAR_ASSIGN_OR_RETURN(auto id, FindRepo(*parsed));
  if (id) {
    auto repo = repos_.Open(who, *id, needed);
    if (repo || repo.error().code != ErrorCode::RepoNotFound) return repo;
    // A repo the caller may not see answers exactly as a missing one: same message (the
    // hub's names the stored spelling), and for a push the same refusal to create it.
    if (create && !who.anonymous && !CreatableNamespace(who, parsed->ns)) return cannot_create();
    return NameUnknown(name);
  }
  if (!create) return NameUnknown(name);
  auto ns = CreatableNamespace(who, parsed->ns);
  if (!ns) {
    if (who.anonymous) return NameUnknown(name);
    return cannot_create();
  }
  auto rid = RepoId::Parse(parsed->type, *ns, parsed->name);
  if (!rid) return MakeError(ErrorCode::NameInvalid, rid.error().message);
  if (if_missing == IfMissing::CheckOnly) return RepoHandle{};
  // Public, as the hub's create default. A concurrent push may have created it first.
  auto created = repos_.Create(who, *rid, /*is_private=*/false);
  if (!created && created.error().code != ErrorCode::Conflict) return std::move(created).error();
  return repos_.Open(who, *rid, needed);
}

Result<Access> OciService::AccessFor(const Principal& who, std::string_view name) {
  auto valid = ParseOciName(name);
  if (!valid) {
    // A well-formed name that can never be a hub repo ("conformance"): granting pull on
    // it reveals nothing, and lets Bearer clients hear the 404 a read of it gets.
    if (MatchesOciNameGrammar(name)) return Access::Read;
    return std::move(valid).error();
  }
  const OciName& parsed = *valid;
  HANGAR_ASSIGN_OR_RETURN(auto id, FindRepo(parsed));
  if (id) {
    HANGAR_ASSIGN_OR_RETURN(auto repo, repos_.Open(who, *id, Access::Read));
    return repo.access;
  }
  if (CreatableNamespace(who, parsed.ns)) return Access::Write;
  return NameUnknown(name);
}

Result<void> OciService::CheckPush(const Principal& who, std::string_view name) {
  HANGAR_TRY(OpenRepo(who, name, Access::Write, IfMissing::CheckOnly));
  return {};
}

Result<std::optional<std::pair<Sha256, uint64_t>>> OciService::LinkedBlob(const RepoHandle& repo,
                                                                          const OciDigest& digest) {
  using Out = std::optional<std::pair<Sha256, uint64_t>>;
  Sha256 sha;
  if (digest.algorithm == "sha256") {
    sha = *Sha256::ParseHex(digest.encoded);
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto alias, oci_.FindAlias(digest.String()));
    if (!alias) return Out();
    sha = alias->first;
  }
  HANGAR_ASSIGN_OR_RETURN(auto oci_size, oci_.BlobLinked(repo.record.id, sha));
  if (oci_size) return Out(std::pair(sha, *oci_size));
  HANGAR_ASSIGN_OR_RETURN(auto lfs_size, lfs_.IsLinked(repo.record.id, sha));
  if (lfs_size) return Out(std::pair(sha, *lfs_size));
  return Out();
}

Result<OciBlobRead> OciService::StatBlob(const Principal& who, std::string_view name,
                                         std::string_view digest) {
  return OpenBlob(who, name, digest, nullptr);
}

Result<OciBlobRead> OciService::OpenBlob(const Principal& who, std::string_view name,
                                         std::string_view digest, const OciRangeChooser& choose) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Read));
  HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseDigest(digest));
  OciBlobRead out;
  out.digest = parsed.String();
  auto pick = [&](uint64_t size) -> Result<storage::ResolvedRange> {
    out.size = size;
    storage::ByteRange range;
    if (choose) {
      HANGAR_ASSIGN_OR_RETURN(range, choose(size));
    }
    return storage::ResolveRange(range, size);
  };
  HANGAR_ASSIGN_OR_RETURN(auto linked, LinkedBlob(repo, parsed));
  if (linked) {
    HANGAR_ASSIGN_OR_RETURN(auto window, pick(linked->second));
    out.offset = window.offset;
    out.length = window.length;
    if (choose) {
      HANGAR_ASSIGN_OR_RETURN(
          out.body,
          blobs_.Open(linked->first, storage::ByteRange::Window(window.offset, window.length)));
    }
    return out;
  }
  // Not pushed here: perhaps a small git file of a projected revision (oci.md §12).
  if (parsed.algorithm == "sha256") {
    Sha256 sha = *Sha256::ParseHex(parsed.encoded);
    HANGAR_ASSIGN_OR_RETURN(auto projected, projection_.OpenBlob(repo, sha, {}));
    if (projected) {
      HANGAR_ASSIGN_OR_RETURN(auto window, pick(projected->size));
      out.offset = window.offset;
      out.length = window.length;
      if (!choose) return out;
      if (window.offset == 0 && window.length == projected->size) {
        out.body = std::move(projected->body);
        return out;
      }
      HANGAR_ASSIGN_OR_RETURN(
          auto again, projection_.OpenBlob(
                          repo, sha, storage::ByteRange::Window(window.offset, window.length)));
      if (again) {
        out.body = std::move(again->body);
        return out;
      }
    }
  }
  return MakeError(ErrorCode::BlobUnknown,
                   "blob " + parsed.String() + " is unknown to repository " + std::string(name));
}

Result<void> OciService::DeleteBlob(const Principal& who, std::string_view name,
                                    std::string_view digest) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Write));
  HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseDigest(digest));
  std::optional<Sha256> sha;
  if (parsed.algorithm == "sha256") {
    sha = Sha256::ParseHex(parsed.encoded);
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto alias, oci_.FindAlias(parsed.String()));
    if (alias) sha = alias->first;
  }
  if (sha) {
    HANGAR_ASSIGN_OR_RETURN(bool removed, oci_.UnlinkBlob(repo.record.id, *sha));
    if (removed) return {};
  }
  return MakeError(
      ErrorCode::BlobUnknown,
      "blob " + parsed.String() + " was not pushed to repository " + std::string(name));
}

Result<OciNamePage> OciService::ListTags(const Principal& who, std::string_view name,
                                         std::optional<int> n, std::string_view last) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(who, name, Access::Read));
  const int limit = std::clamp(n.value_or(kMaxList), 0, kMaxList);
  OciNamePage page;
  if (limit == 0) return page;
  HANGAR_ASSIGN_OR_RETURN(auto pushed, oci_.ListTags(repo.record.id, last, limit + 1));
  HANGAR_ASSIGN_OR_RETURN(auto revisions, projection_.RevisionTags(repo));
  std::vector<std::string> merged;
  merged.reserve(pushed.size() + revisions.size());
  auto after = std::upper_bound(revisions.begin(), revisions.end(), std::string(last));
  std::set_union(pushed.begin(), pushed.end(), after, revisions.end(), std::back_inserter(merged));
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  page.more = merged.size() > static_cast<size_t>(limit);
  if (page.more) merged.resize(static_cast<size_t>(limit));
  page.names = std::move(merged);
  return page;
}

Result<OciNamePage> OciService::Catalog(const Principal& who, std::optional<int> n,
                                        std::string_view last) {
  const int limit = std::clamp(n.value_or(kMaxList), 0, kMaxList);
  std::vector<std::string> names;
  db::RepoQuery q;
  q.sort = db::RepoSort::Id;
  q.descending = false;
  q.limit = 1000;
  for (int scanned = 0; scanned < kCatalogScan;) {
    HANGAR_ASSIGN_OR_RETURN(auto got, repos_.List(who, q));
    for (const auto& r : got.items) {
      std::string oci_name = OciNameOf(r.Id());
      if (oci_name > last && ParseOciName(oci_name)) names.push_back(std::move(oci_name));
    }
    scanned += static_cast<int>(got.items.size());
    if (got.next_cursor.empty()) break;
    q.cursor = got.next_cursor;
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  OciNamePage page;
  page.more = names.size() > static_cast<size_t>(limit);
  if (page.more) names.resize(static_cast<size_t>(limit));
  page.names = std::move(names);
  return page;
}

}  // namespace hangar::services
