// Repo credentials (services/auth/repo_credential.h): what git-lfs-authenticate hands out.

#include "services/auth/repo_credential.h"

#include <gtest/gtest.h>

namespace hangar::services {
namespace {

constexpr std::string_view kKey = "0123456789abcdef0123456789abcdef";

RepoCredentialClaims Claims() {
  RepoCredentialClaims c;
  c.repo_id = 42;
  c.user_id = 7;
  c.key_id = 3;
  c.write = true;
  c.expires_at = 2000;
  return c;
}

TEST(RepoCredential, RoundTripsUntilItExpires) {
  std::string text = IssueRepoCredential(kKey, Claims());
  EXPECT_TRUE(text.starts_with(kRepoCredentialPrefix));
  auto back = VerifyRepoCredential(kKey, text, 1999);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, Claims());
  auto late = VerifyRepoCredential(kKey, text, 2000);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ErrorCode::Unauthorized);
}

TEST(RepoCredential, DeployKeyClaimsRoundTrip) {
  RepoCredentialClaims c = Claims();
  c.user_id = 0;
  c.deploy_key_id = 9;
  c.write = false;
  EXPECT_EQ(VerifyRepoCredential(kKey, IssueRepoCredential(kKey, c), 1).value(), c);
}

TEST(RepoCredential, TamperedOrForeignCredentialsAreRefused) {
  std::string text = IssueRepoCredential(kKey, Claims());
  EXPECT_FALSE(VerifyRepoCredential("another key", text, 1));
  EXPECT_FALSE(VerifyRepoCredential("", text, 1));
  // Every character carries signed bits: changing any one is refused.
  for (size_t i = kRepoCredentialPrefix.size(); i < text.size(); ++i) {
    std::string t = text;
    t[i] = t[i] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(VerifyRepoCredential(kKey, t, 1)) << i;
  }
  EXPECT_FALSE(VerifyRepoCredential(kKey, text.substr(1), 1));
  EXPECT_FALSE(VerifyRepoCredential(kKey, text + "A", 1));
  EXPECT_FALSE(VerifyRepoCredential(kKey, "hf_abc", 1));
}

}  // namespace
}  // namespace hangar::services
