#include "services/mirror/upstream_cache.h"

#include <fnmatch.h>

#include <algorithm>
#include <boost/json.hpp>

#include "core/log.h"
#include "core/util.h"
#include "net/http_client.h"

namespace hangar::services {

namespace json = boost::json;

namespace {

// Hub names are case-insensitive (the public hub's are): "Meta/x" is "meta/x" to a rule.
bool Matches(const std::vector<std::string>& patterns, const std::string& path) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return ::fnmatch(p.c_str(), path.c_str(), FNM_CASEFOLD) == 0;
  });
}

constexpr size_t kMaxRepoInfo = 1 << 20;

// Runs `work` once for all callers that ask for `key` while it runs; each gets its result.
template <typename T, typename Work>
Result<T> Once(std::mutex& mu, std::map<std::string, std::shared_future<Result<T>>>& flights,
               const std::string& key, Work work) {
  std::promise<Result<T>> promise;
  std::shared_future<Result<T>> running;
  {
    std::lock_guard lock(mu);
    auto it = flights.find(key);
    if (it != flights.end()) {
      running = it->second;
    } else {
      flights.emplace(key, promise.get_future().share());
    }
  }
  if (running.valid()) return running.get();
  Result<T> result = work();
  {
    std::lock_guard lock(mu);
    flights.erase(key);
  }
  promise.set_value(result);
  return result;
}

// The user a principal reads for: none for anonymous callers and deploy keys (a user
// bound to one repo, by `git-lfs-authenticate` over SSH, reads for themselves).
int64_t UserOf(const Principal& who) {
  return who.anonymous || who.deploy_key_id != 0 ? 0 : who.user_id;
}

// The hub itself (Principal::Hub: its jobs), which reads for no user: no verdict applies.
bool IsHub(const Principal& who) {
  return !who.anonymous && who.is_admin && who.user_id == 0 && who.deploy_key_id == 0;
}

constexpr int64_t kMaxVerdicts = 100'000;

}  // namespace

UpstreamCache::UpstreamCache(MirrorService& mirrors, db::MirrorStore& store,
                             UpstreamOptions options)
    : mirrors_(mirrors), store_(store), options_(std::move(options)) {}

int64_t UpstreamCache::Now() const { return options_.now_unix ? options_.now_unix() : NowUnix(); }

Result<int> UpstreamCache::Get(const std::string& base, const std::string& path,
                               const std::string& token, std::string& body) {
  net::HttpRequest req;
  req.url = base + path;
  req.timeout = options_.timeout;
  req.headers.emplace_back("Accept", "application/json");
  if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);
  req.low_speed_bytes = 1024;
  net::HttpClient client;
  body.clear();
  net::BodySink sink = [&body](std::span<const char> data) -> Result<void> {
    if (body.size() + data.size() > kMaxRepoInfo)
      return MakeError(ErrorCode::BadGateway, "the upstream's answer is over 1 MiB");
    body.append(data.data(), data.size());
    return {};
  };
  HANGAR_ASSIGN_OR_RETURN(net::HttpResponse res, client.Perform(req, &sink));
  return res.status;
}

Result<UpstreamCache::Seen> UpstreamCache::Ask(const std::string& base, const RepoId& id,
                                               const std::string& token) {
  std::string body;
  HANGAR_ASSIGN_OR_RETURN(
      int status,
      Get(base, "/api/" + std::string(RepoCollection(id.type)) + "/" + id.Id(), token, body));
  if (status == 401 || status == 403 || status == 404) return Seen{};
  if (status != 200) {
    return MakeError(ErrorCode::BadGateway,
                     "the upstream " + base + " answered " + std::to_string(status));
  }
  boost::system::error_code ec;
  json::value info = json::parse(body, ec);
  if (ec || !info.is_object()) {
    return MakeError(ErrorCode::BadGateway, "the upstream " + base + " sent no repo info");
  }
  const json::object& o = info.get_object();
  // The repo asked for, exactly (not a case variant the upstream also answers for).
  const json::value* name = o.if_contains("id");
  if (name == nullptr || !name->is_string() || name->get_string() != id.Id()) return Seen{};
  // Public only when the upstream says so plainly: anything else is refused (fail closed).
  const json::value* priv = o.if_contains("private");
  const json::value* gated = o.if_contains("gated");
  const bool not_private = priv != nullptr && priv->is_bool() && !priv->get_bool();
  const bool not_gated =
      gated == nullptr || gated->is_null() || (gated->is_bool() && !gated->get_bool());
  if (not_private && not_gated) return Seen{Answer::Public, false};
  return Seen{Answer::Refused, !not_private};
}

