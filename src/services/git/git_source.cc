#include "services/git/git_source.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/util.h"
#include "net/address.h"

namespace hangar::services {

namespace {

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

constexpr size_t kMaxGitMessage = 400;
constexpr size_t kMaxBearer = 4096;

}  // namespace

Result<ImportSource> CheckImportSource(std::string_view source, bool allow_local) {
  if (source.empty()) return Bad("the import source is empty");
  for (char c : source) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Bad("the import source contains control characters");
    }
  }
  if (source.front() == '-') return Bad("the import source may not start with '-'");
  const std::string allowed =
      allow_local ? "http, https, git, ssh or file" : "http, https, git or ssh";
  size_t scheme_end = source.find("://");
  if (scheme_end != std::string_view::npos) {
    std::string scheme = AsciiLower(source.substr(0, scheme_end));
    bool well_formed =
        !scheme.empty() && std::isalpha(static_cast<unsigned char>(scheme[0])) &&
        std::all_of(scheme.begin(), scheme.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
        });
    if (!well_formed) return Bad("the import source is not a valid URL");
    if (scheme == "http" || scheme == "https" || scheme == "git" || scheme == "ssh") {
      return ImportSource{ImportSource::Kind::Url, std::string(source)};
    }
    if (scheme == "file" && allow_local) {
      return ImportSource{ImportSource::Kind::Local, std::string(source)};
    }
    return Bad("import from '" + scheme + "://' is not allowed; use " + allowed);
  }
  size_t double_colon = source.find("::");
  if (double_colon != std::string_view::npos &&
      source.substr(0, double_colon).find('/') == std::string_view::npos) {
    return Bad("git transport '" + std::string(source.substr(0, double_colon)) +
               "::' is not allowed; use " + allowed);
  }
  size_t colon = source.find(':');
  if (colon != std::string_view::npos &&
      source.substr(0, colon).find('/') == std::string_view::npos) {
    return Bad("scp-style 'host:path' sources are not supported; use ssh://host/path");
  }
  if (!allow_local) {
    return Bad(
        "the import source must be a URL (http, https, git or ssh); local paths are "
        "not allowed");
  }
  if (source.front() != '/') return Bad("a local import source must be an absolute path");
  return ImportSource{ImportSource::Kind::Local, std::string(source)};
}

std::string_view UserInfoOf(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  size_t auth_start = scheme_end + 3;
  size_t auth_end = url.find_first_of("/?#", auth_start);
  std::string_view authority =
      url.substr(auth_start, auth_end == url.npos ? url.npos : auth_end - auth_start);
  size_t at = authority.rfind('@');
  return at == std::string_view::npos ? std::string_view() : authority.substr(0, at);
}

std::string RedactImportSource(std::string_view source) {
  std::string_view userinfo = UserInfoOf(source);
  if (userinfo.empty()) return std::string(source);
  const size_t start = static_cast<size_t>(userinfo.data() - source.data());
  const size_t colon = userinfo.find(':');
  // A user name alone is a secret over http(s) (a token given as the user); over ssh and
  // git it is the account ("git@").
  const std::string scheme = AsciiLower(source.substr(0, source.find("://")));
  if (colon == std::string_view::npos && scheme != "http" && scheme != "https")
    return std::string(source);
  const size_t keep = colon == std::string_view::npos ? 0 : colon + 1;
  return std::string(source.substr(0, start + keep)) + "***" +
         std::string(source.substr(start + userinfo.size()));
}

std::string Scrub(std::string text, std::initializer_list<std::string_view> secrets) {
  for (std::string_view secret : secrets) {
    if (secret.size() < 3) continue;  // too short to be one, and would mangle the text
    for (size_t pos = text.find(secret); pos != std::string::npos;
         pos = text.find(secret, pos + 3)) {
      text.replace(pos, secret.size(), "***");
    }
  }
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

void GitRemoteSettings::ApplyTo(git::Command& cmd) const {
  cmd.Env("GIT_SSH_COMMAND", ssh_command);
  if (config.empty()) return;
  cmd.Env("GIT_CONFIG_COUNT", std::to_string(config.size()));
  for (size_t i = 0; i < config.size(); ++i) {
    cmd.Env("GIT_CONFIG_KEY_" + std::to_string(i), config[i].first);
    cmd.Env("GIT_CONFIG_VALUE_" + std::to_string(i), config[i].second);
  }
}

Result<void> AddBearer(std::string_view token, GitRemoteSettings& settings) {
  if (token.size() > kMaxBearer) return Bad("the credential is longer than 4096 bytes");
  for (char c : token) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return Bad("the credential may hold printable ASCII characters only, without spaces");
  }
  settings.config.emplace_back("http.extraHeader", "Authorization: Bearer " + std::string(token));
  return {};
}

