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

std::vector<KeyDef> MakeKeys() {
  std::vector<KeyDef> k;
  // [server]
  k.push_back(StringKey(
      "server", "listen", [](Config & c) -> auto& { return c.server.listen; }, CheckListen));
  k.push_back(StringKey(
      "server", "public_url", [](Config & c) -> auto& { return c.server.public_url; },
      CheckPublicUrl));
  k.push_back(IntKey(
      "server", "threads", 0, 1024, [](Config & c) -> auto& { return c.server.threads; }));
  k.push_back(IntKey(
      "server", "worker_threads", 0, 4096,
      [](Config & c) -> auto& { return c.server.worker_threads; }));
  k.push_back(IntKey(
      "server", "max_header_bytes", 1024, 1 << 20,
      [](Config & c) -> auto& { return c.server.max_header_bytes; }, true));
  k.push_back(IntKey(
      "server", "idle_timeout_s", 1, 86400,
      [](Config & c) -> auto& { return c.server.idle_timeout_s; }));
  k.push_back(IntKey(
      "server", "shutdown_grace_s", 0, 3600,
      [](Config & c) -> auto& { return c.server.shutdown_grace_s; }));
  // [storage]
  k.push_back(StringKey(
      "storage", "data_dir", [](Config & c) -> auto& { return c.storage.data_dir; },
      CheckNotEmpty));
  k.push_back(EnumKey<BlobsKind>(
      "storage", "blobs", {{"local", BlobsKind::Local}, {"s3", BlobsKind::S3}},
      [](Config & c) -> auto& { return c.storage.blobs; }));
  k.push_back(EnumKey<DownloadMode>(
      "storage", "download_mode",
      {{"proxy", DownloadMode::Proxy}, {"redirect", DownloadMode::Redirect}},
      [](Config & c) -> auto& { return c.storage.download_mode; }));
  k.push_back(EnumKey<UploadMode>(
      "storage", "upload_mode", {{"proxy", UploadMode::Proxy}, {"direct", UploadMode::Direct}},
      [](Config & c) -> auto& { return c.storage.upload_mode; }));
  k.push_back(StringKey(
      "storage", "s3_endpoint", [](Config & c) -> auto& { return c.storage.s3_endpoint; },
      CheckS3Endpoint));
  k.push_back(StringKey(
      "storage", "s3_bucket", [](Config & c) -> auto& { return c.storage.s3_bucket; }));
  k.push_back(StringKey(
      "storage", "s3_region", [](Config & c) -> auto& { return c.storage.s3_region; },
      CheckNotEmpty));
  k.push_back(StringKey(
      "storage", "s3_access_key", [](Config & c) -> auto& { return c.storage.s3_access_key; }));
  k.push_back(StringKey(
      "storage", "s3_secret_key", [](Config & c) -> auto& { return c.storage.s3_secret_key; }));
  k.push_back(BoolKey(
      "storage", "s3_path_style", [](Config & c) -> auto& { return c.storage.s3_path_style; }));
  k.push_back(StringKey(
      "storage", "s3_prefix", [](Config & c) -> auto& { return c.storage.s3_prefix; }));
  k.push_back(IntKey(
      "storage", "s3_url_ttl_s", 1, 7 * 86400,
      [](Config & c) -> auto& { return c.storage.s3_url_ttl_s; }));
  // [database]
  k.push_back(StringKey(
      "database", "sqlite_path", [](Config & c) -> auto& { return c.database.sqlite_path; }));
  k.push_back(StringKey(
      "database", "postgres_url", [](Config & c) -> auto& { return c.database.postgres_url; },
      CheckPostgresUrl));
  // [limits]
  k.push_back(IntKey(
      "limits", "pack_concurrency", 1, 1024,
      [](Config & c) -> auto& { return c.limits.pack_concurrency; }));
  k.push_back(IntKey(
      "limits", "pack_per_principal", 1, 1024,
      [](Config & c) -> auto& { return c.limits.pack_per_principal; }));
  k.push_back(IntKey(
      "limits", "pack_queue", 0, 1000000, [](Config & c) -> auto& { return c.limits.pack_queue; }));
  k.push_back(IntKey(
      "limits", "pack_queue_wait_s", 0, 3600,
      [](Config & c) -> auto& { return c.limits.pack_queue_wait_s; }));
  k.push_back(IntKey(
      "limits", "push_concurrency", 1, 1024,
      [](Config & c) -> auto& { return c.limits.push_concurrency; }));
  k.push_back(IntKey(
      "limits", "password_hash_concurrency", 1, 256,
      [](Config & c) -> auto& { return c.limits.password_hash_concurrency; }));
  k.push_back(IntKey(
      "limits", "max_json_body_bytes", 1024, int64_t{1} << 30,
      [](Config & c) -> auto& { return c.limits.max_json_body_bytes; }, true));
  k.push_back(IntKey(
      "limits", "max_lfs_batch_objects", 1, 100000,
      [](Config & c) -> auto& { return c.limits.max_lfs_batch_objects; }));
  k.push_back(IntKey(
      "limits", "max_upload_bytes", 0, kMaxInt64,
      [](Config & c) -> auto& { return c.limits.max_upload_bytes; }, true));
  k.push_back(IntKey(
      "limits", "multipart_threshold_bytes", 0, kMaxInt64,
      [](Config & c) -> auto& { return c.limits.multipart_threshold_bytes; }, true));
  k.push_back(IntKey(
      "limits", "multipart_chunk_bytes", 1024, int64_t{5} << 30,
      [](Config & c) -> auto& { return c.limits.multipart_chunk_bytes; }, true));
  k.push_back(IntKey(
      "limits", "upload_part_bytes", int64_t{5} << 20, int64_t{5} << 30,
      [](Config & c) -> auto& { return c.limits.upload_part_bytes; }, true));
  k.push_back(IntKey(
      "limits", "upload_expiry_s", 1, kMaxInt,
      [](Config & c) -> auto& { return c.limits.upload_expiry_s; }));
  k.push_back(IntKey(
      "limits", "max_open_uploads", 0, kMaxInt,
      [](Config & c) -> auto& { return c.limits.max_open_uploads; }));
  k.push_back(IntKey(
      "limits", "body_buffer_bytes", 4096, int64_t{1} << 30,
      [](Config & c) -> auto& { return c.limits.body_buffer_bytes; }, true));
  k.push_back(IntKey(
      "limits", "body_memory_bytes", int64_t{1} << 20, kMaxInt64,
      [](Config & c) -> auto& { return c.limits.body_memory_bytes; }, true));
  k.push_back(IntKey(
      "limits", "body_memory_wait_s", 0, 3600,
      [](Config & c) -> auto& { return c.limits.body_memory_wait_s; }));
  k.push_back(IntKey(
      "limits", "min_body_rate", 0, int64_t{1} << 30,
      [](Config & c) -> auto& { return c.limits.min_body_rate; }, true));
  k.push_back(IntKey(
      "limits", "body_rate_window_s", 1, 86400,
      [](Config & c) -> auto& { return c.limits.body_rate_window_s; }));
  k.push_back(IntKey(
      "limits", "body_time_limit_s", 0, kMaxInt,
      [](Config & c) -> auto& { return c.limits.body_time_limit_s; }));
  k.push_back(IntKey(
      "limits", "connections_per_ip", 0, kMaxInt,
      [](Config & c) -> auto& { return c.limits.connections_per_ip; }));
  k.push_back(IntKey(
      "limits", "anonymous_bodies_per_ip", 0, kMaxInt,
      [](Config & c) -> auto& { return c.limits.anonymous_bodies_per_ip; }));
  k.push_back(IntKey(
      "limits", "bodies_per_principal", 0, kMaxInt,
      [](Config & c) -> auto& { return c.limits.bodies_per_principal; }));
  k.push_back(IntKey(
      "limits", "streaming_bodies", 1, 65536,
      [](Config & c) -> auto& { return c.limits.streaming_bodies; }));
  k.push_back(IntKey(
      "limits", "handler_memory_bytes", int64_t{1} << 20, kMaxInt64,
      [](Config & c) -> auto& { return c.limits.handler_memory_bytes; }, true));
  k.push_back(IntKey(
      "limits", "handler_memory_wait_s", 0, 3600,
      [](Config & c) -> auto& { return c.limits.handler_memory_wait_s; }));
  // [auth]
  k.push_back(IntKey(
      "auth", "ticket_ttl_s", 60, 7 * 86400,
      [](Config & c) -> auto& { return c.auth.ticket_ttl_s; }));
  k.push_back(StringKey(
      "auth", "secret_file", [](Config & c) -> auto& { return c.auth.secret_file; }));
  // [cache]
  k.push_back(IntKey(
      "cache", "entries", 0, kMaxInt, [](Config & c) -> auto& { return c.cache.entries; }));
  // [gc]
  k.push_back(IntKey(
      "gc", "interval_s", 0, kMaxInt, [](Config & c) -> auto& { return c.gc.interval_s; }));
  k.push_back(IntKey(
      "gc", "grace_s", 60, kMaxInt, [](Config & c) -> auto& { return c.gc.grace_s; }));
  // [maintenance]
  k.push_back(BoolKey(
      "maintenance", "enabled", [](Config & c) -> auto& { return c.maintenance.enabled; }));
  k.push_back(IntKey(
      "maintenance", "full_growth_percent", 1, 10000,
      [](Config & c) -> auto& { return c.maintenance.full_growth_percent; }));
  k.push_back(IntKey(
      "maintenance", "light_packs", 2, 100000,
      [](Config & c) -> auto& { return c.maintenance.light_packs; }));
  k.push_back(IntKey(
      "maintenance", "timeout_s", 1, kMaxInt,
      [](Config & c) -> auto& { return c.maintenance.timeout_s; }));
  k.push_back(IntKey(
      "maintenance", "threads", 0, 1024,
      [](Config & c) -> auto& { return c.maintenance.threads; }));
  k.push_back(BoolKey(
      "maintenance", "after_import",
      [](Config & c) -> auto& { return c.maintenance.after_import; }));
  // [import]
  k.push_back(StringKey(
      "import", "allow_private_hosts",
      [](Config & c) -> auto& { return c.import.allow_private_hosts; }));
  // [oci]
  k.push_back(StringKey(
      "oci", "challenge", [](Config & c) -> auto& { return c.oci.challenge; },
      OneOf({"bearer", "basic"})));
  k.push_back(IntKey(
      "oci", "token_ttl_s", 60, 86400, [](Config & c) -> auto& { return c.oci.token_ttl_s; }));
  k.push_back(StringKey(
      "oci", "service", [](Config & c) -> auto& { return c.oci.service; }));
  k.push_back(IntKey(
      "oci", "max_manifest_bytes", 4 << 20, int64_t{1} << 30,
      [](Config & c) -> auto& { return c.oci.max_manifest_bytes; }, true));
  k.push_back(IntKey(
      "oci", "max_open_uploads", 0, kMaxInt,
      [](Config & c) -> auto& { return c.oci.max_open_uploads; }));
  k.push_back(IntKey(
      "oci", "upload_idle_s", 1, kMaxInt, [](Config & c) -> auto& { return c.oci.upload_idle_s; }));
  // [log]
  k.push_back(StringKey(
      "log", "level", [](Config & c) -> auto& { return c.log.level; },
      OneOf({"trace", "debug", "info", "warn", "error", "critical", "off"})));
  k.push_back(BoolKey(
      "log", "access_log", [](Config & c) -> auto& { return c.log.access_log; }));
  return k;
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