Result<bool> UpstreamCache::CanRead(const std::string& base, const RepoId& id,
                                    const std::string& token) {
  std::string body;
  HANGAR_ASSIGN_OR_RETURN(
      int status,
      Get(base, "/api/" + std::string(RepoCollection(id.type)) + "/" + id.Id() + "/auth-check",
          token, body));
  if (status == 200) return true;
  if (status == 401 || status == 403 || status == 404) return false;
  return MakeError(ErrorCode::BadGateway,
                   "the upstream " + base + " answered " + std::to_string(status));
}

Result<bool> UpstreamCache::Materialize(const Principal& who, const RepoId& id) {
  if (options_.urls.empty()) return false;
  const std::string path = id.UrlPath();
  if (Matches(options_.deny, path)) {
    return MakeError(ErrorCode::Forbidden,
                     path + " is not served from the upstream hub (denied by [upstream] deny)");
  }
  if (!options_.allow.empty() && !Matches(options_.allow, path)) return false;
  if (options_.is_local_namespace && options_.is_local_namespace(id.ns)) return false;
  const int64_t user = UserOf(who);
  std::map<std::string, std::string> tokens;
  if (user != 0) {
    HANGAR_ASSIGN_OR_RETURN(auto mine, store_.ListUpstreamTokens(user));
    for (auto& t : mine) tokens.emplace(std::move(t.upstream), std::move(t.token));
  }
  // A reader with tokens may be let into what the upstreams refuse others: their answers
  // are their own.
  const std::string key = tokens.empty() ? path : path + "\n" + std::to_string(user);
  {
    std::lock_guard lock(mu_);
    auto it = absent_until_.find(key);
    if (it != absent_until_.end()) {
      if (it->second > Now()) return false;
      absent_until_.erase(it);
    }
  }
  HANGAR_ASSIGN_OR_RETURN(auto waiting, Wait());
  auto made = Once<bool>(mu_, repo_flights_, key, [&] { return Bring(id, user, tokens); });
  if (made && !*made) {
    std::lock_guard lock(mu_);
    absent_until_[key] = Now() + options_.negative_ttl_s;
  }
  return made;
}

Result<std::shared_ptr<void>> UpstreamCache::Wait() {
  std::lock_guard lock(mu_);
  if (waiting_ >= options_.max_waiting) {
    return MakeError(ErrorCode::Unavailable,
                     "the cache is busy fetching from its upstream hub; retry shortly");
  }
  ++waiting_;
  return std::shared_ptr<void>(nullptr, [this](void*) {
    std::lock_guard lock(mu_);
    --waiting_;
  });
}

Result<bool> UpstreamCache::StillServed(const RepoId& id, const db::MirrorRecord& m) {
  for (const auto& base : options_.urls) {
    if (m.url != base + "/" + id.UrlPath()) continue;
    if (!m.restricted) {
      HANGAR_ASSIGN_OR_RETURN(Seen seen, Ask(base, id, options_.token));
      return seen.answer == Answer::Public;
    }
    if (m.credential.empty()) return true;
    HANGAR_ASSIGN_OR_RETURN(bool can, CanRead(base, id, m.credential));
    if (!can) {
      // Its fetching token lost its access: the next reader the upstream admits lends theirs.
      Log("upstream")
          ->info("{}: the upstream refuses the token it fetched with; dropped", id.UrlPath());
      HANGAR_TRY(store_.SetCredential(m.id, ""));
    }
    return true;
  }
  return false;  // its upstream is no longer configured
}

