#include "config/config.h"

#include <toml++/toml.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "config/config_keys.h"

namespace hangar::config {
namespace {

using internal::FindKey;
using internal::KeyDef;
using internal::Keys;
using internal::RawValue;

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

// Sets `key` from `v`, then checks it; errors are prefixed with `where`.
Result<void> Apply(Config& c, const KeyDef& key, const RawValue& v, std::string_view where) {
  std::string problem = key.set(c, v);
  if (problem.empty()) problem = key.check(c);
  if (!problem.empty()) return Bad(std::string(where) + ": " + problem);
  return {};
}

// [runtimes.<name>] tables (config.h RuntimeTemplate). `where` names the file.
Result<void> ApplyRuntimes(Config& c, const toml::table& runtimes, const std::string& where) {
  for (const auto& [name_key, node] : runtimes) {
    std::string name(name_key.str());
    std::string at = where + ": runtimes." + name;
    const toml::table* t = node.as_table();
    if (!t) return Bad(at + " must be a table: [runtimes." + name + "]");
    RuntimeTemplate r;
    for (const auto& [key, value] : *t) {
      std::string k(key.str());
      if (k == "command" && value.is_array()) {
        for (const auto& arg : *value.as_array()) {
          auto s = arg.value<std::string>();
          if (!s || !arg.is_string()) return Bad(at + ".command: every element is a string");
          r.command.push_back(*s);
        }
      } else if ((k == "protocol" || k == "ready_path") && value.is_string()) {
        (k == "protocol" ? r.protocol : r.ready_path) = *value.value<std::string>();
      } else if (k == "start_timeout_s" && value.is_integer()) {
        r.start_timeout_s =
            static_cast<int>(std::clamp<int64_t>(*value.value<int64_t>(), 0, 1 << 30));
      } else {
        return Bad(at + ": unknown key or wrong type '" + k +
                   "' (command = [\"…\"], protocol, ready_path, start_timeout_s)");
      }
    }
    if (r.command.empty()) return Bad(at + ".command is required: [\"program\", \"arg\", …]");
    if (r.protocol != "oip" && r.protocol != "openai")
      return Bad(at + ".protocol must be oip or openai");
    if (r.start_timeout_s < 1 || r.start_timeout_s > 3600)
      return Bad(at + ".start_timeout_s must be from 1 to 3600");
    if (!r.ready_path.empty() && r.ready_path[0] != '/')
      return Bad(at + ".ready_path must start with '/'");
    c.runtimes[name] = std::move(r);
  }
  return {};
}

// The TOML layer. `source` names the file in messages.
Result<void> ApplyToml(Config& c, std::string_view text, const std::string& source) {
  const std::string where = "config file " + source;
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    return Bad(where + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
               std::string(e.description()));
  }
  for (const auto& [section_key, section_node] : root) {
    std::string section(section_key.str());
    const toml::table* section_table = section_node.as_table();
    if (!section_table) {
      return Bad(where + ": unknown key '" + section +
                 "' (settings live in sections such as [server])");
    }
    if (section == "runtimes") {
      HANGAR_TRY(ApplyRuntimes(c, *section_table, where));
      continue;
    }
    for (const auto& [name_key, node] : *section_table) {
      std::string full = section + "." + std::string(name_key.str());
      const KeyDef* key = FindKey(full);
      if (!key) return Bad(where + ": unknown key '" + full + "'");
      RawValue v;
      if (auto s = node.value<std::string>(); s && node.is_string()) {
        v = *s;
      } else if (auto i = node.as_integer()) {
        v = i->get();
      } else if (auto b = node.as_boolean()) {
        v = b->get();
      } else {
        return Bad(where + ": " + full + ": unsupported value type " +
                   "(use a string, an integer or a boolean)");
      }
      HANGAR_TRY(Apply(c, *key, v, where + ": " + full));
    }
  }
  return {};
}

// The environment layer: short aliases first, so the long forms win.
Result<void> ApplyEnv(Config& c,
                      const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"HANGAR_DATA_DIR", "storage.data_dir"},
      {"HANGAR_LISTEN", "server.listen"},
      {"HANGAR_PUBLIC_URL", "server.public_url"},
      {"HANGAR_LOG_LEVEL", "log.level"},
  };
  for (auto [env, full] : kAliases) {
    if (auto v = getenv(std::string(env))) {
      HANGAR_TRY(Apply(c, *FindKey(full), *v, env));
    }
  }
  for (const KeyDef& key : Keys()) {
    std::string env = key.EnvName();
    if (auto v = getenv(env)) HANGAR_TRY(Apply(c, key, *v, env));
  }
  return {};
}

std::optional<std::string> RealGetenv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

}  // namespace

std::string_view Name(BlobsKind v) { return v == BlobsKind::Local ? "local" : "s3"; }
std::string_view Name(DownloadMode v) { return v == DownloadMode::Proxy ? "proxy" : "redirect"; }
std::string_view Name(UploadMode v) { return v == UploadMode::Proxy ? "proxy" : "direct"; }

