#include "git/gitmodules.h"

#include <string>

#include "core/util.h"
#include "git/command.h"

namespace hangar::git {

namespace {

Error Refused(std::string_view key, std::string_view why) {
  return MakeError(ErrorCode::BadRequest, "invalid .gitmodules: '" + std::string(key) + "' " +
                                              std::string(why) + " (git's fsck refuses it too)");
}

// Whether `name` has a ".." component, with '/' or '\\' as separators.
bool HasDotDot(std::string_view name) {
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = std::min(name.find_first_of("/\\", start), name.size());
    if (name.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

// git's check_submodule_url (fsck.c gitmodulesUrl): a url a clone would act on wrongly.
bool BadUrl(std::string_view url) {
  if (url.starts_with('-')) return true;
  if (PercentDecode(url).find('\n') != std::string::npos) return true;
  if (url.starts_with("./") || url.starts_with("../")) {
    // Relative: climbing out with "../" must not land on a ':' or '/' (a scheme or an
    // absolute path in disguise).
    std::string_view rest = url;
    bool climbed = false;
    while (rest.starts_with("./") || rest.starts_with("../")) {
      climbed |= rest.starts_with("../");
      rest.remove_prefix(rest.starts_with("./") ? 2 : 3);
    }
    return climbed && (rest.starts_with(':') || rest.starts_with('/'));
  }
  // "<transport>::<address>" (a remote helper): its address must be a URL with a host.
  if (size_t helper = url.find("::"); helper != std::string_view::npos &&
                                      url.substr(0, helper).find('/') == std::string_view::npos) {
    url.remove_prefix(helper + 2);
    if (url.find("://") == std::string_view::npos) return true;
  }
  // "scheme://host/...": the host may not be empty.
  if (size_t scheme = url.find("://"); scheme != std::string_view::npos) {
    std::string_view after = url.substr(scheme + 3);
    std::string_view authority = after.substr(0, after.find_first_of("/?#"));
    if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
      authority.remove_prefix(at + 1);
    }
    if (authority.empty() || authority.starts_with(':')) return true;
  }
  return false;
}

Result<void> CheckEntry(std::string_view key, std::string_view value, bool has_value) {
  // "submodule.<name>.<var>": the name is everything between the first and the last dot.
  if (!key.starts_with("submodule.")) return {};
  std::string_view rest = key.substr(10);
  size_t dot = rest.rfind('.');
  if (dot == std::string_view::npos) return {};  // "submodule.x": no subsection
  std::string_view name = rest.substr(0, dot);
  std::string_view var = rest.substr(dot + 1);
  if (name.empty()) return Refused(key, "names a submodule with an empty name");
  if (HasDotDot(name)) return Refused(key, "names a submodule with a '..' component");
  if (!has_value) return {};
  if (var == "url") {
    if (value.starts_with('-')) return Refused(key, "is a url that looks like an option");
    if (PercentDecode(value).find('\n') != std::string::npos) {
      return Refused(key, "is a url with a newline");
    }
    if (BadUrl(value)) return Refused(key, "is a url git refuses (gitmodulesUrl)");
  } else if (var == "path" && value.starts_with('-')) {
    return Refused(key, "is a path that looks like an option");
  } else if (var == "update" && value.starts_with('!')) {
    return Refused(key, "runs a command");
  }
  return {};
}

}  // namespace

Result<void> CheckGitmodules(std::string_view content) {
  Command cmd("config");
  // Outside any repository: nothing but the text on stdin is read.
  cmd.Arg("--file").Arg("-").Arg("--no-includes").Arg("--null").Arg("--list");
  cmd.Env("GIT_CONFIG_NOSYSTEM", "1");
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run(content));
  // git's fsck notes an unparsable file but still checks every entry before the error;
  // such a file is no use to anyone, so it is refused whole.
  if (!out.ok()) {
    return MakeError(ErrorCode::BadRequest,
                     "invalid .gitmodules: git cannot read it as a config file");
  }
  std::string_view all = out.stdout_data;
  while (!all.empty()) {
    size_t end = all.find('\0');
    std::string_view entry = all.substr(0, end);
    all = end == std::string_view::npos ? std::string_view() : all.substr(end + 1);
    size_t nl = entry.find('\n');  // "key\nvalue"; a bare "key" has no value
    std::string_view key = entry.substr(0, nl);
    std::string_view value = nl == std::string_view::npos ? "" : entry.substr(nl + 1);
    HANGAR_TRY(CheckEntry(key, value, nl != std::string_view::npos));
  }
  return {};
}

}  // namespace hangar::git