std::string GitComplaint(const std::string& stderr_data, const std::string& hide) {
  std::vector<std::string> lines, errors;
  std::istringstream in(stderr_data);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || (!hide.empty() && line.find(hide) != std::string::npos)) continue;
    // git's own complaints, and what the other side said (a hook's reason, a rejection).
    if (line.rfind("fatal: ", 0) == 0 || line.rfind("error: ", 0) == 0 ||
        line.rfind("remote: ", 0) == 0 || line.rfind(" ! [", 0) == 0) {
      errors.push_back(line);
    }
    lines.push_back(line);
  }
  const std::vector<std::string>& pick = errors.empty() ? lines : errors;
  std::string out;
  for (const auto& l : pick) out += (out.empty() ? "" : "; ") + l;
  if (out.empty()) out = "git exited without a message";
  if (out.size() > kMaxGitMessage) out = out.substr(0, kMaxGitMessage) + "…";
  return out;
}

Result<std::vector<std::string>> ResolveChecked(const std::vector<std::string>& private_hosts,
                                                const std::string& host, std::string_view setting) {
  HANGAR_ASSIGN_OR_RETURN(std::vector<std::string> addrs, net::ResolveHost(host));
  bool exempt = std::any_of(private_hosts.begin(), private_hosts.end(),
                            [&](const auto& h) { return h == "*" || h == host; });
  for (const auto& a : addrs) {
    if (!exempt && !net::IsPublicAddress(a)) {
      return Bad("'" + host + "' is not allowed: it resolves to " + a +
                 ", which is not a public address (an operator may list the host in " +
                 std::string(setting) + ")");
    }
  }
  return addrs;
}

std::string CurlResolveEntry(const std::string& host, uint16_t port,
                             const std::vector<std::string>& addrs) {
  std::string entry = host + ":" + std::to_string(port) + ":";
  for (size_t i = 0; i < addrs.size(); ++i) {
    bool v6 = addrs[i].find(':') != std::string::npos;
    entry += (i ? "," : "") + (v6 ? "[" + addrs[i] + "]" : addrs[i]);
  }
  return entry;
}

Result<void> PinToCheckedHost(const std::vector<std::string>& private_hosts, ImportSource& source,
                              GitRemoteSettings& settings) {
  HANGAR_ASSIGN_OR_RETURN(net::UrlHost where, net::ParseUrlHost(source.git_arg));
  HANGAR_ASSIGN_OR_RETURN(std::vector<std::string> addrs,
                          ResolveChecked(private_hosts, where.host));
  // An IPv6 literal is never looked up (and curl's resolve list cannot name one): only
  // redirects need turning off.
  const bool literal_v6 = where.host.find(':') != std::string::npos;
  if (where.scheme == "http" || where.scheme == "https") {
    if (!literal_v6) {
      settings.config.emplace_back("http.curloptResolve",
                                   CurlResolveEntry(where.host, where.port, addrs));
    }
    settings.config.emplace_back("http.followRedirects", "false");
  } else if (where.scheme == "git") {
    HANGAR_ASSIGN_OR_RETURN(source.git_arg, net::WithHost(source.git_arg, addrs.front()));
  } else {
    // ParseUrlHost allows only letters, digits, '.', '-' and ':' in a host, and the
    // address is numeric: neither can break out of the command line git runs in a shell.
    settings.ssh_command =
        "ssh -o BatchMode=yes -o HostName=" + addrs.front() + " -o HostKeyAlias=" + where.host;
  }
  return {};
}

Result<void> PinRequest(const std::vector<std::string>& private_hosts, net::HttpRequest& req,
                        std::string_view setting) {
  HANGAR_ASSIGN_OR_RETURN(net::UrlHost where, net::ParseUrlHost(req.url));
  HANGAR_ASSIGN_OR_RETURN(auto addrs, ResolveChecked(private_hosts, where.host, setting));
  req.follow_redirects = false;
  if (where.host.find(':') != std::string::npos) return {};  // a literal: never looked up
  req.resolve.push_back(CurlResolveEntry(where.host, where.port, addrs));
  return {};
}

}  // namespace hangar::services
