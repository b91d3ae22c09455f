#include "testing/test_hub.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/base64.h"
#include "core/byte_source.h"
#include "core/log.h"
#include "core/util.h"

namespace hangar::testing {

namespace json = boost::json;

std::string Answer::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (AsciiLower(k) == AsciiLower(name)) return v;
  }
  return {};
}

boost::json::object Answer::Json() const {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  EXPECT_TRUE(!ec && v.is_object()) << "not a JSON object: " << body.substr(0, 300);
  return !ec && v.is_object() ? v.as_object() : boost::json::object();
}

TestHub::TestHub(const std::string& config_lines) {
  // The hub's own lines (migrations, access log) only when a test fails to explain itself.
  SetLogLevel("warn");
  config::LoadOptions opts;
  opts.config_toml = config_lines;
  // Hermetic: the developer's HANGAR_* variables do not reach the hub under test.
  opts.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  opts.overrides.emplace_back("storage.data_dir", dir_.path() + "/data");
  auto cfg = config::LoadConfig(opts);
  if (!cfg) {
    ADD_FAILURE() << "config: " << cfg.error().message;
    return;
  }
  auto app = cli::App::Open(*cfg);
  if (!app) {
    ADD_FAILURE() << "App::Open: " << app.error().message;
    return;
  }
  app_ = std::move(*app);
  router_ = &app_->Router();
  AddUser("alice", /*admin=*/true);
  AddUser("bob");
}

TestHub::~TestHub() = default;

void TestHub::AddUser(const std::string& name, bool admin) {
  auto made = app_->accounts().CreateUser(name, name + "@example.com", admin, kPassword);
  ASSERT_TRUE(made.has_value()) << made.error().message;
  for (auto role : {TokenRole::Write, TokenRole::Read}) {
    bool write = role == TokenRole::Write;
    auto t = app_->authenticator().CreateToken(name, name + (write ? "-write" : "-read"), role);
    ASSERT_TRUE(t.has_value()) << t.error().message;
    tokens_[write ? name : name + ":read"] = t->token;
  }
}

const std::string& TestHub::Token(const std::string& who) const {
  auto it = tokens_.find(who);
  if (it == tokens_.end()) {
    ADD_FAILURE() << "no token for " << who;
    static const std::string kNone;
    return kNone;
  }
  return it->second;
}

const std::string& TestHub::Session(const std::string& user) {
  if (auto it = sessions_.find(user); it != sessions_.end()) return it->second;
  // The double-submit CSRF cookie a browser holds before it has a session.
  const std::string csrf = "abcdefghijklmnopqrstuvwxyz012345";
  Answer a = Send(
      {http::Method::Post,
       "/login",
       "",
       {{"content-type", "application/x-www-form-urlencoded"}, {"cookie", "hangar_csrf=" + csrf}},
       "_csrf=" + csrf + "&username=" + user + "&password=" + kPassword + "&next=/"});
  EXPECT_EQ(a.status, 303) << a.body;
  std::string session;
  for (const auto& [k, v] : a.headers) {
    if (AsciiLower(k) == "set-cookie" && v.starts_with("hangar_session="))
      session = v.substr(15, v.find(';') - 15);
  }
  EXPECT_FALSE(session.empty()) << "no session cookie for " << user;
  return sessions_[user] = session;
}

std::string TestHub::Csrf(const std::string& user) {
  Answer a = Get("/settings/tokens", user + ":session");
  EXPECT_EQ(a.status, 200);
  const std::string marker = "name=\"_csrf\" value=\"";
  size_t at = a.body.find(marker);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no CSRF field on /settings/tokens";
    return {};
  }
  at += marker.size();
  return a.body.substr(at, a.body.find('"', at) - at);
}

