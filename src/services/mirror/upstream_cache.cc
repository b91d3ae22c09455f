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

}  // namespace

UpstreamCache::UpstreamCache(MirrorService& mirrors, UpstreamOptions options)
    : mirrors_(mirrors), options_(std::move(options)) {}

int64_t UpstreamCache::Now() const { return options_.now_unix ? options_.now_unix() : NowUnix(); }

Result<UpstreamCache::Answer> UpstreamCache::Ask(const std::string& base, const RepoId& id) {
  net::HttpRequest req;
  req.url = base + "/api/" + std::string(RepoCollection(id.type)) + "/" + id.Id();
  req.timeout = options_.timeout;
  req.headers.emplace_back("Accept", "application/json");
  if (!options_.token.empty())
    req.headers.emplace_back("Authorization", "Bearer " + options_.token);
  req.low_speed_bytes = 1024;
  net::HttpClient client;
  std::string body;
  net::BodySink sink = [&body](std::span<const char> data) -> Result<void> {
    if (body.size() + data.size() > kMaxRepoInfo)
      return MakeError(ErrorCode::BadGateway, "the upstream's repo info is over 1 MiB");
    body.append(data.data(), data.size());
    return {};
  };
  HANGAR_ASSIGN_OR_RETURN(net::HttpResponse res, client.Perform(req, &sink));
  if (res.status == 401 || res.status == 403 || res.status == 404) return Answer::Absent;
  if (res.status != 200) {
    return MakeError(ErrorCode::BadGateway,
                     "the upstream " + base + " answered " + std::to_string(res.status));
  }
  boost::system::error_code ec;
  json::value info = json::parse(body, ec);
  if (ec || !info.is_object()) {
    return MakeError(ErrorCode::BadGateway, "the upstream " + base + " sent no repo info");
  }
  const json::object& o = info.get_object();
  // The repo asked for, exactly (not a case variant the upstream also answers for).
  const json::value* name = o.if_contains("id");
  if (name == nullptr || !name->is_string() || name->get_string() != id.Id()) return Answer::Absent;
  // Public only when the upstream says so plainly: anything else is refused (fail closed).
  const json::value* priv = o.if_contains("private");
  const json::value* gated = o.if_contains("gated");
  const bool is_public =
      priv != nullptr && priv->is_bool() && !priv->get_bool() &&
      (gated == nullptr || gated->is_null() || (gated->is_bool() && !gated->get_bool()));
  return is_public ? Answer::Public : Answer::Refused;
}

Result<bool> UpstreamCache::Materialize(const Principal&, const RepoId& id) {
  if (options_.urls.empty()) return false;
  const std::string path = id.UrlPath();
  if (Matches(options_.deny, path)) {
    return MakeError(ErrorCode::Forbidden,
                     path + " is not served from the upstream hub (denied by [upstream] deny)");
  }
  if (!options_.allow.empty() && !Matches(options_.allow, path)) return false;
  if (options_.is_local_namespace && options_.is_local_namespace(id.ns)) return false;
  {
    std::lock_guard lock(mu_);
    auto it = absent_until_.find(path);
    if (it != absent_until_.end()) {
      if (it->second > Now()) return false;
      absent_until_.erase(it);
    }
  }
  HANGAR_ASSIGN_OR_RETURN(auto waiting, Wait());
  return Once<bool>(mu_, repo_flights_, path, [&] { return Bring(id); });
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

Result<bool> UpstreamCache::StillPublic(const RepoId& id, const std::string& mirror_url) {
  for (const auto& base : options_.urls) {
    if (mirror_url != base + "/" + id.UrlPath()) continue;
    HANGAR_ASSIGN_OR_RETURN(Answer answer, Ask(base, id));
    return answer == Answer::Public;
  }
  return false;  // its upstream is no longer configured
}

Result<bool> UpstreamCache::Bring(const RepoId& id) {
  const std::string path = id.UrlPath();
  std::string unreachable;
  for (const auto& base : options_.urls) {
    auto answer = Ask(base, id);
    if (!answer) {
      unreachable += (unreachable.empty() ? "" : "; ") + answer.error().message;
      continue;
    }
    if (*answer == Answer::Absent) continue;
    if (*answer == Answer::Refused) {
      return MakeError(ErrorCode::GatedRepo, path + " is private or gated on the upstream hub " +
                                                 base + "; the cache serves public repos only");
    }
    PullMirrorRequest req;
    req.id = id;
    req.url = base + "/" + path;
    req.credential = options_.token;
    req.interval_s = options_.ttl_s;
    req.for_cache = true;
    auto made = mirrors_.CreatePull(MirrorActor(), req);
    if (!made) {
      // Another process brought it meanwhile.
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
      known_[repo_id] = Known{true, Now() + options_.ttl_s};
    }
    // Its LFS objects linked now, so its files can be read at once.
    auto synced = mirrors_.Pull(repo_id, {});
    if (!synced) mirrors_.QueuePull(repo_id);
    Log("upstream")->info("cached {} from {}", path, base);
    return true;
  }
  if (!unreachable.empty()) {
    return MakeError(ErrorCode::Unavailable,
                     path + " is not cached and the upstream hub cannot tell: " + unreachable);
  }
  std::lock_guard lock(mu_);
  absent_until_[path] = Now() + options_.negative_ttl_s;
  return false;
}

Result<UpstreamCache::Known> UpstreamCache::Learn(int64_t repo_id) {
  {
    std::lock_guard lock(mu_);
    auto it = known_.find(repo_id);
    if (it != known_.end()) return it->second;
  }
  HANGAR_ASSIGN_OR_RETURN(auto pull, mirrors_.PullOf(repo_id));
  Known known;
  known.cache = pull && pull->lazy_lfs;
  if (pull && pull->last_sync_at) known.fresh_until = *pull->last_sync_at + options_.ttl_s;
  std::lock_guard lock(mu_);
  return known_.emplace(repo_id, known).first->second;
}

Result<void> UpstreamCache::Read(const db::RepoRecord& repo) {
  auto known = Learn(repo.id);
  if (!known || !known->cache) return {};
  const std::string path = repo.Id().UrlPath();
  if (Matches(options_.deny, path)) {
    return MakeError(ErrorCode::Forbidden,
                     path + " is not served from the upstream hub (denied by [upstream] deny)");
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

}  // namespace hangar::services
