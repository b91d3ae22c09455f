#pragma once
// Tickets: short-lived credentials signed with the server secret, carried inside LFS action
// hrefs so that transfer URLs authorise themselves (git-lfs.md §11.3, hf-api.md §7.3, §12
// item 13). A ticket names one repo, one object (oid and size), one operation and the user it
// was issued to; it grants nothing else.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/sha256.h"

namespace hangar::services {

// What a ticket lets its bearer do.
enum class TicketOp : uint8_t { Upload = 1, Download = 2 };

// "upload" / "download".
std::string_view TicketOpName(TicketOp op);

// The signed content of a ticket.
struct TicketClaims {
  int64_t repo_id = 0;  // db::RepoRecord::id the object belongs to
  int64_t user_id = 0;  // who the batch answered (0: anonymous; a download's deploy key:
                        // its id negated); a multipart upload staged for an upload
                        // ticket must be theirs
  Sha256 oid;           // the LFS object
  uint64_t size = 0;    // the object's size in bytes, as announced in the batch request
  TicketOp op = TicketOp::Download;
  int64_t expires_at = 0;  // unix seconds; the ticket is refused from this second on

  friend bool operator==(const TicketClaims&, const TicketClaims&) = default;
};

// Signs `claims` with HMAC-SHA256 under `key` (the server secret, raw bytes; must not be
// empty). Returns an opaque string of [A-Za-z0-9_-] (base64url, no padding; 132 characters)
// that is safe in a URL path segment or query value without escaping. Never fails.
std::string IssueTicket(std::string_view key, const TicketClaims& claims);

// Checks `ticket` against `key` and the clock `now` (unix seconds) and returns its claims.
// The MAC is compared in constant time. Errors: Unauthorized for anything malformed, a
// wrong MAC (tampered, or signed with another key), an expired ticket, or an empty key.
// The messages do not say which check failed beyond "expired" vs "invalid".
Result<TicketClaims> VerifyTicket(std::string_view key, std::string_view ticket, int64_t now);

}  // namespace hangar::services
