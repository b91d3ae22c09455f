#include "client/oci_client.h"

#include <openssl/evp.h>

#include <thread>

#include <boost/json.hpp>

#include "core/base64.h"
#include "core/hex.h"
#include "core/oci_media_types.h"
#include "core/sha256.h"
#include "core/util.h"

namespace hangar::client {

namespace json = boost::json;

namespace {

constexpr size_t kMaxManifestBytes = 4 << 20;  // oci.md §5 step 1
constexpr int kMaxAuthRounds = 2;              // 401 → new credentials → try again, twice
// libcurl's send and receive buffers for blob bodies (net::HttpRequest::buffer_bytes):
// 1 MiB per body Read() and per sink call instead of 64 KiB / 16 KiB.
constexpr size_t kBlobBufferBytes = 1 << 20;

// The manifest types a pull accepts, as an Accept header value.
const std::string& ManifestAccept() {
  static const std::string accept =
      std::string(oci::kManifestType) + ", " + std::string(oci::kIndexType) + ", " +
      std::string(oci::kDockerManifestType) + ", " + std::string(oci::kDockerListType);
  return accept;
}

// One HTTP client per thread: it keeps its connections to the registry alive.
net::HttpClient& ThreadClient() {
  thread_local net::HttpClient client;
  return client;
}

std::string BasicHeader(const Credentials& c) {
  return "Basic " + Base64Encode(c.username + ":" + c.password);
}

std::string WithQuery(const std::string& url, std::string_view param) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + std::string(param);
}

// The digest of `bytes` with `digest`'s algorithm, in the same "alg:hex" form.
std::string DigestLike(std::string_view digest, std::string_view bytes) {
  const EVP_MD* md = digest.starts_with("sha512:") ? EVP_sha512() : EVP_sha256();
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), out, &len, md, nullptr);
  return std::string(digest.starts_with("sha512:") ? "sha512:" : "sha256:") +
         HexEncode(std::span<const uint8_t>(out, len));
}

// Hashes (sha256) and counts what libcurl reads from the wrapped source.
class HashingSource final : public ByteSource {
 public:
  HashingSource(ByteSource& inner, const std::function<void(int64_t)>& on_bytes)
      : inner_(inner), on_bytes_(on_bytes) {}
  Result<size_t> Read(std::span<char> buf) override {
    auto n = inner_.Read(buf);
    if (n && *n > 0) {
      hasher_.Update(std::string_view(buf.data(), *n));
      sent_ += *n;
      if (on_bytes_) on_bytes_(static_cast<int64_t>(*n));
    }
    return n;
  }
  std::optional<uint64_t> Size() const override { return inner_.Size(); }
  uint64_t sent() const { return sent_; }
  std::string Digest() { return "sha256:" + hasher_.Finish().Hex(); }

 private:
  ByteSource& inner_;
  const std::function<void(int64_t)>& on_bytes_;
  Sha256Hasher hasher_;
  uint64_t sent_ = 0;
};

// The path and query of `url` (for log lines).
std::string PathOf(const std::string& url) {
  size_t scheme = url.find("://");
  size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  std::string p = slash == std::string::npos ? url : url.substr(slash);
  if (size_t q = p.find("_state="); q != std::string::npos) p = p.substr(0, q) + "_state=…";
  return p;
}

}  // namespace

// One request as Send() sees it.
struct OciClient::Call {
  net::HttpRequest req;
  std::string what;   // for error messages: "push blob", "HEAD …"
  std::string scope;  // the token scope the request needs
  const net::BodySink* sink = nullptr;
  std::function<void()> restart;  // before a retry of a request with a sink
  bool retry = true;              // retry transport errors and retryable statuses
  bool resendable = true;         // the body can be sent again (not a streamed one)
};

// How one try of PushBlobStreamed ended.
struct OciClient::BlobTry {
  Result<std::string> digest;  // "sha256:<hex>" of the stored blob, or why the try failed
  bool retryable = false;      // a failure that starting the blob over may cure
  std::optional<std::chrono::seconds> retry_after;  // the registry's Retry-After, if any

  // The try ended: the blob is stored, or it failed in a way a new try would not cure.
  static BlobTry Final(Result<std::string> digest) {
    return {std::move(digest), false, std::nullopt};
  }
  // The try failed in a way that starting the blob over may cure.
  static BlobTry Again(Error e, std::optional<std::chrono::seconds> retry_after = std::nullopt) {
    return {std::move(e), true, retry_after};
  }
};

