// api/registry (mlflow_routes.cc) in process (TestHub), against the request/response
// fixtures of mlflow_fixtures.json: every MLflow registry call of issue 16 with its success
// and error cases, run in order on one hub, each answer matched field by field (see the
// file's "about"). No MLflow client can be installed here; the fixtures are written from
// MLflow's protocol definitions (model_registry.proto, exceptions.py).

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/util.h"
#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;

// Replaces {{name}} by its value in every string of `v`.
void Substitute(json::value& v, const std::map<std::string, std::string>& vars) {
  if (v.is_string()) {
    std::string s(v.as_string());
    for (const auto& [name, value] : vars) {
      std::string mark = "{{" + name + "}}";
      for (size_t at = s.find(mark); at != std::string::npos; at = s.find(mark, at + value.size()))
        s.replace(at, mark.size(), value);
    }
    v = json::string(s);
  } else if (v.is_object()) {
    for (auto& kv : v.as_object()) Substitute(kv.value(), vars);
  } else if (v.is_array()) {
    for (auto& item : v.as_array()) Substitute(item, vars);
  }
}

// Whether `got` holds `want` as the fixtures' "about" says; the first difference in `why`.
bool Matches(const json::value& want, const json::value* got, const std::string& at,
             std::string& why) {
  if (want.is_string() && want.as_string() == "<absent>") {
    if (got) why = at + " should be absent, is " + json::serialize(*got);
    return !got;
  }
  if (!got) {
    why = at + " is missing";
    return false;
  }
  if (want.is_string() && want.as_string() == "<any>") return true;
  if (want.is_object()) {
    if (!got->is_object()) {
      why = at + " is not an object: " + json::serialize(*got);
      return false;
    }
    for (const auto& kv : want.as_object())
      if (!Matches(kv.value(), got->as_object().if_contains(kv.key()),
                   at + "." + std::string(kv.key()), why))
        return false;
    return true;
  }
  if (want.is_array()) {
    if (!got->is_array() || got->as_array().size() != want.as_array().size()) {
      why = at + ": " + json::serialize(*got) + " is not " + json::serialize(want);
      return false;
    }
    for (size_t i = 0; i < want.as_array().size(); ++i)
      if (!Matches(want.as_array()[i], &got->as_array()[i], at + "[" + std::to_string(i) + "]",
                   why))
        return false;
    return true;
  }
  if (want != *got) {
    why = at + " is " + json::serialize(*got) + ", not " + json::serialize(want);
    return false;
  }
  return true;
}

TEST(MlflowFixtures, EveryCallAnswersAsMlflowDefinesIt) {
  std::ifstream in(HANGAR_MLFLOW_FIXTURES);
  ASSERT_TRUE(in) << "mlflow_fixtures.json not found";
  std::stringstream text;
  text << in.rdbuf();
  json::value fixtures = json::parse(text.str());

  TestHub hub;
  hub.CreateRepo("alice", "alice", "bert");
  std::map<std::string, std::string> vars;
  vars["c1"] = hub.Commit("alice", "models/alice/bert", {{"MLmodel", "flavors: {}"}});
  vars["c2"] = hub.Commit("alice", "models/alice/bert", {{"model.onnx", "weights"}});

  int n = 0;
  for (json::value call : fixtures.as_object()["calls"].as_array()) {
    Substitute(call, vars);
    json::object& c = call.as_object();
    std::string what(c["what"].as_string());
    SCOPED_TRACE("call " + std::to_string(++n) + ": " + what);
    std::string target = "/api/2.0/mlflow/" + std::string(c["path"].as_string());
    std::string body;
    if (const auto* q = c.if_contains("query")) {
      std::string sep = "?";
      for (const auto& kv : q->as_object()) {
        target += sep + std::string(kv.key()) + "=" + PercentEncode(kv.value().as_string());
        sep = "&";
      }
    }
    if (const auto* b = c.if_contains("body")) body = json::serialize(*b);
    if (const auto* raw = c.if_contains("raw_body")) body = std::string(raw->as_string());
    http::Method method = http::ParseMethod(c["method"].as_string());
    // Writes a millisecond apart: orders by last_updated_timestamp are then exact.
    if (method != http::Method::Get) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::vector<std::pair<std::string, std::string>> headers;
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    Answer a = hub.Send({method, target, std::string(c["as"].as_string()), headers, body});
    EXPECT_EQ(a.status, c["status"].as_int64()) << a.body;
    boost::system::error_code ec;
    json::value got = json::parse(a.body, ec);
    ASSERT_FALSE(ec) << "not JSON: " << a.body;
    std::string why;
    EXPECT_TRUE(Matches(c["response"], &got, "response", why)) << why << "\n" << a.body;
    if (c.contains("keep_token") && got.is_object() && got.as_object().contains("next_page_token"))
      vars["token"] = std::string(got.as_object()["next_page_token"].as_string());
  }
  EXPECT_GT(n, 80);  // the file was read whole
}

}  // namespace
}  // namespace hangar::api