Result<std::pair<std::string, uint16_t>> ParseListen(std::string_view listen) {
  const std::string quoted = "listen address '" + std::string(listen) + "'";
  std::string_view host, port;
  if (listen.starts_with('[')) {
    size_t close = listen.find(']');
    if (close == std::string_view::npos) return Bad(quoted + " lacks the closing ']'");
    host = listen.substr(1, close - 1);
    if (close + 1 >= listen.size() || listen[close + 1] != ':') {
      return Bad(quoted + " needs a port, e.g. [::1]:8080");
    }
    port = listen.substr(close + 2);
    if (host.find(':') == std::string_view::npos) {
      return Bad(quoted + ": brackets are for IPv6 addresses only");
    }
    for (char c : host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.' && c != '%' &&
          !IsHostChar(c)) {
        return Bad(quoted + " has an invalid IPv6 address");
      }
    }
  } else {
    size_t colon = listen.rfind(':');
    if (colon == std::string_view::npos) {
      return Bad(quoted + " needs a port, e.g. 127.0.0.1:8080");
    }
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return Bad(quoted + ": write IPv6 addresses in brackets, e.g. [::1]:8080");
    }
    for (char c : host) {
      if (!IsHostChar(c)) return Bad(quoted + " has an invalid host");
    }
  }
  if (host.empty()) {
    return Bad(quoted + " needs a host, e.g. 0.0.0.0:8080 for every interface");
  }
  if (port.empty() || port.size() > 5) return Bad(quoted + " has an invalid port");
  unsigned value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return Bad(quoted + " has an invalid port");
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value > 65535) return Bad(quoted + ": port must be at most 65535");
  return std::pair<std::string, uint16_t>(std::string(host), static_cast<uint16_t>(value));
}

Result<void> SetKey(Config& config, std::string_view key, std::string_view value) {
  const KeyDef* def = FindKey(key);
  if (!def) return Bad("unknown config key '" + std::string(key) + "'");
  return Apply(config, *def, std::string(value), key);
}

Result<std::pair<std::string, std::string>> ParseOverride(std::string_view flag) {
  size_t eq = flag.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Bad("expected section.key=value, got '" + std::string(flag) + "'");
  }
  return std::pair<std::string, std::string>(std::string(flag.substr(0, eq)),
                                             std::string(flag.substr(eq + 1)));
}

Result<void> Finalize(Config& c) {
  for (const KeyDef& key : Keys()) {
    if (std::string problem = key.check(c); !problem.empty()) {
      return Bad(key.FullName() + ": " + problem);
    }
  }
  // Cross-field and derived values; each key's own rules were checked above.
  std::string& url = c.server.public_url;
  while (url.ends_with('/')) url.pop_back();
  if (c.limits.body_memory_bytes < c.limits.body_buffer_bytes) {
    // A buffered body has to fit into the budget, or it would wait for nothing.
    return Bad("limits.body_memory_bytes: must be at least limits.body_buffer_bytes (" +
               std::to_string(c.limits.body_buffer_bytes) + ")");
  }

  if (c.storage.blobs == BlobsKind::S3 && c.limits.multipart_threshold_bytes != 0 &&
      c.limits.multipart_chunk_bytes < (int64_t{5} << 20)) {
    // LFS multipart parts are S3 parts there, and S3 refuses to join smaller ones.
    return Bad(
        "limits.multipart_chunk_bytes: must be at least 5242880 (5 MiB, S3's smallest "
        "part) with storage.blobs = \"s3\"");
  }

  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (c.server.threads == 0) c.server.threads = cores;
  if (c.server.worker_threads == 0) c.server.worker_threads = std::max(8, 4 * cores);
  if (c.viewer.threads == 0) c.viewer.threads = cores;
  const std::filesystem::path data_dir(c.storage.data_dir);
  if (c.database.sqlite_path.empty()) c.database.sqlite_path = (data_dir / "hangar.db").string();
  if (c.auth.secret_file.empty()) c.auth.secret_file = (data_dir / "secret").string();
  if (c.ssh.socket.empty()) c.ssh.socket = (data_dir / "serv.sock").string();
  return {};
}

Result<Config> LoadConfig(const LoadOptions& options) {
  Config c;
  auto getenv = options.getenv ? options.getenv : RealGetenv;

  std::optional<std::filesystem::path> file = options.config_file;
  if (!file && !options.config_toml) {
    if (auto from_env = getenv("HANGAR_CONFIG"); from_env && !from_env->empty()) {
      file = *from_env;
    }
  }
  if (file) {
    std::ifstream in(*file, std::ios::binary);
    if (!in) {
      return Bad("config file " + file->string() + ": cannot be read: " + std::strerror(errno));
    }
    std::ostringstream text;
    text << in.rdbuf();
    HANGAR_TRY(ApplyToml(c, text.str(), file->string()));
  } else if (options.config_toml) {
    HANGAR_TRY(ApplyToml(c, *options.config_toml, "(inline)"));
  }

  HANGAR_TRY(ApplyEnv(c, getenv));

  for (const auto& [key, value] : options.overrides) {
    const KeyDef* def = FindKey(key);
    if (!def) return Bad("flag: unknown config key '" + key + "'");
    HANGAR_TRY(Apply(c, *def, value, "flag " + key));
  }

  HANGAR_TRY(Finalize(c));
  return c;
}

std::string ToToml(const Config& config) {
  std::string out;
  std::string_view section;
  for (const KeyDef& key : Keys()) {
    if (key.section != section) {
      if (!section.empty()) out += "\n";
      section = key.section;
      out += "[" + std::string(section) + "]\n";
    }
    out += std::string(key.name) + " = " + key.to_toml(config) + "\n";
  }
  return out;
}

}  // namespace hangar::config
