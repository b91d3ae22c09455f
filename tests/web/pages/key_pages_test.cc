// web/pages/key_pages.cc in process (TestHub): the account's SSH keys page and the deploy
// keys of a repo's settings page — forms with the CSRF token, errors shown on the form.

#include <gtest/gtest.h>

#include "core/util.h"
#include "testing/test_hub.h"

namespace hangar::web {
namespace {

using hangar::testing::Answer;
using hangar::testing::TestHub;

// Made with `ssh-keygen -t ed25519 -N ''`.
constexpr const char kKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILYvn+PYd/NTI0WVXdqkNUFCwt9wRCHJyVXA63ghK5Pe ann@laptop";
constexpr const char kFingerprint[] = "SHA256:UjKIvHhdckOpM9k6opAkjXbonwEew6MmFxPcsSKFMoo";
constexpr const char kCiKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImvoSaAW6h2k3beqM8fGJPF8k+CnbhsCcPhGxBjs5m2 second";

class KeyPagesTest : public ::testing::Test {
 protected:
  static bool Has(const Answer& a, const std::string& s) {
    return a.body.find(s) != std::string::npos;
  }
  static std::string Field(const std::string& name, const std::string& value) {
    return name + "=" + PercentEncode(value);
  }
  // The id in the first ".../{id}/delete" form action of `page` under `prefix`.
  static std::string FirstDeleteId(const Answer& page, const std::string& prefix) {
    size_t at = page.body.find(prefix);
    if (at == std::string::npos) return "";
    at += prefix.size();
    return page.body.substr(at, page.body.find('/', at) - at);
  }
  TestHub hub_;
};

TEST_F(KeyPagesTest, AddListAndDeleteOwnKeys) {
  EXPECT_EQ(hub_.Get("/settings/ssh-keys").status, 303);  // to the sign-in page
  Answer empty = hub_.Get("/settings/ssh-keys", "bob:session");
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_TRUE(Has(empty, "No SSH keys yet."));

  Answer added = hub_.PostForm("/settings/ssh-keys", "bob",
                               Field("key", kKey) + "&" + Field("title", "<b>laptop</b>"));
  ASSERT_EQ(added.status, 303) << added.body;
  EXPECT_EQ(added.Header("Location"), "/settings/ssh-keys");
  Answer page = hub_.Get("/settings/ssh-keys", "bob:session");
  EXPECT_TRUE(Has(page, kFingerprint));
  EXPECT_TRUE(Has(page, "&lt;b&gt;laptop&lt;/b&gt;"));  // what users wrote is escaped
  EXPECT_FALSE(Has(page, "<b>laptop"));
  EXPECT_FALSE(Has(hub_.Get("/settings/ssh-keys", "alice:session"), kFingerprint));

  const std::string id = FirstDeleteId(page, "/settings/ssh-keys/");
  ASSERT_FALSE(id.empty());
  // Alice cannot delete bob's key; bob can.
  EXPECT_EQ(hub_.PostForm("/settings/ssh-keys/" + id + "/delete", "alice", "").status, 404);
  Answer deleted = hub_.PostForm("/settings/ssh-keys/" + id + "/delete", "bob", "");
  EXPECT_EQ(deleted.status, 303) << deleted.body;
  EXPECT_FALSE(Has(hub_.Get("/settings/ssh-keys", "bob:session"), kFingerprint));
}

TEST_F(KeyPagesTest, ErrorsAreShownOnTheForm) {
  Answer bad = hub_.PostForm("/settings/ssh-keys", "bob", Field("key", "ssh-ed25519 AAAA"));
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_TRUE(Has(bad, "key blob does not match its type"));
  EXPECT_TRUE(Has(bad, "ssh-ed25519 AAAA</textarea>"));  // kept to be fixed
  Answer priv = hub_.PostForm("/settings/ssh-keys", "bob",
                              Field("key", "-----BEGIN OPENSSH PRIVATE KEY-----"));
  EXPECT_EQ(priv.status, 400);
  EXPECT_TRUE(Has(priv, "this is a private key; paste the .pub file"));
  ASSERT_EQ(hub_.PostForm("/settings/ssh-keys", "bob", Field("key", kKey)).status, 303);
  Answer twice = hub_.PostForm("/settings/ssh-keys", "alice", Field("key", kKey));
  EXPECT_EQ(twice.status, 400);
  EXPECT_TRUE(Has(twice, "key is already in use"));
  // A field the page does not offer is refused.
  EXPECT_EQ(
      hub_.PostForm("/settings/ssh-keys", "bob", Field("key", kCiKey) + "&read_write=1").status,
      400);
}

TEST_F(KeyPagesTest, FormsNeedTheSessionAndItsCsrfToken) {
  Answer no_csrf = hub_.Send({http::Method::Post,
                              "/settings/ssh-keys",
                              "bob:session",
                              {{"Content-Type", "application/x-www-form-urlencoded"}},
                              Field("key", kKey)});
  EXPECT_EQ(no_csrf.status, 403);
  // A token is no browser session: account settings refuse it.
  EXPECT_EQ(hub_.Get("/settings/ssh-keys", "bob").status, 403);
  EXPECT_EQ(hub_.Get("/settings/ssh-keys", "bob:session").body.find(kFingerprint),
            std::string::npos);
}

TEST_F(KeyPagesTest, DeployKeysOnTheRepoSettingsPage) {
  hub_.CreateRepo("alice", "alice", "data", "dataset");
  Answer settings = hub_.Get("/datasets/alice/data/settings", "alice:session");
  ASSERT_EQ(settings.status, 200) << settings.body;
  EXPECT_TRUE(Has(settings, "Deploy keys"));
  EXPECT_TRUE(Has(settings, "No deploy keys."));

  Answer added = hub_.PostForm("/datasets/alice/data/settings/deploy-keys", "alice",
                               Field("key", kCiKey) + "&title=ci&read_write=1");
  ASSERT_EQ(added.status, 303) << added.body;
  EXPECT_EQ(added.Header("Location"), "/datasets/alice/data/settings");
  Answer page = hub_.Get("/datasets/alice/data/settings", "alice:session");
  EXPECT_TRUE(Has(page, "SHA256:C0yR3WGZalfU5kX+kWLDafU/V4zSvZwnwtyA5jEaOYE"));
  EXPECT_TRUE(Has(page, "read-write"));

  Answer bad = hub_.PostForm("/datasets/alice/data/settings/deploy-keys", "alice",
                             Field("key", "not a key"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(Has(bad, "not an OpenSSH public key"));

  // Bob reads the public repo but administers nothing of it.
  EXPECT_EQ(
      hub_.PostForm("/datasets/alice/data/settings/deploy-keys", "bob", Field("key", kKey)).status,
      403);
  const std::string id = FirstDeleteId(page, "/datasets/alice/data/settings/deploy-keys/");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(hub_.PostForm("/datasets/alice/data/settings/deploy-keys/" + id + "/delete", "bob", "")
                .status,
            403);
  Answer deleted =
      hub_.PostForm("/datasets/alice/data/settings/deploy-keys/" + id + "/delete", "alice", "");
  EXPECT_EQ(deleted.status, 303) << deleted.body;
  EXPECT_TRUE(Has(hub_.Get("/datasets/alice/data/settings", "alice:session"), "No deploy keys."));
}

// The repo page shows an SSH clone URL only with [ssh] on: scp-like on port 22, ssh:// on
// another port, the host from [ssh] host or else the request's.
TEST(RepoPageSshCloneUrl, OnlyWhenSshIsOn) {
  TestHub off;
  off.CreateRepo("alice", "alice", "m", "model");
  Answer page = off.Get("/alice/m");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.body.find("SSH:"), std::string::npos);

  TestHub on("[ssh]\nenabled = true\nhost = \"hub.example.com\"\n");
  on.CreateRepo("alice", "alice", "d", "dataset");
  page = on.Get("/datasets/alice/d");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("git clone git@hub.example.com:datasets/alice/d.git"), std::string::npos)
      << page.body;

  TestHub port("[ssh]\nenabled = true\nuser = \"hg\"\nport = 2222\n");
  port.CreateRepo("alice", "alice", "m", "model");
  page = port.Get("/alice/m");
  EXPECT_NE(page.body.find("ssh://hg@"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find(":2222/alice/m.git"), std::string::npos) << page.body;
}

}  // namespace
}  // namespace hangar::web
