// api/ssh/ssh_key_routes.cc in process (TestHub): a user's SSH keys and a repo's deploy keys
// (docs/ssh.md) — add, list, delete — and their refusals, each with its HF error body.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "testing/test_hub.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using hangar::testing::Answer;
using hangar::testing::TestHub;
using http::Method;
using ::testing::HasSubstr;

// Public keys made with `ssh-keygen -t ed25519 -N ''`, and their `ssh-keygen -lf`.
constexpr const char kKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILYvn+PYd/NTI0WVXdqkNUFCwt9wRCHJyVXA63ghK5Pe ann@laptop";
constexpr const char kKeyFingerprint[] = "SHA256:UjKIvHhdckOpM9k6opAkjXbonwEew6MmFxPcsSKFMoo";
constexpr const char kCiKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImvoSaAW6h2k3beqM8fGJPF8k+CnbhsCcPhGxBjs5m2 second";

std::string AddBody(const std::string& key, const std::string& title = "") {
  return json::serialize(json::object{{"key", key}, {"title", title}});
}

class SshKeyRoutesTest : public ::testing::Test {
 protected:
  Answer AddOwn(const std::string& as, const std::string& key, const std::string& title = "") {
    return hub_.PostJson("/api/settings/ssh-keys", AddBody(key, title), as);
  }
  Answer Delete(const std::string& target, const std::string& as) {
    return hub_.Send({Method::Delete, target, as, {}, {}});
  }
  // The HF error shape: a JSON {"error": ...} saying what was wrong, the same in
  // X-Error-Message, and X-Error-Code for the codes HF clients classify ("" for the others:
  // NotFound, Unauthorized; docs/api.md).
  static void ExpectError(const Answer& a, int status, const std::string& code,
                          const std::string& message_part) {
    EXPECT_EQ(a.status, status) << a.body;
    EXPECT_EQ(a.ErrorCode(), code) << a.body;
    const std::string message(a.Json()["error"].as_string());
    EXPECT_THAT(message, HasSubstr(message_part));
    EXPECT_EQ(a.Header("X-Error-Message"), message);
  }
  TestHub hub_;
};

TEST_F(SshKeyRoutesTest, AddListDelete) {
  Answer added = AddOwn("bob", kKey, "laptop");
  ASSERT_EQ(added.status, 201) << added.body;
  json::object key = added.Json();
  EXPECT_EQ(key["title"].as_string(), "laptop");
  EXPECT_EQ(key["fingerprint"].as_string(), kKeyFingerprint);
  // The key without its comment: type and blob.
  EXPECT_EQ(key["key"].as_string(), std::string(kKey).substr(0, std::string(kKey).rfind(' ')));
  EXPECT_TRUE(key["lastUsedAt"].is_null());
  EXPECT_TRUE(key["createdAt"].as_string().ends_with("Z"));
  EXPECT_FALSE(key.contains("readWrite"));
  const int64_t id = key["id"].as_int64();

  // Any of bob's credentials lists, the browser session included.
  for (const std::string as : {"bob", "bob:read", "bob:session"}) {
    Answer list = hub_.Get("/api/settings/ssh-keys", as);
    ASSERT_EQ(list.status, 200) << as << ": " << list.body;
    json::array keys = json::parse(list.body).as_array();
    ASSERT_EQ(keys.size(), 1u) << as;
    EXPECT_EQ(keys[0].as_object().at("id").as_int64(), id);
  }
  EXPECT_EQ(hub_.Get("/api/settings/ssh-keys", "alice").body, "[]");

  EXPECT_EQ(Delete("/api/settings/ssh-keys/" + std::to_string(id), "bob").status, 204);
  EXPECT_EQ(hub_.Get("/api/settings/ssh-keys", "bob").body, "[]");
  ExpectError(Delete("/api/settings/ssh-keys/" + std::to_string(id), "bob"), 404, "", "not found");
}

TEST_F(SshKeyRoutesTest, TitleDefaultsToTheComment) {
  Answer added = AddOwn("bob", kKey);
  ASSERT_EQ(added.status, 201) << added.body;
  EXPECT_EQ(added.Json()["title"].as_string(), "ann@laptop");
}

TEST_F(SshKeyRoutesTest, DuplicateKeyIsConflict) {
  ASSERT_EQ(AddOwn("bob", kKey).status, 201);
  ExpectError(AddOwn("alice", kKey), 409, "Conflict", "key is already in use");
  ExpectError(AddOwn("bob", kKey), 409, "Conflict", "key is already in use");
}

TEST_F(SshKeyRoutesTest, MalformedKeyIsBadRequestWithMessage) {
  ExpectError(AddOwn("bob", "ssh-ed25519 AAAA"), 400, "BadRequest",
              "key blob does not match its type");
  ExpectError(AddOwn("bob", "hello world"), 400, "BadRequest", "not an OpenSSH public key");
  ExpectError(AddOwn("bob", "-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n"), 400, "BadRequest",
              "this is a private key; paste the .pub file");
  ExpectError(AddOwn("bob", ""), 400, "BadRequest", "'key' must be an OpenSSH public key");
  ExpectError(hub_.PostJson("/api/settings/ssh-keys", "{not json", "bob"), 400, "BadRequest", "");
  ExpectError(hub_.PostJson("/api/settings/ssh-keys", R"({"key": 5})", "bob"), 400, "BadRequest",
              "'key' must be a string");
  ExpectError(
      hub_.PostJson("/api/settings/ssh-keys",
                    json::serialize(json::object{{"key", kKey}, {"readWrite", true}}), "bob"),
      400, "BadRequest", "unknown field 'readWrite'");
  ExpectError(AddOwn("bob", kKey, std::string(101, 't')), 400, "BadRequest",
              "at most 100 characters");
  EXPECT_EQ(hub_.Get("/api/settings/ssh-keys", "bob").body, "[]");
}