OciClient::OciClient(OciClientOptions options) : options_(std::move(options)) {
  bool plain = options_.plain_http || IsLoopbackRegistry(options_.registry);
  base_url_ = (plain ? "http://" : "https://") + options_.registry;
}

OciClient::~OciClient() = default;

std::string OciClient::Url(std::string_view path) const { return base_url_ + std::string(path); }

void OciClient::Log(const std::string& line) {
  if (!options_.log) return;
  std::lock_guard lock(log_mu_);
  options_.log(line);
}

void OciClient::Authorize(net::HttpRequest& req, const std::string& scope) {
  // Never hand the registry's credentials to another host (a redirect, a foreign
  // upload Location).
  if (!req.url.starts_with(base_url_ + "/")) return;
  std::lock_guard lock(mu_);
  if (scheme_ == Scheme::Basic) {
    req.headers.emplace_back("Authorization", BasicHeader(options_.credentials));
  } else if (scheme_ == Scheme::Bearer) {
    auto it = tokens_.find(scope);
    if (it == tokens_.end() && scope.ends_with(":pull")) it = tokens_.find(scope + ",push");
    if (it != tokens_.end()) req.headers.emplace_back("Authorization", it->second);
  }
}

Result<std::string> OciClient::FetchToken(const AuthChallenge& ch, const std::string& scope) {
  auto realm = ch.params.find("realm");
  if (realm == ch.params.end() || realm->second.empty()) {
    return MakeError(ErrorCode::Unauthorized,
                     options_.registry + " asked for a Bearer token without naming a realm");
  }
  std::string url = realm->second;
  if (auto s = ch.params.find("service"); s != ch.params.end()) {
    url = WithQuery(url, "service=" + PercentEncode(s->second));
  }
  url = WithQuery(url, "scope=" + PercentEncode(scope));
  if (auto s = ch.params.find("scope"); s != ch.params.end() && s->second != scope) {
    url = WithQuery(url, "scope=" + PercentEncode(s->second));
  }
  const Credentials& cred = options_.credentials;
  for (int attempt = 1;; ++attempt) {
    net::HttpRequest req;
    req.url = url;
    req.follow_redirects = true;
    if (!cred.empty()) req.headers.emplace_back("Authorization", BasicHeader(cred));
    auto res = ThreadClient().Perform(req);
    bool again = attempt < options_.retry.max_attempts &&
                 (!res || RetryPolicy::RetryableStatus(res->status));
    if (again) {
      auto ra =
          res ? ParseRetryAfter(res->Header("retry-after").value_or(""), NowUnix()) : std::nullopt;
      std::this_thread::sleep_for(options_.retry.Delay(attempt, ra));
      continue;
    }
    if (!res) return MakeError(res.error().code, "token request: " + res.error().message);
    Log("GET " + PathOf(url) + " → " + std::to_string(res->status) + " (token)");
    if (res->status == 401 || res->status == 403) {
      return MakeError(ErrorCode::Unauthorized,
                       cred.empty() ? "the token service of " + options_.registry +
                                          " wants credentials: give --token, --username/"
                                          "--password or a Docker config entry"
                                    : "the token service of " + options_.registry +
                                          " refused the credentials of " + cred.Name() + " (HTTP " +
                                          std::to_string(res->status) + ")");
    }
    if (res->status < 200 || res->status >= 300) return OciHttpError(*res, "token request");
    boost::system::error_code ec;
    json::value v = json::parse(res->body, ec);
    if (!ec && v.is_object()) {
      for (const char* key : {"token", "access_token"}) {
        const auto* t = v.as_object().if_contains(key);
        if (t != nullptr && t->is_string() && !t->as_string().empty())
          return std::string(t->as_string());
      }
    }
    return MakeError(ErrorCode::Unauthorized,
                     "the token service of " + options_.registry + " answered without a token");
  }
}

Result<bool> OciClient::OnUnauthorized(const net::HttpResponse& res, const std::string& scope,
                                       const std::string& sent_auth) {
  auto challenges = ParseChallenges(res.Header("www-authenticate").value_or(""));
  const AuthChallenge* bearer = nullptr;
  const AuthChallenge* basic = nullptr;
  for (const auto& c : challenges) {
    if (c.scheme == "bearer" && bearer == nullptr) bearer = &c;
    if (c.scheme == "basic" && basic == nullptr) basic = &c;
  }
  const Credentials& cred = options_.credentials;
  if (bearer != nullptr) {
    std::lock_guard fetch(token_fetch_mu_);
    {
      std::lock_guard lock(mu_);
      auto it = tokens_.find(scope);
      if (it != tokens_.end() && it->second != sent_auth) return true;  // refreshed meanwhile
    }
    HANGAR_ASSIGN_OR_RETURN(auto token, FetchToken(*bearer, scope));
    std::lock_guard lock(mu_);
    tokens_[scope] = "Bearer " + token;
    scheme_ = Scheme::Bearer;
    return true;
  }
  if (basic != nullptr) {
    if (cred.empty()) {
      return MakeError(ErrorCode::Unauthorized, options_.registry +
                                                    " wants credentials: give --token, --username/"
                                                    "--password or a Docker config entry");
    }
    if (sent_auth == BasicHeader(cred)) return false;
    std::lock_guard lock(mu_);
    scheme_ = Scheme::Basic;
    return true;
  }
  return false;
}

