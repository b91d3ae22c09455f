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
    if (const auto* raw = c.if_contains("query_string"))
      target += "?" + std::string(raw->as_string());
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
  EXPECT_GT(n, 90);  // the file was read whole
}

}  // namespace
}  // namespace hangar::api

namespace hangar::api {
namespace {

// The artifact proxy: models:/name@alias resolves (get-download-uri, then list and
// download under mlflow-artifacts:/) to the bytes of the pinned commit.
TEST(MlflowArtifacts, ServeThePinnedCommitsFiles) {
  TestHub hub;
  hub.CreateRepo("alice", "alice", "bert");
  std::string c1 = hub.Commit("alice", "models/alice/bert",
                              {{"MLmodel", "flavors: {onnx: {}}\n"}, {"data/model.onnx", "v1"}});
  hub.Commit("alice", "models/alice/bert", {{"data/model.onnx", "v2"}});
  ASSERT_EQ(
      hub.PostJson("/api/2.0/mlflow/registered-models/create", R"({"name": "m"})", "alice").status,
      200);
  ASSERT_EQ(hub.PostJson("/api/2.0/mlflow/model-versions/create",
                         R"({"name": "m", "source": "alice/bert@)" + c1 + R"("})", "alice")
                .status,
            200);
  Answer uri = hub.Get("/api/2.0/mlflow/model-versions/get-download-uri?name=m&version=1");
  ASSERT_EQ(uri.status, 200) << uri.body;
  std::string root = "models/alice/bert/" + c1;
  EXPECT_EQ(json::parse(uri.body).as_object()["artifact_uri"],
            json::value("mlflow-artifacts:/" + root));

  const std::string base = "/api/2.0/mlflow-artifacts/artifacts";
  Answer list = hub.Get(base + "?path=" + PercentEncode(root));
  ASSERT_EQ(list.status, 200) << list.body;
  auto files = json::parse(list.body).as_object()["files"].as_array();
  ASSERT_EQ(files.size(), 3u) << list.body;  // .gitattributes, MLmodel, data
  EXPECT_EQ(files[1].as_object()["path"], "MLmodel");
  EXPECT_EQ(files[1].as_object()["file_size"], 20);
  EXPECT_EQ(files[2].as_object()["path"], "data");
  EXPECT_EQ(files[2].as_object()["is_dir"], true);
  Answer sub = hub.Get(base + "?path=" + PercentEncode(root + "/data"));
  EXPECT_EQ(json::parse(sub.body).as_object()["files"].as_array().size(), 1u);
  // A file lists nothing: MLflow's client then downloads it.
  EXPECT_EQ(hub.Get(base + "?path=" + PercentEncode(root + "/MLmodel")).body, "{}");
  Answer bytes = hub.Get(base + "/" + root + "/data/model.onnx");
  EXPECT_EQ(bytes.status, 200);
  EXPECT_EQ(bytes.body, "v1");  // the pinned commit's, not main's

  auto code = [&](const std::string& target, const std::string& as = "") {
    Answer a = hub.Get(target, as);
    boost::system::error_code ec;
    json::value v = json::parse(a.body, ec);
    std::string c = !ec && v.is_object() && v.as_object().contains("error_code")
                        ? std::string(v.as_object()["error_code"].as_string())
                        : "";
    return std::to_string(a.status) + " " + c;
  };
  EXPECT_EQ(code(base + "/" + root + "/nope.bin"), "404 RESOURCE_DOES_NOT_EXIST");
  EXPECT_EQ(code(base + "/" + root + "/data"), "404 RESOURCE_DOES_NOT_EXIST");  // a directory
  EXPECT_EQ(code(base + "/" + root + "/../../etc/passwd"), "400 INVALID_PARAMETER_VALUE");
  EXPECT_EQ(code(base + "/" + root + "/%2e%2e/x"), "400 INVALID_PARAMETER_VALUE");
  EXPECT_EQ(code(base + "/models/alice/bert/main/MLmodel"), "400 INVALID_PARAMETER_VALUE");
  EXPECT_EQ(code(base + "/models/alice/bert/" + std::string(40, 'a') + "/MLmodel"),
            "404 RESOURCE_DOES_NOT_EXIST");
  EXPECT_EQ(code(base + "/models/alice"), "400 INVALID_PARAMETER_VALUE");
  EXPECT_EQ(code(base + "?path=secrets"), "400 INVALID_PARAMETER_VALUE");
  // A private repo's artifacts follow its read rules.
  hub.CreateRepo("alice", "alice", "secret", "model", /*is_private=*/true);
  std::string s = hub.Commit("alice", "models/alice/secret", {{"w.bin", "x"}});
  EXPECT_EQ(code(base + "/models/alice/secret/" + s + "/w.bin", "bob"),
            "404 RESOURCE_DOES_NOT_EXIST");
  EXPECT_EQ(hub.Get(base + "/models/alice/secret/" + s + "/w.bin", "alice").body, "x");
}

}  // namespace
}  // namespace hangar::api