TEST_F(SshKeyRoutesTest, WhoMayCall) {
  ExpectError(AddOwn("", kKey), 401, "", "");
  ExpectError(hub_.Get("/api/settings/ssh-keys"), 401, "", "");
  ExpectError(Delete("/api/settings/ssh-keys/1", ""), 401, "", "");
  ExpectError(AddOwn("bob:read", kKey), 403, "Forbidden", "");
  ASSERT_EQ(AddOwn("bob", kKey).status, 201);
  ExpectError(Delete("/api/settings/ssh-keys/1", "bob:read"), 403, "Forbidden", "");
  // API writes take no session cookie (they have no CSRF check).
  EXPECT_EQ(AddOwn("bob:session", kCiKey).status, 401);
}

TEST_F(SshKeyRoutesTest, AnotherUsersKeyIsNotFound) {
  Answer added = AddOwn("bob", kKey);
  ASSERT_EQ(added.status, 201);
  const std::string target =
      "/api/settings/ssh-keys/" + std::to_string(added.Json()["id"].as_int64());
  ExpectError(Delete(target, "alice"), 404, "", "not found");
  ExpectError(Delete("/api/settings/ssh-keys/abc", "alice"), 404, "", "not found");
  ExpectError(Delete("/api/settings/ssh-keys/0", "alice"), 404, "", "not found");
  EXPECT_EQ(json::parse(hub_.Get("/api/settings/ssh-keys", "bob").body).as_array().size(), 1u);
}

TEST_F(SshKeyRoutesTest, DeployKeys) {
  hub_.CreateRepo("alice", "alice", "data", "dataset");
  const std::string base = "/api/datasets/alice/data/deploy-keys";
  Answer added = hub_.PostJson(
      base, R"({"key": ")" + std::string(kCiKey) + R"(", "title": "ci", "readWrite": true})",
      "alice");
  ASSERT_EQ(added.status, 201) << added.body;
  json::object key = added.Json();
  EXPECT_EQ(key["title"].as_string(), "ci");
  EXPECT_TRUE(key["readWrite"].as_bool());
  Answer ro = hub_.PostJson(base, AddBody(kKey), "alice");
  ASSERT_EQ(ro.status, 201) << ro.body;
  EXPECT_FALSE(ro.Json()["readWrite"].as_bool());

  Answer list = hub_.Get(base, "alice");
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(json::parse(list.body).as_array().size(), 2u);
  // A deploy key's key is no user's key, and vice versa.
  ExpectError(AddOwn("bob", kCiKey), 409, "Conflict", "key is already in use");
  ExpectError(Delete("/api/settings/ssh-keys/" + std::to_string(key["id"].as_int64()), "alice"),
              404, "", "");

  ExpectError(Delete(base + "/" + std::to_string(key["id"].as_int64() + 100), "alice"), 404, "",
              "deploy key");
  EXPECT_EQ(Delete(base + "/" + std::to_string(key["id"].as_int64()), "alice").status, 204);
  EXPECT_EQ(json::parse(hub_.Get(base, "alice").body).as_array().size(), 1u);
  ExpectError(hub_.PostJson(base, AddBody("ssh-rsa AAAA"), "alice"), 400, "BadRequest",
              "key blob does not match its type");
  ExpectError(hub_.PostJson(base, AddBody(kKey), "alice"), 409, "Conflict", "already in use");
  ExpectError(hub_.PostJson(base, R"({"key": "x", "readWrite": "yes"})", "alice"), 400,
              "BadRequest", "'readWrite' must be a boolean");
}

TEST_F(SshKeyRoutesTest, DeployKeysNeedTheRepoAdmin) {
  hub_.CreateRepo("alice", "alice", "pub");
  hub_.CreateRepo("alice", "alice", "priv", "model", /*is_private=*/true);
  // Bob reads the public repo but does not administer it; the private one he cannot see.
  ExpectError(hub_.Get("/api/models/alice/pub/deploy-keys", "bob"), 403, "Forbidden", "");
  ExpectError(hub_.PostJson("/api/models/alice/pub/deploy-keys", AddBody(kKey), "bob"), 403,
              "Forbidden", "");
  ExpectError(hub_.Get("/api/models/alice/priv/deploy-keys", "bob"), 404, "RepoNotFound", "");
  ExpectError(Delete("/api/models/alice/priv/deploy-keys/1", "bob"), 404, "RepoNotFound", "");
  ExpectError(hub_.Get("/api/models/alice/pub/deploy-keys"), 401, "", "");
  // Alice's read token may not administer either.
  ExpectError(hub_.Get("/api/models/alice/pub/deploy-keys", "alice:read"), 403, "Forbidden", "");
  ExpectError(hub_.Get("/api/models/alice/none/deploy-keys", "alice"), 404, "RepoNotFound", "");
}

}  // namespace
}  // namespace hangar::api
