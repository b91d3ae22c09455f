#pragma once
// Where git may be sent to read or write a repository elsewhere (imports, mirrors;
// docs/import.md §network, docs/mirrors.md): the transports a caller may name, and how a
// git run (or an HTTP request of the LFS API) is pinned to addresses checked here, so that
// a web user cannot make the server reach its own disk, loopback or private networks.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "git/command.h"
#include "net/http_client.h"

namespace hangar::services {

// The transport of an accepted source, and the string handed to git.
struct ImportSource {
  enum class Kind { Url, Local };
  Kind kind = Kind::Url;
  std::string git_arg;  // passed to git after --end-of-options
};

// Checks `source` against the allowed transports: http, https, git and ssh URLs; with
// `allow_local` also absolute paths and file:// URLs. Refuses scp-style `host:path`,
// `transport::address` forms (ext::, fd::), other schemes, relative paths, a leading '-'
// and control characters. Errors: BadRequest saying what was wrong.
Result<ImportSource> CheckImportSource(std::string_view source, bool allow_local);

// `source` fit for messages and logs: the password of a URL's userinfo replaced by "***",
// and over http(s) a user name without a password too (a token given as the user).
std::string RedactImportSource(std::string_view source);

// The userinfo of URL `url` ("user:password", "token"), or "" when it has none.
std::string_view UserInfoOf(std::string_view url);

// `text` (a remote's or git's message) fit to be shown and logged: each of `secrets`
// (shorter than 3 bytes: ignored) replaced by "***", control characters by spaces (no
// forged log lines).
std::string Scrub(std::string text, std::initializer_list<std::string_view> secrets);

// Settings of one git run that reaches a remote: git config passed through the
// environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n, so that a credential in an extra header is
// never on a command line `ps` shows) and the ssh command.
struct GitRemoteSettings {
  // A transfer under 1 KiB/s for a minute is aborted (a remote that trickles bytes).
  std::vector<std::pair<std::string, std::string>> config = {{"http.lowSpeedLimit", "1024"},
                                                             {"http.lowSpeedTime", "60"}};
  std::string ssh_command = "ssh -o BatchMode=yes";
  // Sets them on `cmd`.
  void ApplyTo(git::Command& cmd) const;
};

// Adds "Authorization: Bearer <token>" to every http(s) request of the run
// (http.extraHeader), for a private upstream. Errors: BadRequest when `token` holds
// characters a header cannot (control characters, non-ASCII) or is over 4 KiB.
Result<void> AddBearer(std::string_view token, GitRemoteSettings& settings);

// git's complaint of a failed run, short: its fatal:/error: lines and what the remote said
// ("remote: …", " ! [rejected] …"; else every line),
// joined with "; ", without lines naming `hide` (a temporary directory), at most 400 bytes.
std::string GitComplaint(const std::string& stderr_data, const std::string& hide);

// The addresses `host` resolves to, each of them public unless `host` is one of
// `private_hosts` ("*" = every host). Errors: BadRequest naming the host and the address
// that is not public (and `setting`, where an operator lists hosts), or that it does not
// resolve.
Result<std::vector<std::string>> ResolveChecked(
    const std::vector<std::string>& private_hosts, const std::string& host,
    std::string_view setting = "import.allow_private_hosts");

// curl's resolve-list entry "host:port:addr[,addr…]" (IPv6 addresses bracketed) that
// makes a connection to `host`:`port` use `addrs` without a lookup.
std::string CurlResolveEntry(const std::string& host, uint16_t port,
                             const std::vector<std::string>& addrs);

// Pins HTTP request `req` to the checked addresses of its URL's host (ResolveChecked) and
// turns redirects off, so no answer of the peer sends it anywhere else. Errors: as
// ResolveChecked, BadRequest for a malformed URL.
Result<void> PinRequest(const std::vector<std::string>& private_hosts, net::HttpRequest& req,
                        std::string_view setting = "import.allow_private_hosts");

// Pins a git run to the checked addresses of `source`'s host (ResolveChecked): http(s)
// through curl's resolve list with redirects off, git:// by putting the address in the URL
// (source.git_arg changes), ssh through HostName; a second lookup cannot answer
// differently (DNS rebinding). Errors: as ResolveChecked, BadRequest for a malformed URL.
Result<void> PinToCheckedHost(const std::vector<std::string>& private_hosts, ImportSource& source,
                              GitRemoteSettings& settings);

}  // namespace hangar::services