Error OciClient::AuthError(const net::HttpResponse& res, const std::string& what) const {
  Error e = OciHttpError(res, what);
  e.code = ErrorCode::Unauthorized;
  if (options_.credentials.empty()) {
    e.message += " — " + options_.registry +
                 " wants credentials: give --token, --username/--password or a Docker config entry";
  } else {
    e.message += " (the registry refused the credentials of " + options_.credentials.Name() + ")";
  }
  return e;
}

Result<net::HttpResponse> OciClient::Send(Call& call) {
  int failed = 0;
  int auth_rounds = 0;
  for (;;) {
    net::HttpRequest req = call.req;
    Authorize(req, call.scope);
    std::string sent_auth;
    for (const auto& [name, value] : req.headers) {
      if (name == "Authorization") sent_auth = value;
    }
    auto res = ThreadClient().Perform(req, call.sink);
    if (res) Log(req.method + " " + PathOf(req.url) + " → " + std::to_string(res->status));
    if (!res) {
      Log(req.method + " " + PathOf(req.url) + " → " + res.error().message);
      if (call.retry && res.error().code == ErrorCode::Unavailable &&
          ++failed < options_.retry.max_attempts) {
        std::this_thread::sleep_for(options_.retry.Delay(failed, std::nullopt));
        if (call.restart) call.restart();
        continue;
      }
      return MakeError(res.error().code, call.what + ": " + res.error().message);
    }
    if (res->status == 401) {
      if (auth_rounds >= kMaxAuthRounds) return AuthError(*res, call.what);
      ++auth_rounds;
      auto again = OnUnauthorized(*res, call.scope, sent_auth);
      if (!again) return MakeError(again.error().code, call.what + ": " + again.error().message);
      if (*again && call.resendable) {
        if (call.restart) call.restart();
        continue;
      }
      if (!*again) return AuthError(*res, call.what);
      return res;  // a streamed body: the caller starts over, with the new credentials
    }
    if (call.retry && RetryPolicy::RetryableStatus(res->status) &&
        ++failed < options_.retry.max_attempts) {
      auto ra = ParseRetryAfter(res->Header("retry-after").value_or(""), NowUnix());
      auto delay = options_.retry.Delay(failed, ra);
      Log("  retrying in " + std::to_string(delay.count()) + " ms");
      std::this_thread::sleep_for(delay);
      if (call.restart) call.restart();
      continue;
    }
    return res;
  }
}

Result<void> OciClient::Check(std::string_view repository, bool push) {
  Call call;
  call.req.url = Url("/v2/");
  call.what = "GET " + base_url_ + "/v2/";
  call.scope = OciScope(repository, push);
  HANGAR_ASSIGN_OR_RETURN(auto res, Send(call));
  if (res.status != 200) return OciHttpError(res, call.what);
  return {};
}

Result<std::optional<uint64_t>> OciClient::BlobSize(std::string_view repository,
                                                    std::string_view digest) {
  Call call;
  call.req.method = "HEAD";
  call.req.url = Url("/v2/" + std::string(repository) + "/blobs/" + std::string(digest));
  call.what = "HEAD blob " + std::string(digest);
  call.scope = OciScope(repository, false);
  HANGAR_ASSIGN_OR_RETURN(auto res, Send(call));
  if (res.status == 404) return std::optional<uint64_t>();
  if (res.status != 200) return OciHttpError(res, call.what);
  auto len = res.Header("content-length");
  return std::optional<uint64_t>(len ? std::strtoull(len->c_str(), nullptr, 10) : 0);
}

// POST /v2/<repo>/blobs/uploads/ (§4.1): the URL of the new upload session.
Result<std::string> OciClient::StartUpload(const std::string& repo, const std::string& scope) {
  Call post;
  post.req.method = "POST";
  post.req.url = Url("/v2/" + repo + "/blobs/uploads/");
  post.what = "start upload to " + repo;
  post.scope = scope;
  HANGAR_ASSIGN_OR_RETURN(auto started, Send(post));
  if (started.status != 202) return OciHttpError(started, post.what);
  auto loc = started.Header("location");
  if (!loc || loc->empty()) {
    return MakeError(ErrorCode::Internal, post.what + ": 202 without a Location");
  }
  return LocationUrl(*loc);
}

