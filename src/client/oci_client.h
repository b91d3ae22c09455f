#pragma once
// OciClient: the registry calls `hangar oci push` / `pull` make — blobs, uploads and
// manifests of the OCI Distribution API (spec/oci.md §3–§5) over net::HttpClient, with
// Basic and Bearer auth (§9) and retries with backoff. Also the pure pieces it is made
// of, each testable alone: references, WWW-Authenticate challenges, Docker config
// credentials, the retry policy. Knows nothing of files or parts (oci_transfer.h).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/result.h"
#include "net/http_client.h"

namespace hangar::client {

// A reference "host[:port]/name[:tag|@digest]" (oci.md §1). The first path component is
// always the registry; "[::1]:5000" brackets an IPv6 host.
struct OciRef {
  std::string registry;    // "host", "host:port" or "[v6]:port", as given
  std::string repository;  // "ns/name", oci.md §1.1 grammar (lower case)
  std::string tag;         // "latest" when neither a tag nor a digest was given
  std::string digest;      // "sha256:<64 hex>" (or sha512), or "" when pulled by tag

  // The manifest reference: the digest when set, else the tag.
  std::string Reference() const { return digest.empty() ? tag : digest; }
  // Parses `ref`. Errors: BadRequest naming what is wrong (no registry, a name outside
  // the §1.1 grammar such as uppercase or "..", a tag outside §1.2, a malformed digest).
  static Result<OciRef> Parse(std::string_view ref);
};

// Whether `name` follows the repository-name grammar of oci.md §1.1.
bool IsValidOciRepository(std::string_view name);
// Whether `tag` follows oci.md §1.2: [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}.
bool IsValidOciTag(std::string_view tag);
// Whether `digest` is "sha256:<64 lower hex>" or "sha512:<128 lower hex>" (§1.3).
bool IsValidOciDigest(std::string_view digest);

// Whether `registry` ("host[:port]") is a loopback address: localhost, 127.0.0.0/8, ::1.
// Those get plain HTTP without --plain-http.
bool IsLoopbackRegistry(std::string_view registry);

// One challenge of a WWW-Authenticate header (RFC 7235 §4.1, oci.md §9).
struct AuthChallenge {
  std::string scheme;                         // lower case: "basic", "bearer"
  std::map<std::string, std::string> params;  // lower-case keys: realm, service, scope…
};
// The challenges of one WWW-Authenticate value, in order ("Bearer realm=\"…\",
// service=\"…\", Basic realm=\"x\""). Quoted strings may hold commas and \-escapes.
// Unparseable input yields the challenges read before it (maybe none).
std::vector<AuthChallenge> ParseChallenges(std::string_view header);

// A user name and a password (or a token used as the password).
struct Credentials {
  std::string username;
  std::string password;
  // How messages name these credentials ("the token of --token / $HANGAR_TOKEN"); "" names
  // the user.
  std::string origin;
  bool empty() const { return username.empty() && password.empty(); }
  // "user 'alice'", or `origin`.
  std::string Name() const { return origin.empty() ? "user '" + username + "'" : origin; }
};

// The credentials a Docker config file (~/.docker/config.json) holds for `registry`:
// auths[key].auth = base64("user:password"), or auths[key].username/.password, where key
// is "host[:port]", optionally with an http(s):// scheme and a path ("https://host/v1/").
// nullopt when there is no entry (or only a credential-helper one). Errors: BadRequest for
// a file that is not JSON or an "auth" that is not base64 of "user:password".
Result<std::optional<Credentials>> DockerConfigCredentials(std::string_view config_json,
                                                           std::string_view registry);

// When and how long to wait before trying a request again.
struct RetryPolicy {
  int max_attempts = 6;                              // tries in all, the first included
  std::chrono::milliseconds base{250};               // delay after the first failure
  std::chrono::milliseconds max_delay{16000};        // cap of the doubling delay
  std::chrono::milliseconds max_retry_after{60000};  // cap on a server's Retry-After

  // 408, 429, 500, 502, 503, 504: worth trying again. Other statuses are final.
  static bool RetryableStatus(long status);
  // Wait before try `failed + 1`, after `failed` ≥ 1 failed tries: the server's
  // Retry-After when it gave one (capped at max_retry_after), else
  // base · 2^(failed − 1) capped at max_delay.
  std::chrono::milliseconds Delay(int failed,
                                  std::optional<std::chrono::seconds> retry_after) const;
};

// A Retry-After value: delta-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015 07:28:00
// GMT", seconds from `now_unix`, at least 0). nullopt when it is neither.
std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value, int64_t now_unix);

// How to reach one registry.
struct OciClientOptions {
  std::string registry;     // "host[:port]"
  bool plain_http = false;  // http:// even for a non-loopback host
  Credentials credentials;  // empty: anonymous
  RetryPolicy retry;
  // --verbose: one line per request and per retry ("PATCH /v2/…/uploads/… → 202"); may
  // be null. Called from worker threads, serialised by the client.
  std::function<void(std::string_view)> log;
};

// A manifest as stored: its exact bytes, the media type it was served with, its digest.
struct OciManifest {
  std::string bytes;
  std::string media_type;
  std::string digest;  // "sha256:…", computed over `bytes`
};