Result<bool> UpstreamCache::Bring(const RepoId& id, int64_t user,
                                  const std::map<std::string, std::string>& tokens) {
  const std::string path = id.UrlPath();
  std::string unreachable;
  auto note = [&unreachable](const Error& e) {
    unreachable += (unreachable.empty() ? "" : "; ") + e.message;
  };
  for (const auto& base : options_.urls) {
    auto seen = Ask(base, id, options_.token);
    if (!seen) {
      note(seen.error());
      continue;
    }
    if (seen->answer == Answer::Public) return Create(id, base, options_.token, false, false, 0);
    auto token = tokens.find(base);
    if (token == tokens.end()) {
      if (seen->answer == Answer::Absent) continue;
      return MakeError(ErrorCode::GatedRepo,
                       path + " is private or gated on the upstream hub " + base +
                           ": to read it through this hub, set your own token for " + base +
                           " in your settings (/settings/upstream-tokens)");
    }
    // The reader's own token: what the upstream shows them, and whether it lets them in.
    auto mine = Ask(base, id, token->second);
    if (!mine) {
      note(mine.error());
      continue;
    }
    if (mine->answer == Answer::Absent) {
      if (seen->answer == Answer::Absent) continue;
      return MakeError(
          ErrorCode::GatedRepo,
          "the upstream hub " + base + " does not let you read " + path + " with your token");
    }
    auto can = CanRead(base, id, token->second);
    if (!can) {
      note(can.error());
      continue;
    }
    if (!*can) {
      if (mine->is_private) return false;  // as the upstream answers: not found
      return MakeError(ErrorCode::GatedRepo, path + " is gated on the upstream hub " + base +
                                                 " and you have no access yet: ask for it there");
    }
    return Create(id, base, token->second, true, mine->is_private, user);
  }
  if (!unreachable.empty()) {
    return MakeError(ErrorCode::Unavailable,
                     path + " is not cached and the upstream hub cannot tell: " + unreachable);
  }
  return false;
}

Result<bool> UpstreamCache::Create(const RepoId& id, const std::string& base,
                                   const std::string& credential, bool restricted, bool is_private,
                                   int64_t user) {
  const std::string path = id.UrlPath();
  PullMirrorRequest req;
  req.id = id;
  req.url = base + "/" + path;
  req.credential = credential;
  req.interval_s = options_.ttl_s;
  req.for_cache = true;
  req.restricted = restricted;
  req.is_private = is_private;
  auto made = mirrors_.CreatePull(MirrorActor(), req);
  if (!made) {
    // Another process brought it meanwhile: its rules answer at the reader's Open.
    if (made.error().code == ErrorCode::Conflict) return true;
    // Not asked again at every read (a clone that fails costs the upstream each time).
    std::lock_guard lock(mu_);
    absent_until_[path] = Now() + options_.negative_ttl_s;
    return MakeError(ErrorCode::BadGateway,
                     path + " could not be brought from " + base + ": " + made.error().message);
  }
  const int64_t repo_id = made->first.id;
  {
    std::lock_guard lock(mu_);
    known_[repo_id] = Known{true, restricted, made->second.id, base, Now() + options_.ttl_s};
    // The upstream has just let this reader in.
    if (restricted) verdicts_[{user, repo_id}] = Verdict{true, Now() + options_.ttl_s};
  }
  // Its LFS objects linked now, so its files can be read at once.
  auto synced = mirrors_.Pull(repo_id, {});
  if (!synced) mirrors_.QueuePull(repo_id);
  Log("upstream")->info("cached {} from {}{}", path, base, restricted ? " (restricted)" : "");
  return true;
}

Result<UpstreamCache::Known> UpstreamCache::Learn(int64_t repo_id) {
  {
    std::lock_guard lock(mu_);
    auto it = known_.find(repo_id);
    if (it != known_.end()) return it->second;
  }
  HANGAR_ASSIGN_OR_RETURN(auto pull, mirrors_.PullOf(repo_id));
  Known known;
  if (pull && pull->lazy_lfs) {
    known.cache = true;
    known.restricted = pull->restricted;
    known.mirror_id = pull->id;
    for (const auto& base : options_.urls) {
      if (pull->url.rfind(base + "/", 0) == 0) known.base = base;
    }
    if (pull->last_sync_at) known.fresh_until = *pull->last_sync_at + options_.ttl_s;
  }
  std::lock_guard lock(mu_);
  return known_.emplace(repo_id, known).first->second;
}

Result<void> UpstreamCache::Read(const Principal& who, const db::RepoRecord& repo, Access needed) {
  auto known = Learn(repo.id);
  if (!known || !known->cache) return {};
  const std::string path = repo.Id().UrlPath();
  if (Matches(options_.deny, path)) {
    return MakeError(ErrorCode::Forbidden,
                     path + " is not served from the upstream hub (denied by [upstream] deny)");
  }
  // A site admin administers a restricted copy (removes it) without the upstream's word;
  // reading it, or anything else, needs that word.
  if (known->restricted && !IsHub(who) && !(who.is_admin && needed > Access::Read)) {
    HANGAR_TRY(Admit(who, repo, *known));
  }
  const int64_t now = Now();
  {
    std::lock_guard lock(mu_);
    Known& k = known_[repo.id];
    if (now < k.fresh_until) return {};
    k.fresh_until = now + options_.ttl_s;  // one revalidation per TTL
  }
  mirrors_.QueuePull(repo.id);
  return {};
}

