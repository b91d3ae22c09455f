#pragma once
// TestHub: the real App (cli::App) on a temporary data dir — SQLite, local blobs — with
// its routers driven in process through Router::Dispatch, no socket. The fixture of the
// handler tests under tests/api and tests/web (issue 14, "in-process handler tests"):
// what a handler answers is checked here; what a real client does, in tests/integration.

#include <boost/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/app.h"
#include "git/test_repo.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::testing {

// A response with its body read out: `body` holds the string body or the whole stream.
struct Answer {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::optional<uint64_t> content_length;  // what a streamed body or a HEAD announces

  // Value of header `name` (case-insensitive), "" when absent.
  std::string Header(std::string_view name) const;
  // The X-Error-Code header (hf-api.md §1.4), "" when absent.
  std::string ErrorCode() const { return Header("X-Error-Code"); }
  // The body as a JSON object; an empty one (and a test failure) when it is not one.
  boost::json::object Json() const;
};

// One request to build and send: TestHub::Send fills what is left empty.
struct Call {
  http::Method method = http::Method::Get;
  std::string target;  // path and query as sent, e.g. "/api/models/alice/m?blobs=1"
  std::string as;      // a credential: "" anonymous, a user's name (their write token),
                       // "user:read" (their read token), "user:session" (a signed-in browser)
  std::vector<std::pair<std::string, std::string>> headers;  // extra, names any case
  std::string body;
};

// Not thread-safe. Each test builds its own (a hub opens in about 30 ms).
class TestHub {
 public:
  // Opens the App with `config_lines` (TOML, may be empty) over a fresh data dir, and
  // creates users alice (admin) and bob, each with a write and a read token.
  explicit TestHub(const std::string& config_lines = "");
  ~TestHub();

  cli::App& app() { return *app_; }
  const std::string& data_dir() const { return dir_.path(); }

  // Creates user `name` (password kPassword) with a write and a read token.
  void AddUser(const std::string& name, bool admin = false);
  // The write ("name") or read ("name:read") token of a user made by AddUser.
  const std::string& Token(const std::string& who) const;
  // The session cookie value of `user`, signed in through the real /login form (cached).
  const std::string& Session(const std::string& user);
  // The CSRF token a signed-in `user`'s forms carry (from their tokens page).
  std::string Csrf(const std::string& user);

  // Dispatches `call` through the App's router and reads the whole answer.
  Answer Send(Call call);
  Answer Get(const std::string& target, const std::string& as = "") {
    return Send({http::Method::Get, target, as, {}, {}});
  }
  Answer Head(const std::string& target, const std::string& as = "") {
    return Send({http::Method::Head, target, as, {}, {}});
  }
  // A request with a JSON body (Content-Type application/json).
  Answer PostJson(const std::string& target, const std::string& json, const std::string& as,
                  http::Method method = http::Method::Post);
  // A browser form POST as `user`'s session, with its CSRF token added to `fields`.
  Answer PostForm(const std::string& target, const std::string& user, const std::string& fields);

  // Creates repo `type`s `ns/name` owned by `as` through the API; fails the test if refused.
  void CreateRepo(const std::string& as, const std::string& ns, const std::string& name,
                  const std::string& type = "model", bool is_private = false);
  // Commits files (path → content) to `rev` of `repo_path` ("models/alice/m", say) through
  // the HF commit API as `as`; returns the new commit's oid (fails the test if refused).
  std::string Commit(const std::string& as, const std::string& repo_path,
                     const std::map<std::string, std::string>& files,
                     const std::string& rev = "main", const std::string& summary = "files");

  static constexpr const char* kPassword = "Passw0rd-long-enough";

 private:
  git::testing::TempDir dir_;
  std::unique_ptr<cli::App> app_;
  http::Router* router_ = nullptr;
  std::map<std::string, std::string> tokens_;
  std::map<std::string, std::string> sessions_;
};

}  // namespace hangar::testing