// The client of one registry. Thread-safe: each thread uses its own net::HttpClient (kept
// alive per thread); the auth state (scheme, Bearer tokens per scope) is shared under a
// mutex, so workers authenticate once. Every method retries transport errors, 408, 429
// and 5xx per the RetryPolicy (honouring Retry-After) unless it says otherwise. Errors
// common to all: Unauthorized (credentials missing or refused, the message says which and
// how to give them), Forbidden, Unavailable (registry unreachable after the retries), the
// registry's OCI error mapped to the nearest ErrorCode with its code and message quoted.
class OciClient {
 public:
  explicit OciClient(OciClientOptions options);
  ~OciClient();

  // "http://host:port" or "https://host:port".
  const std::string& base_url() const { return base_url_; }

  // GET /v2/ (oci.md §9): the registry answers and the credentials are good for
  // `repository` (pull, plus push when `push`), so a bad token fails before any upload.
  Result<void> Check(std::string_view repository, bool push);

  // HEAD /v2/<repo>/blobs/<digest> (§3.2): the blob's size, or nullopt when the
  // repository does not have it (404).
  Result<std::optional<uint64_t>> BlobSize(std::string_view repository, std::string_view digest);

  // Pushes one blob streamed from `open()` (`size` bytes), hashing as it sends: POST
  // /blobs/uploads/, one PATCH without Content-Range, PUT ?digest= (§4.4, "streamed
  // PATCH"). A failed try starts the blob over with a fresh source from `open`.
  // `on_bytes(n)` counts bytes sent (negative n: a failed try's bytes taken back); may be
  // null. Returns "sha256:<hex>". Errors: as above; DigestInvalid if the registry
  // computed another digest.
  Result<std::string> PushBlobStreamed(std::string_view repository,
                                       const std::function<std::unique_ptr<ByteSource>()>& open,
                                       uint64_t size,
                                       const std::function<void(int64_t)>& on_bytes = nullptr);

  // Pushes a small in-memory blob whose digest is known: POST then PUT ?digest= with the
  // body (§4.2).
  Result<void> PushBlobBytes(std::string_view repository, std::string_view digest,
                             std::string_view bytes);

  // GET /v2/<repo>/blobs/<digest> (§3.2), following redirects (Authorization is not
  // forwarded to another host), the body handed to `sink`. `restart()` is called before
  // a retry so the caller can drop what the sink received. Errors: BlobUnknown on 404.
  Result<void> GetBlob(std::string_view repository, std::string_view digest,
                       const net::BodySink& sink, const std::function<void()>& restart);

  // GET /v2/<repo>/manifests/<reference> (§3.1) with an Accept of the OCI and Docker
  // manifest types; at most 4 MiB. If `reference` is a digest, the bytes are checked
  // against it. Errors: ManifestUnknown on 404, DigestInvalid on a mismatch.
  Result<OciManifest> GetManifest(std::string_view repository, std::string_view reference);

  // PUT /v2/<repo>/manifests/<reference> (§5) with Content-Type `media_type`. Returns the
  // digest of `bytes`. Errors: the registry's (ManifestInvalid, ManifestBlobUnknown, …).
  Result<std::string> PutManifest(std::string_view repository, std::string_view reference,
                                  std::string_view media_type, std::string_view bytes);

 private:
  struct Call;
  struct BlobTry;
  // Sends a request, authenticating (the cached scheme first; a 401 fetches a fresh
  // Bearer token or switches to Basic, then tries once more) and, when `call.retry`,
  // retrying per the policy. Returns any final status: callers interpret it.
  Result<net::HttpResponse> Send(Call& call);
  // Adds the cached Authorization for `scope` to `req`.
  void Authorize(net::HttpRequest& req, const std::string& scope);
  // Reacts to a 401 whose request carried `sent_auth`: true when a retry may succeed.
  Result<bool> OnUnauthorized(const net::HttpResponse& res, const std::string& scope,
                              const std::string& sent_auth);
  // The final Unauthorized error for a 401: credentials missing, or refused.
  Error AuthError(const net::HttpResponse& res, const std::string& what) const;
  Result<std::string> FetchToken(const AuthChallenge& challenge, const std::string& scope);
  void Log(const std::string& line);
  std::string Url(std::string_view path) const;
  // The absolute URL of a Location header's value (a path is on this registry).
  std::string LocationUrl(const std::string& location) const;
  // POST /blobs/uploads/: the URL of a new upload session in `repo`.
  Result<std::string> StartUpload(const std::string& repo, const std::string& scope);
  // One try of PushBlobStreamed: a new session, the streamed PATCH, FinishBlob.
  BlobTry PushBlobOnce(const std::string& repo, const std::string& scope,
                       const std::function<std::unique_ptr<ByteSource>()>& open, uint64_t size,
                       const std::function<void(int64_t)>& on_bytes);
  // PUT ?digest= closing the session at `upload_url`.
  BlobTry FinishBlob(const std::string& upload_url, const std::string& digest, uint64_t size,
                     const std::string& repo, const std::string& scope);

  OciClientOptions options_;
  std::string base_url_;
  std::mutex mu_;  // guards the fields below
  enum class Scheme { Unknown, Basic, Bearer } scheme_ = Scheme::Unknown;
  std::map<std::string, std::string> tokens_;  // scope → "Bearer …" header value
  std::mutex token_fetch_mu_;                  // one token request at a time
  std::mutex log_mu_;
};

// "repository:<repo>:pull" or "repository:<repo>:pull,push" (oci.md §9.2 scope grammar).
std::string OciScope(std::string_view repository, bool push);

// The Error for a non-2xx registry answer: the OCI error code's nearest ErrorCode (else
// the status's), message "<what>: HTTP <status> <CODE>: <message>" (oci.md §8).
Error OciHttpError(const net::HttpResponse& res, std::string_view what);

}  // namespace hangar::client