Error UpstreamCache::Refusal(const db::RepoRecord& repo, const std::string& base) const {
  const std::string path = repo.Id().UrlPath();
  // A private upstream repo is not shown to exist, as the upstream itself answers.
  if (repo.is_private) return MakeError(ErrorCode::RepoNotFound, "Repository not found: " + path);
  return MakeError(ErrorCode::GatedRepo,
                   path + " is gated on the upstream hub " +
                       (base.empty() ? "it came from" : base) +
                       ": set your own token for it in your settings (/settings/upstream-tokens) "
                       "and ask for access there");
}

Result<void> UpstreamCache::Admit(const Principal& who, const db::RepoRecord& repo,
                                  const Known& known) {
  const int64_t user = UserOf(who);
  if (user == 0 || known.base.empty()) return Refusal(repo, known.base);
  const std::pair<int64_t, int64_t> key{user, repo.id};
  const int64_t now = Now();
  std::optional<Verdict> last;
  {
    std::lock_guard lock(mu_);
    auto it = verdicts_.find(key);
    if (it != verdicts_.end()) {
      if (now < it->second.until) {
        if (it->second.allowed) return {};
        return Refusal(repo, known.base);
      }
      last = it->second;
    }
  }
  HANGAR_ASSIGN_OR_RETURN(auto token, store_.GetUpstreamToken(user, known.base));
  if (!token) return Refusal(repo, known.base);
  HANGAR_ASSIGN_OR_RETURN(auto waiting, Wait());
  auto can = Once<bool>(mu_, verdict_flights_, std::to_string(user) + ":" + std::to_string(repo.id),
                        [&] { return CanRead(known.base, repo.Id(), token->token); });
  if (!can) {
    // Offline, the upstream's last yes to this reader stands until it answers again.
    if (last && last->allowed) return {};
    return MakeError(ErrorCode::Unavailable, repo.Id().UrlPath() +
                                                 ": the upstream hub cannot tell now whether you "
                                                 "may read it: " +
                                                 can.error().message);
  }
  {
    std::lock_guard lock(mu_);
    if (static_cast<int64_t>(verdicts_.size()) >= kMaxVerdicts) verdicts_.clear();
    verdicts_[key] = Verdict{*can, now + (*can ? options_.ttl_s : options_.negative_ttl_s)};
  }
  if (!*can) return Refusal(repo, known.base);
  // A copy whose fetching token was taken back fetches with this reader's from now on.
  auto pull = mirrors_.PullOf(repo.id);
  if (pull && *pull && (*pull)->credential.empty()) {
    if (auto set = store_.SetCredential((*pull)->id, token->token); set) {
      mirrors_.QueuePull(repo.id);
    }
  }
  return {};
}

bool UpstreamCache::Fills(int64_t repo_id) {
  auto known = Learn(repo_id);
  return known && known->cache;
}

Result<void> UpstreamCache::Fill(int64_t repo_id, const Sha256& oid, uint64_t size) {
  if (options_.max_file_bytes > 0 && size > options_.max_file_bytes) {
    return MakeError(ErrorCode::PayloadTooLarge, "the file is " + std::to_string(size) +
                                                     " bytes, over the upstream cache's limit of " +
                                                     std::to_string(options_.max_file_bytes) +
                                                     " ([upstream] max_file_bytes)");
  }
  HANGAR_ASSIGN_OR_RETURN(auto waiting, Wait());
  auto filled = Once<void>(mu_, blob_flights_, std::to_string(repo_id) + ":" + oid.Hex(),
                           [&] { return mirrors_.FetchObject(repo_id, oid, size); });
  if (!filled && filled.error().code == ErrorCode::NotFound) {
    std::lock_guard lock(mu_);
    known_.erase(repo_id);  // no longer a cache's repo (its mirror was removed)
  }
  return filled;
}

