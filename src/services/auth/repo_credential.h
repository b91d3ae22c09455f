#pragma once
// Repo credentials: what `git-lfs-authenticate` hands git-lfs over SSH (git-lfs.md §11.1,
// issue 18 §1) — a short-lived bearer credential, signed with the server secret, that
// signs its bearer in as the SSH key's principal on one repo only (Principal::repo_scope;
// the router admits it on git and LFS routes alone).

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace hangar::services {

// Every repo credential starts with this, so Authenticator tells it from a token.
inline constexpr std::string_view kRepoCredentialPrefix = "hgr_";

struct RepoCredentialClaims {
  int64_t repo_id = 0;        // db::RepoRecord::id: the one repo it opens
  int64_t user_id = 0;        // the user it signs in as; 0 for a deploy key
  int64_t deploy_key_id = 0;  // the deploy key it signs in as; 0 for a user
  int64_t key_id = 0;         // the SSH key it was obtained with; it dies with the key
  bool write = false;         // whether it may push (the key's and the request's rights)
  int64_t expires_at = 0;     // unix seconds; refused from this second on

  friend bool operator==(const RepoCredentialClaims&, const RepoCredentialClaims&) = default;
};

// kRepoCredentialPrefix + base64url of the claims and their HMAC-SHA256 under `key` (the
// server secret; must not be empty). Never fails.
std::string IssueRepoCredential(std::string_view key, const RepoCredentialClaims& claims);

// The claims of `credential` when its MAC verifies under `key` and it has not expired at
// `now` (unix seconds). Errors: Unauthorized "invalid or expired credential" (constant-time
// MAC check; the message tells nothing more).
Result<RepoCredentialClaims> VerifyRepoCredential(std::string_view key, std::string_view credential,
                                                  int64_t now);

}  // namespace hangar::services
