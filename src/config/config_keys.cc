#include "config/config_keys.h"
#include "core/util.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>
#include <vector>

namespace hangar::config::internal {
namespace {

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string TypeName(const RawValue& v) {
  if (std::holds_alternative<int64_t>(v)) return "an integer";
  if (std::holds_alternative<bool>(v)) return "a boolean";
  return "a string";
}

// Parses an optionally signed decimal integer, all of `s`.
std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "10MiB", "512KiB", "1GiB", "2TiB" or a plain integer, in bytes.
std::optional<int64_t> ParseBytes(std::string_view s) {
  static constexpr std::pair<std::string_view, int> kUnits[] = {
      {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  for (auto [unit, shift] : kUnits) {
    if (s.size() > unit.size() && s.ends_with(unit)) {
      std::string_view num = s.substr(0, s.size() - unit.size());
      while (!num.empty() && num.back() == ' ') num.remove_suffix(1);
      auto n = ParseInt(num);
      if (!n || *n < 0 || *n > (std::numeric_limits<int64_t>::max() >> shift)) return std::nullopt;
      return *n << shift;
    }
  }
  return ParseInt(s);
}

// Row makers. `access` maps a Config to the field: [](Config& c) -> auto& { ... }.
// Checks a string value; returns the problem or "".
using StringCheck = std::function<std::string(const std::string&)>;

StringCheck OneOf(std::vector<std::string_view> choices) {
  return [choices](const std::string& s) -> std::string {
    std::string list;
    for (auto choice : choices) {
      if (s == choice) return "";
      list += (list.empty() ? "" : ", ") + std::string(choice);
    }
    return "expected one of " + list + "; got " + Quoted(s);
  };
}

std::string CheckListen(const std::string& s) {
  auto r = ParseListen(s);
  return r ? "" : r.error().message;
}

std::string CheckPublicUrl(const std::string& s) {
  if (s.empty()) return "";
  std::string_view rest = s;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    return "expected an http:// or https:// URL, got " + Quoted(s);
  }
  if (rest.empty() || rest.front() == '/') return Quoted(s) + " has no host";
  return "";
}

// An http(s) URL whose host part is well-formed enough to connect to (log.otlp_endpoint).
std::string CheckHttpUrl(const std::string& s) {
  if (s.empty()) return "";
  if (std::string problem = CheckPublicUrl(s); !problem.empty()) return problem;
  if (s.find_first_of(" \t\r\n") != std::string::npos) return Quoted(s) + " has a space";
  std::string_view host = std::string_view(s).substr(s.find("://") + 3);
  host = host.substr(0, host.find('/'));
  if (host.starts_with('[') && host.find(']') == std::string_view::npos) {
    return Quoted(s) + " has no closing ']'";
  }
  return "";
}

std::string CheckPostgresUrl(const std::string& s) {
  if (s.empty() || s.starts_with("postgres://") || s.starts_with("postgresql://")) return "";
  return "expected a postgres:// or postgresql:// URL";
}

std::string CheckNotEmpty(const std::string& s) { return s.empty() ? "must not be empty" : ""; }

std::string CheckS3Endpoint(const std::string& s) {
  if (s.empty() || s.starts_with("http://") || s.starts_with("https://")) return "";
  return "expected an http:// or https:// URL, got " + Quoted(s);
}

template <typename Access>
KeyDef StringKey(std::string_view section, std::string_view name, Access access,
                 StringCheck check = nullptr) {
  return KeyDef{section, name,
                [access](Config& c, const RawValue& v) -> std::string {
                  if (!std::holds_alternative<std::string>(v)) {
                    return "expected a string, got " + TypeName(v);
                  }
                  access(c) = std::get<std::string>(v);
                  return "";
                },
                [access, check](const Config& c) -> std::string {
                  return check ? check(access(const_cast<Config&>(c))) : "";
                },
                [access](const Config& c) { return TomlQuote(access(const_cast<Config&>(c))); }};
}

// An integer field of type int or int64_t, within [min, max]; `bytes` also accepts
// "10MiB"-style strings.
template <typename Access>
KeyDef IntKey(std::string_view section, std::string_view name, int64_t min, int64_t max,
              Access access, bool bytes = false) {
  return KeyDef{
      section, name,
      [access, min, max, bytes](Config& c, const RawValue& v) -> std::string {
        std::optional<int64_t> n;
        if (const auto* i = std::get_if<int64_t>(&v)) {
          n = *i;
        } else if (const auto* s = std::get_if<std::string>(&v)) {
          n = bytes ? ParseBytes(*s) : ParseInt(*s);
          if (!n) {
            return std::string(bytes ? "expected a byte count such as 1048576 or 1MiB"
                                     : "expected an integer") +
                   ", got " + Quoted(*s);
          }
        } else {
          return "expected an integer, got " + TypeName(v);
        }
        // Range-check before narrowing, so a huge value cannot wrap into range.
        if (*n < min || *n > max) {
          return "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                 ", got " + std::to_string(*n);
        }
        using Field = std::remove_reference_t<decltype(access(c))>;
        access(c) = static_cast<Field>(*n);
        return "";
      },
      [access, min, max](const Config& c) -> std::string {
        int64_t n = access(const_cast<Config&>(c));
        if (n < min || n > max) {
          return "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                 ", got " + std::to_string(n);
        }
        return "";
      },
      [access](const Config& c) { return std::to_string(access(const_cast<Config&>(c))); }};
}

template <typename Access>
KeyDef BoolKey(std::string_view section, std::string_view name, Access access) {
  return KeyDef{section, name,
                [access](Config& c, const RawValue& v) -> std::string {
                  if (const auto* b = std::get_if<bool>(&v)) {
                    access(c) = *b;
                    return "";
                  }
                  if (const auto* s = std::get_if<std::string>(&v)) {
                    std::string l = AsciiLower(*s);
                    if (l == "true" || l == "1" || l == "yes" || l == "on") {
                      access(c) = true;
                      return "";
                    }
                    if (l == "false" || l == "0" || l == "no" || l == "off") {
                      access(c) = false;
                      return "";
                    }
                    return "expected true or false, got " + Quoted(*s);
                  }
                  return "expected a boolean, got " + TypeName(v);
                },
                [](const Config&) { return std::string(); },
                [access](const Config& c) {
                  return std::string(access(const_cast<Config&>(c)) ? "true" : "false");
                }};
}

template <typename E, typename Access>
KeyDef EnumKey(std::string_view section, std::string_view name,
               std::vector<std::pair<std::string_view, E>> values, Access access) {
  return KeyDef{
      section, name,
      [access, values](Config& c, const RawValue& v) -> std::string {
        const auto* s = std::get_if<std::string>(&v);
        if (!s) return "expected a string, got " + TypeName(v);
        std::string list;
        for (const auto& [wire, e] : values) {
          if (*s == wire) {
            access(c) = e;
            return "";
          }
          list += (list.empty() ? "" : ", ") + std::string(wire);
        }
        return "expected one of " + list + "; got " + Quoted(*s);
      },
      [](const Config&) { return std::string(); },
      [access](const Config& c) { return TomlQuote(Name(access(const_cast<Config&>(c)))); }};
}

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// [server]: the listen address, thread counts, header limit and connection timeouts.
std::vector<KeyDef> ServerKeys() {
  return {
      StringKey(
          "server", "listen", [](Config & c) -> auto& { return c.server.listen; }, CheckListen),
      StringKey(
          "server", "public_url", [](Config & c) -> auto& { return c.server.public_url; },
          CheckPublicUrl),
      IntKey(
          "server", "threads", 0, 1024, [](Config & c) -> auto& { return c.server.threads; }),
      IntKey(
          "server", "worker_threads", 0, 4096,
          [](Config & c) -> auto& { return c.server.worker_threads; }),
      IntKey(
          "server", "max_header_bytes", 1024, 1 << 20,
          [](Config & c) -> auto& { return c.server.max_header_bytes; }, true),
      IntKey(
          "server", "idle_timeout_s", 1, 86400,
          [](Config & c) -> auto& { return c.server.idle_timeout_s; }),
      IntKey(
          "server", "shutdown_grace_s", 0, 3600,
          [](Config & c) -> auto& { return c.server.shutdown_grace_s; }),
      IntKey(
          "server", "drain_delay_ms", 0, 600000,
          [](Config & c) -> auto& { return c.server.drain_delay_ms; }),
  };
}

// [storage]: the data directory and the blob store (local or S3) with its transfer modes.
std::vector<KeyDef> StorageKeys() {
  return {
      StringKey(
          "storage", "data_dir", [](Config & c) -> auto& { return c.storage.data_dir; },
          CheckNotEmpty),
      EnumKey<BlobsKind>(
          "storage", "blobs", {{"local", BlobsKind::Local}, {"s3", BlobsKind::S3}},
          [](Config & c) -> auto& { return c.storage.blobs; }),
      EnumKey<DownloadMode>(
          "storage", "download_mode",
          {{"proxy", DownloadMode::Proxy}, {"redirect", DownloadMode::Redirect}},
          [](Config & c) -> auto& { return c.storage.download_mode; }),
      EnumKey<UploadMode>(
          "storage", "upload_mode", {{"proxy", UploadMode::Proxy}, {"direct", UploadMode::Direct}},
          [](Config & c) -> auto& { return c.storage.upload_mode; }),
      StringKey(
          "storage", "s3_endpoint", [](Config & c) -> auto& { return c.storage.s3_endpoint; },
          CheckS3Endpoint),
      StringKey(
          "storage", "s3_bucket", [](Config & c) -> auto& { return c.storage.s3_bucket; }),
      StringKey(
          "storage", "s3_region", [](Config & c) -> auto& { return c.storage.s3_region; },
          CheckNotEmpty),
      StringKey(
          "storage", "s3_access_key", [](Config & c) -> auto& { return c.storage.s3_access_key; }),
      StringKey(
          "storage", "s3_secret_key", [](Config & c) -> auto& { return c.storage.s3_secret_key; }),
      BoolKey(
          "storage", "s3_path_style", [](Config & c) -> auto& { return c.storage.s3_path_style; }),
      StringKey(
          "storage", "s3_prefix", [](Config & c) -> auto& { return c.storage.s3_prefix; }),
      IntKey(
          "storage", "s3_url_ttl_s", 1, 7 * 86400,
          [](Config & c) -> auto& { return c.storage.s3_url_ttl_s; }),
  };
}

// [database]: the SQLite file or a PostgreSQL URL.
std::vector<KeyDef> DatabaseKeys() {
  return {
      StringKey(
          "database", "sqlite_path", [](Config & c) -> auto& { return c.database.sqlite_path; }),
      StringKey(
          "database", "url", [](Config & c) -> auto& { return c.database.url; }, CheckPostgresUrl),
      IntKey(
          "database", "max_connections", 1, 1024,
          [](Config & c) -> auto& { return c.database.max_connections; }),
  };
}

// [limits], first part: git process and hashing slots, request and upload sizes.
std::vector<KeyDef> LimitsKeys() {
  return {
      IntKey(
          "limits", "pack_concurrency", 1, 1024,
          [](Config & c) -> auto& { return c.limits.pack_concurrency; }),
      IntKey(
          "limits", "pack_per_principal", 1, 1024,
          [](Config & c) -> auto& { return c.limits.pack_per_principal; }),
      IntKey(
          "limits", "pack_queue", 0, 1000000,
          [](Config & c) -> auto& { return c.limits.pack_queue; }),
      IntKey(
          "limits", "pack_queue_wait_s", 0, 3600,
          [](Config & c) -> auto& { return c.limits.pack_queue_wait_s; }),
      IntKey(
          "limits", "push_concurrency", 1, 1024,
          [](Config & c) -> auto& { return c.limits.push_concurrency; }),
      IntKey(
          "limits", "password_hash_concurrency", 1, 256,
          [](Config & c) -> auto& { return c.limits.password_hash_concurrency; }),
      IntKey(
          "limits", "max_json_body_bytes", 1024, int64_t{1} << 30,
          [](Config & c) -> auto& { return c.limits.max_json_body_bytes; }, true),
      IntKey(
          "limits", "max_lfs_batch_objects", 1, 100000,
          [](Config & c) -> auto& { return c.limits.max_lfs_batch_objects; }),
      IntKey(
          "limits", "max_upload_bytes", 0, kMaxInt64,
          [](Config & c) -> auto& { return c.limits.max_upload_bytes; }, true),
      IntKey(
          "limits", "multipart_threshold_bytes", 0, kMaxInt64,
          [](Config & c) -> auto& { return c.limits.multipart_threshold_bytes; }, true),
      IntKey(
          "limits", "multipart_chunk_bytes", 1024, int64_t{5} << 30,
          [](Config & c) -> auto& { return c.limits.multipart_chunk_bytes; }, true),
      IntKey(
          "limits", "upload_part_bytes", int64_t{5} << 20, int64_t{5} << 30,
          [](Config & c) -> auto& { return c.limits.upload_part_bytes; }, true),
      IntKey(
          "limits", "upload_expiry_s", 1, kMaxInt,
          [](Config & c) -> auto& { return c.limits.upload_expiry_s; }),
      IntKey(
          "limits", "max_open_uploads", 0, kMaxInt,
          [](Config & c) -> auto& { return c.limits.max_open_uploads; }),
  };
}

// [limits], second part: request bodies (issue 13): buffers, memory, rates, counts per caller.
std::vector<KeyDef> BodyLimitsKeys() {
  return {
      IntKey(
          "limits", "body_buffer_bytes", 4096, int64_t{1} << 30,
          [](Config & c) -> auto& { return c.limits.body_buffer_bytes; }, true),
      IntKey(
          "limits", "body_memory_bytes", int64_t{1} << 20, kMaxInt64,
          [](Config & c) -> auto& { return c.limits.body_memory_bytes; }, true),
      IntKey(
          "limits", "body_memory_wait_s", 0, 3600,
          [](Config & c) -> auto& { return c.limits.body_memory_wait_s; }),
      IntKey(
          "limits", "min_body_rate", 0, int64_t{1} << 30,
          [](Config & c) -> auto& { return c.limits.min_body_rate; }, true),
      IntKey(
          "limits", "body_rate_window_s", 1, 86400,
          [](Config & c) -> auto& { return c.limits.body_rate_window_s; }),
      IntKey(
          "limits", "body_time_limit_s", 0, kMaxInt,
          [](Config & c) -> auto& { return c.limits.body_time_limit_s; }),
      IntKey(
          "limits", "connections_per_ip", 0, kMaxInt,
          [](Config & c) -> auto& { return c.limits.connections_per_ip; }),
      IntKey(
          "limits", "anonymous_bodies_per_ip", 0, kMaxInt,
          [](Config & c) -> auto& { return c.limits.anonymous_bodies_per_ip; }),
      IntKey(
          "limits", "bodies_per_principal", 0, kMaxInt,
          [](Config & c) -> auto& { return c.limits.bodies_per_principal; }),
      IntKey(
          "limits", "streaming_bodies", 1, 65536,
          [](Config & c) -> auto& { return c.limits.streaming_bodies; }),
      IntKey(
          "limits", "handler_memory_bytes", int64_t{1} << 20, kMaxInt64,
          [](Config & c) -> auto& { return c.limits.handler_memory_bytes; }, true),
      IntKey(
          "limits", "handler_memory_wait_s", 0, 3600,
          [](Config & c) -> auto& { return c.limits.handler_memory_wait_s; }),
  };
}

// [auth]: LFS ticket lifetime and the signing key.
std::vector<KeyDef> AuthKeys() {
  return {
      IntKey(
          "auth", "ticket_ttl_s", 60, 7 * 86400,
          [](Config & c) -> auto& { return c.auth.ticket_ttl_s; }),
      StringKey(
          "auth", "secret_file", [](Config & c) -> auto& { return c.auth.secret_file; }),
  };
}

// [cache]: the size of the caches of immutable data; how long changeable rows are kept.
std::vector<KeyDef> CacheKeys() {
  return {
      IntKey(
          "cache", "entries", 0, kMaxInt, [](Config & c) -> auto& { return c.cache.entries; }),
      IntKey(
          "cache", "ttl_ms", 0, 3600000, [](Config & c) -> auto& { return c.cache.ttl_ms; }),
  };
}

// [gc]: how often garbage is collected and what it spares.
std::vector<KeyDef> GcKeys() {
  return {
      IntKey(
          "gc", "interval_s", 0, kMaxInt, [](Config & c) -> auto& { return c.gc.interval_s; }),
      IntKey(
          "gc", "grace_s", 60, kMaxInt, [](Config & c) -> auto& { return c.gc.grace_s; }),
  };
}

// [jobs]: the job queue's runner in this process.
// [ssh] and [git_daemon]: git over SSH and git:// (issue 18).
std::vector<KeyDef> GitTransportKeys() {
  return {
      BoolKey(
          "ssh", "enabled", [](Config & c) -> auto& { return c.ssh.enabled; }),
      StringKey(
          "ssh", "socket", [](Config & c) -> auto& { return c.ssh.socket; }),
      StringKey(
          "ssh", "user", [](Config & c) -> auto& { return c.ssh.user; }),
      StringKey(
          "ssh", "host", [](Config & c) -> auto& { return c.ssh.host; }),
      IntKey(
          "ssh", "port", 1, 65535, [](Config & c) -> auto& { return c.ssh.port; }),
      IntKey(
          "ssh", "max_sessions", 1, 100000, [](Config & c) -> auto& { return c.ssh.max_sessions; }),
      StringKey(
          "git_daemon", "listen", [](Config & c) -> auto& { return c.git_daemon.listen; },
          [](const std::string& s) { return s.empty() ? std::string() : CheckListen(s); }),
      IntKey(
          "git_daemon", "max_connections", 1, 100000,
          [](Config & c) -> auto& { return c.git_daemon.max_connections; }),
  };
}

std::vector<KeyDef> JobsKeys() {
  return {
      BoolKey(
          "jobs", "in_process", [](Config & c) -> auto& { return c.jobs.in_process; }),
      IntKey(
          "jobs", "threads", 1, 256, [](Config & c) -> auto& { return c.jobs.threads; }),
      IntKey(
          "jobs", "lease_s", 1, 86400, [](Config & c) -> auto& { return c.jobs.lease_s; }),
      IntKey(
          "jobs", "trending_interval_s", 0, 86400,
          [](Config & c) -> auto& { return c.jobs.trending_interval_s; }),
  };
}

// [maintenance]: when and how repositories are repacked.
std::vector<KeyDef> MaintenanceKeys() {
  return {
      BoolKey(
          "maintenance", "enabled", [](Config & c) -> auto& { return c.maintenance.enabled; }),
      IntKey(
          "maintenance", "full_growth_percent", 1, 10000,
          [](Config & c) -> auto& { return c.maintenance.full_growth_percent; }),
      IntKey(
          "maintenance", "light_packs", 2, 100000,
          [](Config & c) -> auto& { return c.maintenance.light_packs; }),
      IntKey(
          "maintenance", "timeout_s", 1, kMaxInt,
          [](Config & c) -> auto& { return c.maintenance.timeout_s; }),
      IntKey(
          "maintenance", "threads", 0, 1024,
          [](Config & c) -> auto& { return c.maintenance.threads; }),
      BoolKey(
          "maintenance", "after_import",
          [](Config & c) -> auto& { return c.maintenance.after_import; }),
  };
}

// [import]: the private hosts web imports may read.
std::vector<KeyDef> ImportKeys() {
  return {
      StringKey(
          "import", "allow_private_hosts",
          [](Config & c) -> auto& { return c.import.allow_private_hosts; }),
  };
}

// [webhooks]: where deliveries may go, their timeout, retries and threads.
std::vector<KeyDef> WebhooksKeys() {
  return {
      StringKey(
          "webhooks", "allow_private_hosts",
          [](Config & c) -> auto& { return c.webhooks.allow_private_hosts; }),
      IntKey(
          "webhooks", "timeout_s", 1, 300,
          [](Config & c) -> auto& { return c.webhooks.timeout_s; }),
      IntKey(
          "webhooks", "max_attempts", 1, 20,
          [](Config & c) -> auto& { return c.webhooks.max_attempts; }),
      IntKey(
          "webhooks", "retry_base_s", 1, 3600,
          [](Config & c) -> auto& { return c.webhooks.retry_base_s; }),
      IntKey(
          "webhooks", "threads", 1, 64, [](Config & c) -> auto& { return c.webhooks.threads; }),
      IntKey(
          "webhooks", "max_per_user", 1, 10000,
          [](Config & c) -> auto& { return c.webhooks.max_per_user; }),
  };
}

// [mirrors]: where mirrors may reach, their schedule and their bounds.
std::vector<KeyDef> MirrorsKeys() {
  return {
      StringKey(
          "mirrors", "local_roots", [](Config & c) -> auto& { return c.mirrors.local_roots; }),
      IntKey(
          "mirrors", "interval_s", 60, 365 * 86400,
          [](Config & c) -> auto& { return c.mirrors.interval_s; }),
      IntKey(
          "mirrors", "min_interval_s", 1, 86400,
          [](Config & c) -> auto& { return c.mirrors.min_interval_s; }),
      IntKey(
          "mirrors", "timeout_s", 10, 86400,
          [](Config & c) -> auto& { return c.mirrors.timeout_s; }),
      IntKey(
          "mirrors", "max_syncs", 1, 64, [](Config & c) -> auto& { return c.mirrors.max_syncs; }),
      IntKey(
          "mirrors", "tick_s", 0, 86400, [](Config & c) -> auto& { return c.mirrors.tick_s; }),
  };
}

// [upstream]: the pull-through cache's upstream hubs, rules and bounds.
std::vector<KeyDef> UpstreamKeys() {
  return {
      StringKey(
          "upstream", "url", [](Config & c) -> auto& { return c.upstream.url; }),
      StringKey(
          "upstream", "token", [](Config & c) -> auto& { return c.upstream.token; }),
      StringKey(
          "upstream", "allow", [](Config & c) -> auto& { return c.upstream.allow; }),
      StringKey(
          "upstream", "deny", [](Config & c) -> auto& { return c.upstream.deny; }),
      IntKey(
          "upstream", "ttl_s", 1, 365 * 86400,
          [](Config & c) -> auto& { return c.upstream.ttl_s; }),
      IntKey(
          "upstream", "negative_ttl_s", 0, 86400,
          [](Config & c) -> auto& { return c.upstream.negative_ttl_s; }),
      IntKey(
          "upstream", "max_file_bytes", 0, int64_t{1} << 50,
          [](Config & c) -> auto& { return c.upstream.max_file_bytes; }, /*bytes=*/true),
      IntKey(
          "upstream", "max_waiting", 1, 4096,
          [](Config & c) -> auto& { return c.upstream.max_waiting; }),
  };
}

// [oci]: the registry's auth challenge, tokens, manifest size and uploads.
std::vector<KeyDef> OciKeys() {
  return {
      StringKey(
          "oci", "challenge", [](Config & c) -> auto& { return c.oci.challenge; },
          OneOf({"bearer", "basic"})),
      IntKey(
          "oci", "token_ttl_s", 60, 86400, [](Config & c) -> auto& { return c.oci.token_ttl_s; }),
      StringKey(
          "oci", "service", [](Config & c) -> auto& { return c.oci.service; }),
      IntKey(
          "oci", "max_manifest_bytes", 4 << 20, int64_t{1} << 30,
          [](Config & c) -> auto& { return c.oci.max_manifest_bytes; }, true),
      IntKey(
          "oci", "max_open_uploads", 0, kMaxInt,
          [](Config & c) -> auto& { return c.oci.max_open_uploads; }),
      IntKey(
          "oci", "upload_idle_s", 1, kMaxInt,
          [](Config & c) -> auto& { return c.oci.upload_idle_s; }),
  };
}

// [viewer]: the dataset viewer's export (shard and row group sizes, caps) and its engines.
std::vector<KeyDef> ViewerKeys() {
  return {
      BoolKey(
          "viewer", "enabled", [](Config & c) -> auto& { return c.viewer.enabled; }),
      IntKey(
          "viewer", "workers", 1, 64, [](Config & c) -> auto& { return c.viewer.workers; }),
      IntKey(
          "viewer", "row_group_rows", 2048, 10'000'000,
          [](Config & c) -> auto& { return c.viewer.row_group_rows; }),
      IntKey(
          "viewer", "row_groups_per_file", 1, 100000,
          [](Config & c) -> auto& { return c.viewer.row_groups_per_file; }),
      IntKey(
          "viewer", "max_parquet_bytes", 1 << 20, kMaxInt64,
          [](Config & c) -> auto& { return c.viewer.max_parquet_bytes; }, true),
      IntKey(
          "viewer", "max_source_bytes", 1 << 20, kMaxInt64,
          [](Config & c) -> auto& { return c.viewer.max_source_bytes; }, true),
      IntKey(
          "viewer", "native_max_row_group_rows", 0, kMaxInt64,
          [](Config & c) -> auto& { return c.viewer.native_max_row_group_rows; }),
      IntKey(
          "viewer", "native_max_row_groups", 0, kMaxInt,
          [](Config & c) -> auto& { return c.viewer.native_max_row_groups; }),
      IntKey(
          "viewer", "memory_bytes", 64 << 20, kMaxInt64,
          [](Config & c) -> auto& { return c.viewer.memory_bytes; }, true),
      IntKey(
          "viewer", "threads", 0, 1024, [](Config & c) -> auto& { return c.viewer.threads; }),
      IntKey(
          "viewer", "export_timeout_s", 1, kMaxInt,
          [](Config & c) -> auto& { return c.viewer.export_timeout_s; }),
      IntKey(
          "viewer", "query_timeout_ms", 10, kMaxInt,
          [](Config & c) -> auto& { return c.viewer.query_timeout_ms; }),
      IntKey(
          "viewer", "max_rows_bytes", 1 << 20, int64_t{1} << 32,
          [](Config & c) -> auto& { return c.viewer.max_rows_bytes; }, true),
      IntKey(
          "viewer", "state_ttl_ms", 0, kMaxInt,
          [](Config & c) -> auto& { return c.viewer.state_ttl_ms; }),
  };
}

// [gateway]: the gateway's health checks.
std::vector<KeyDef> GatewayKeys() {
  return {
      IntKey(
          "gateway", "health_interval_ms", 0, 3'600'000,
          [](Config & c) -> auto& { return c.gateway.health_interval_ms; }),
  };
}

// [log]: the log level and the access log.
std::vector<KeyDef> LogKeys() {
  return {
      StringKey(
          "log", "level", [](Config & c) -> auto& { return c.log.level; },
          OneOf({"trace", "debug", "info", "warn", "error", "critical", "off"})),
      BoolKey(
          "log", "access_log", [](Config & c) -> auto& { return c.log.access_log; }),
      StringKey(
          "log", "access_format", [](Config & c) -> auto& { return c.log.access_format; },
          OneOf({"text", "json"})),
      StringKey(
          "log", "otlp_endpoint", [](Config & c) -> auto& { return c.log.otlp_endpoint; },
          CheckHttpUrl),
      StringKey(
          "log", "service_name", [](Config & c) -> auto& { return c.log.service_name; }),
  };
}

// Every section's keys, in documentation order.
std::vector<KeyDef> MakeKeys() {
  std::vector<KeyDef> keys;
  for (auto section :
       {ServerKeys, StorageKeys, DatabaseKeys, LimitsKeys, BodyLimitsKeys, AuthKeys, CacheKeys,
        GcKeys, JobsKeys, GitTransportKeys, MaintenanceKeys, ImportKeys, WebhooksKeys, MirrorsKeys,
        UpstreamKeys, OciKeys, ViewerKeys, GatewayKeys, LogKeys}) {
    for (KeyDef& key : section()) keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace

std::string KeyDef::FullName() const { return std::string(section) + "." + std::string(name); }

std::string KeyDef::EnvName() const {
  std::string env = "HANGAR_" + std::string(section) + "_" + std::string(name);
  for (char& c : env) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env;
}

std::span<const KeyDef> Keys() {
  static const std::vector<KeyDef> keys = MakeKeys();
  return keys;
}

const KeyDef* FindKey(std::string_view full_name) {
  for (const KeyDef& k : Keys()) {
    if (full_name.size() == k.section.size() + 1 + k.name.size() &&
        full_name.starts_with(k.section) && full_name[k.section.size()] == '.' &&
        full_name.ends_with(k.name)) {
      return &k;
    }
  }
  return nullptr;
}

std::string TomlQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace hangar::config::internal