namespace {

// Who may keep upstream tokens: a signed-in user, not a deploy key. Errors: Unauthorized.
Result<int64_t> TokenOwner(const Principal& who) {
  const int64_t user = UserOf(who);
  if (user == 0) {
    return MakeError(ErrorCode::Unauthorized, "sign in as a user to keep upstream tokens");
  }
  return user;
}

// Changing them needs a write credential (a browser session or a write token), as for SSH
// keys. Errors: those of TokenOwner, Forbidden.
Result<int64_t> TokenChanger(const Principal& who) {
  HANGAR_ASSIGN_OR_RETURN(int64_t user, TokenOwner(who));
  if (!who.CanWrite() || who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "changing upstream tokens needs a write token");
  }
  return user;
}

// An upstream token is one header value: printable ASCII without spaces, at most 4 KiB.
Result<void> CheckToken(const std::string& token) {
  if (token.empty()) return MakeError(ErrorCode::BadRequest, "'token' is empty");
  if (token.size() > 4096) return MakeError(ErrorCode::BadRequest, "'token' is over 4096 bytes");
  for (unsigned char c : token) {
    if (c <= 0x20 || c >= 0x7f) {
      return MakeError(ErrorCode::BadRequest,
                       "'token' must be printable ASCII without spaces (an access token)");
    }
  }
  return {};
}

}  // namespace

Result<std::string> UpstreamCache::UpstreamNamed(const std::string& upstream) const {
  if (upstream.empty()) {
    if (options_.urls.size() == 1) return options_.urls.front();
    return MakeError(ErrorCode::BadRequest, options_.urls.empty()
                                                ? std::string("no upstream hub is configured")
                                                : "several upstream hubs are configured: name one "
                                                  "('url')");
  }
  for (const auto& base : options_.urls) {
    if (base == upstream) return base;
  }
  return MakeError(ErrorCode::BadRequest, "'" + upstream + "' is not an upstream hub of this hub");
}

Result<std::vector<UpstreamTokenInfo>> UpstreamCache::UserTokens(const Principal& who) {
  HANGAR_ASSIGN_OR_RETURN(int64_t user, TokenOwner(who));
  HANGAR_ASSIGN_OR_RETURN(auto mine, store_.ListUpstreamTokens(user));
  std::vector<UpstreamTokenInfo> out;
  for (const auto& base : options_.urls) {
    UpstreamTokenInfo info;
    info.upstream = base;
    for (const auto& t : mine) {
      if (t.upstream != base) continue;
      info.token_set = true;
      info.upstream_user = t.upstream_user;
      info.set_at = t.created_at;
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<UpstreamTokenInfo> UpstreamCache::SetUserToken(const Principal& who, std::string upstream,
                                                      const std::string& token) {
  HANGAR_ASSIGN_OR_RETURN(int64_t user, TokenChanger(who));
  HANGAR_ASSIGN_OR_RETURN(std::string base, UpstreamNamed(upstream));
  HANGAR_TRY(CheckToken(token));
  // Kept only once the upstream takes it: a typo is told now, not at a later download.
  std::string body;
  HANGAR_ASSIGN_OR_RETURN(int status, Get(base, "/api/whoami-v2", token, body));
  if (status == 401 || status == 403) {
    return MakeError(ErrorCode::BadRequest, "the upstream hub " + base + " refuses this token");
  }
  if (status != 200) {
    return MakeError(ErrorCode::BadGateway,
                     "the upstream " + base + " answered " + std::to_string(status));
  }
  boost::system::error_code ec;
  json::value me = json::parse(body, ec);
  const json::value* name = !ec && me.is_object() ? me.get_object().if_contains("name") : nullptr;
  UpstreamTokenInfo info;
  info.upstream = base;
  info.token_set = true;
  info.upstream_user = name != nullptr && name->is_string() ? std::string(name->get_string()) : "";
  info.set_at = Now();
  HANGAR_TRY(store_.PutUpstreamToken({user, base, token, info.upstream_user, info.set_at}));
  // Verdicts given for the token it replaces are not this token's.
  std::lock_guard lock(mu_);
  std::erase_if(verdicts_, [user](const auto& v) { return v.first.first == user; });
  return info;
}

Result<void> UpstreamCache::DeleteUserToken(const Principal& who, std::string upstream) {
  HANGAR_ASSIGN_OR_RETURN(int64_t user, TokenChanger(who));
  HANGAR_ASSIGN_OR_RETURN(std::string base, UpstreamNamed(upstream));
  HANGAR_TRY(store_.DeleteUpstreamToken(user, base));
  // Without a token, no yes the upstream gave stands.
  std::lock_guard lock(mu_);
  std::erase_if(verdicts_, [user](const auto& v) { return v.first.first == user; });
  return {};
}

}  // namespace hangar::services