// A Location header's URL: a path is on this registry.
std::string OciClient::LocationUrl(const std::string& location) const {
  return location.starts_with("/") ? Url(location) : location;
}

// One try of PushBlobStreamed: POST, one PATCH streaming a fresh source from `open`, then
// FinishBlob. A failed PATCH or PUT takes its bytes back through `on_bytes`.
OciClient::BlobTry OciClient::PushBlobOnce(const std::string& repo, const std::string& scope,
                                           const std::function<std::unique_ptr<ByteSource>()>& open,
                                           uint64_t size,
                                           const std::function<void(int64_t)>& on_bytes) {
  auto upload_url = StartUpload(repo, scope);
  if (!upload_url) return BlobTry::Final(std::move(upload_url).error());
  auto source = open();
  HashingSource body(*source, on_bytes);
  Call patch;
  patch.req.method = "PATCH";
  patch.req.url = *upload_url;
  patch.req.body = &body;
  patch.req.buffer_bytes = kBlobBufferBytes;
  patch.req.headers.emplace_back("Content-Type", "application/octet-stream");
  patch.what = "upload to " + repo;
  patch.scope = scope;
  patch.retry = false;
  patch.resendable = false;
  auto sent = Send(patch);
  std::optional<Error> patch_error;
  std::optional<std::chrono::seconds> retry_after;
  if (!sent) {
    patch_error = std::move(sent).error();
  } else if (sent->status != 202 && sent->status != 204) {
    retry_after = ParseRetryAfter(sent->Header("retry-after").value_or(""), NowUnix());
    patch_error = OciHttpError(*sent, patch.what);
  } else if (body.sent() != size) {
    patch_error =
        MakeError(ErrorCode::Internal, patch.what + ": sent " + std::to_string(body.sent()) +
                                           " of " + std::to_string(size) + " bytes");
  }
  if (patch_error) {
    if (on_bytes) on_bytes(-static_cast<int64_t>(body.sent()));
    return BlobTry::Again(std::move(*patch_error), retry_after);
  }
  auto next = sent->Header("location");
  std::string put_url = next && !next->empty() ? LocationUrl(*next) : *upload_url;
  BlobTry done = FinishBlob(put_url, body.Digest(), size, repo, scope);
  if (done.retryable && on_bytes) on_bytes(-static_cast<int64_t>(body.sent()));
  return done;
}

// PUT ?digest= closing an upload whose bytes are sent. The PUT may have landed although its
// answer was lost: a blob of `size` bytes under `digest` then counts as done.
OciClient::BlobTry OciClient::FinishBlob(const std::string& upload_url, const std::string& digest,
                                         uint64_t size, const std::string& repo,
                                         const std::string& scope) {
  Call put;
  put.req.method = "PUT";
  put.req.url = WithQuery(upload_url, "digest=" + PercentEncode(digest));
  put.req.headers.emplace_back("Content-Type", "application/octet-stream");
  put.what = "finish upload of " + digest;
  put.scope = scope;
  auto done = Send(put);
  if (done && done->status == 201) {
    auto got = done->Header("docker-content-digest");
    if (got && !got->empty() && *got != digest) {
      return BlobTry::Final(
          MakeError(ErrorCode::DigestInvalid, put.what + ": the registry stored it as " + *got));
    }
    return BlobTry::Final(digest);
  }
  auto have = BlobSize(repo, digest);
  if (have && *have && **have == size) return BlobTry::Final(digest);
  return BlobTry::Again(done ? OciHttpError(*done, put.what) : std::move(done).error());
}

Result<std::string> OciClient::PushBlobStreamed(
    std::string_view repository, const std::function<std::unique_ptr<ByteSource>()>& open,
    uint64_t size, const std::function<void(int64_t)>& on_bytes) {
  std::string repo(repository);
  std::string scope = OciScope(repo, true);
  for (int attempt = 1;; ++attempt) {
    BlobTry t = PushBlobOnce(repo, scope, open, size, on_bytes);
    if (t.digest || !t.retryable) return std::move(t.digest);
    Error e = std::move(t.digest).error();
    bool retryable = e.code == ErrorCode::Unavailable || e.code == ErrorCode::Internal ||
                     e.code == ErrorCode::TooManyRequests || e.code == ErrorCode::Unauthorized ||
                     e.code == ErrorCode::BlobUploadUnknown;
    if (attempt >= options_.retry.max_attempts || !retryable) return e;
    Log("  " + e.message + "; starting the blob over");
    std::this_thread::sleep_for(options_.retry.Delay(attempt, t.retry_after));
  }
}