Answer TestHub::Send(Call call) {
  Answer out;
  if (!router_) return out;
  http::Request req;
  req.method = call.method;
  req.method_name = std::string(http::MethodName(call.method));
  size_t q = call.target.find('?');
  req.target = call.target;
  req.path = call.target.substr(0, q);
  if (q != std::string::npos) req.query = call.target.substr(q + 1);
  req.request_id = "testhub";
  req.remote = "127.0.0.1:40000";
  req.base_url = "http://127.0.0.1:8080";
  req.headers.emplace_back("host", "127.0.0.1:8080");
  if (size_t colon = call.as.find(':');
      colon != std::string::npos && call.as.substr(colon + 1) == "session") {
    req.headers.emplace_back("cookie", "hangar_session=" + Session(call.as.substr(0, colon)));
  } else if (!call.as.empty()) {
    req.headers.emplace_back("authorization", "Bearer " + Token(call.as));
  }
  for (auto& [k, v] : call.headers) {
    std::string name = AsciiLower(k);
    // One Cookie header, as a browser sends it.
    auto cookie = std::find_if(req.headers.begin(), req.headers.end(),
                               [](const auto& h) { return h.first == "cookie"; });
    if (name == "cookie" && cookie != req.headers.end()) {
      cookie->second += "; " + v;
    } else {
      req.headers.emplace_back(std::move(name), std::move(v));
    }
  }
  if (!call.body.empty() && !req.HasHeader("content-length"))
    req.headers.emplace_back("content-length", std::to_string(call.body.size()));
  req.body = std::make_shared<StringSource>(std::move(call.body));

  http::Response res = router_->Dispatch(req);
  out.status = res.status;
  out.headers = std::move(res.headers);
  out.content_length = res.content_length;
  if (res.stream) {
    auto all = ReadAll(*res.stream, size_t{1} << 30);
    EXPECT_TRUE(all.has_value()) << "reading the streamed body: " << all.error().message;
    if (all) out.body = std::move(*all);
  } else {
    out.body = std::move(res.body);
  }
  return out;
}

Answer TestHub::PostJson(const std::string& target, const std::string& json_text,
                         const std::string& as, http::Method method) {
  return Send({method, target, as, {{"content-type", "application/json"}}, json_text});
}

Answer TestHub::PostForm(const std::string& target, const std::string& user,
                         const std::string& fields) {
  std::string body = "_csrf=" + Csrf(user);
  if (!fields.empty()) body += "&" + fields;
  return Send({http::Method::Post,
               target,
               user + ":session",
               {{"content-type", "application/x-www-form-urlencoded"}},
               std::move(body)});
}

void TestHub::CreateRepo(const std::string& as, const std::string& ns, const std::string& name,
                         const std::string& type, bool is_private) {
  json::object o{{"name", name}, {"type", type}, {"private", is_private}};
  if (ns != as) o["organization"] = ns;
  Answer a = PostJson("/api/repos/create", json::serialize(o), as);
  ASSERT_EQ(a.status, 200) << "creating " << ns << "/" << name << ": " << a.body;
}

std::string TestHub::Commit(const std::string& as, const std::string& repo_path,
                            const std::map<std::string, std::string>& files, const std::string& rev,
                            const std::string& summary) {
  std::string body = json::serialize(json::object{{"key", "header"},
                                                  {"value", json::object{{"summary", summary}}}}) +
                     "\n";
  for (const auto& [path, content] : files) {
    body +=
        json::serialize(json::object{{"key", "file"},
                                     {"value", json::object{{"path", path},
                                                            {"encoding", "base64"},
                                                            {"content", Base64Encode(content)}}}}) +
        "\n";
  }
  Answer a = Send({http::Method::Post,
                   "/api/" + repo_path + "/commit/" + rev,
                   as,
                   {{"content-type", "application/x-ndjson"}},
                   std::move(body)});
  EXPECT_EQ(a.status, 200) << "commit to " << repo_path << ": " << a.body;
  if (a.status != 200) return {};
  auto v = json::parse(a.body);
  return std::string(v.at("commitOid").as_string());
}

}  // namespace hangar::testing