Result<void> OciClient::PushBlobBytes(std::string_view repository, std::string_view digest,
                                      std::string_view bytes) {
  std::string repo(repository);
  std::string scope = OciScope(repo, true);
  HANGAR_ASSIGN_OR_RETURN(std::string upload_url, StartUpload(repo, scope));
  Call put;
  put.req.method = "PUT";
  put.req.url = WithQuery(upload_url, "digest=" + PercentEncode(digest));
  put.req.headers.emplace_back("Content-Type", "application/octet-stream");
  put.req.body_bytes = std::string(bytes);
  put.what = "upload " + std::string(digest);
  put.scope = scope;
  auto done = Send(put);
  if (done && done->status == 201) return {};
  auto have = BlobSize(repo, digest);
  if (have && *have) return {};
  return done ? OciHttpError(*done, put.what) : std::move(done).error();
}

Result<void> OciClient::GetBlob(std::string_view repository, std::string_view digest,
                                const net::BodySink& sink, const std::function<void()>& restart) {
  Call call;
  call.req.url = Url("/v2/" + std::string(repository) + "/blobs/" + std::string(digest));
  call.req.follow_redirects = true;
  call.req.buffer_bytes = kBlobBufferBytes;
  call.what = "GET blob " + std::string(digest);
  call.scope = OciScope(repository, false);
  call.sink = &sink;
  call.restart = restart;
  HANGAR_ASSIGN_OR_RETURN(auto res, Send(call));
  if (res.status == 200) return {};
  // The sink also got the error body: let the caller discard it.
  if (restart) restart();
  if (res.status == 404) {
    Error e = OciHttpError(res, call.what);
    e.code = ErrorCode::BlobUnknown;
    return e;
  }
  return OciHttpError(res, call.what);
}

Result<OciManifest> OciClient::GetManifest(std::string_view repository,
                                           std::string_view reference) {
  std::string body;
  net::BodySink sink = [&](std::span<const char> chunk) -> Result<void> {
    if (body.size() + chunk.size() > kMaxManifestBytes) {
      return MakeError(ErrorCode::PayloadTooLarge, "manifest larger than 4 MiB");
    }
    body.append(chunk.data(), chunk.size());
    return {};
  };
  Call call;
  call.req.url = Url("/v2/" + std::string(repository) + "/manifests/" + std::string(reference));
  call.req.headers.emplace_back("Accept", ManifestAccept());
  call.what = "GET manifest " + std::string(repository) + ":" + std::string(reference);
  call.scope = OciScope(repository, false);
  call.sink = &sink;
  call.restart = [&] { body.clear(); };
  HANGAR_ASSIGN_OR_RETURN(auto res, Send(call));
  if (res.status != 200) {
    res.body = body;
    Error e = OciHttpError(res, call.what);
    if (res.status == 404) e.code = ErrorCode::ManifestUnknown;
    return e;
  }
  OciManifest m;
  m.media_type = res.Header("content-type").value_or("");
  if (size_t semi = m.media_type.find(';'); semi != std::string::npos) m.media_type.resize(semi);
  m.digest =
      DigestLike(reference.find(':') != std::string_view::npos ? reference : "sha256:", body);
  if (reference.find(':') != std::string_view::npos && m.digest != reference) {
    return MakeError(ErrorCode::DigestInvalid,
                     call.what + ": the bytes served hash to " + m.digest);
  }
  m.bytes = std::move(body);
  return m;
}

Result<std::string> OciClient::PutManifest(std::string_view repository, std::string_view reference,
                                           std::string_view media_type, std::string_view bytes) {
  Call call;
  call.req.method = "PUT";
  call.req.url = Url("/v2/" + std::string(repository) + "/manifests/" + std::string(reference));
  call.req.headers.emplace_back("Content-Type", std::string(media_type));
  call.req.body_bytes = std::string(bytes);
  call.what = "PUT manifest " + std::string(repository) + ":" + std::string(reference);
  call.scope = OciScope(repository, true);
  HANGAR_ASSIGN_OR_RETURN(auto res, Send(call));
  if (res.status != 201 && res.status != 200) return OciHttpError(res, call.what);
  return "sha256:" + Sha256::Of(bytes).Hex();
}

}  // namespace hangar::client
