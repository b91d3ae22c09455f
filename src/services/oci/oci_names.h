#pragma once
// OCI names, tags and digests (oci.md §1) and how registry names map onto hub repos:
// "ns/name" is a model, "datasets/ns/name" a dataset, "spaces/ns/name" a space.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/repo_id.h"
#include "core/result.h"

namespace hangar::services {

// A registry repository name split into the hub repo it denotes (still lower-case: hub
// names may have capitals; RepoStore finds them case-insensitively).
struct OciName {
  RepoType type = RepoType::Model;
  std::string ns;
  std::string name;
};

// Parses `name` (oci.md §1.1 grammar, at most 255 characters) into the hub repo it names.
// Errors: NameInvalid for a name outside the grammar (uppercase, "..", empty components)
// or one that is not [datasets/|spaces/]ns/name.
Result<OciName> ParseOciName(std::string_view name);

// Whether `name` matches the registry name grammar (oci.md §1.1), whatever its shape.
bool MatchesOciNameGrammar(std::string_view name);

// The registry name of a hub repo: lower-cased, with its type prefix ("datasets/ns/name").
std::string OciNameOf(const RepoId& id);

// Whether `tag` is a valid tag: [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127} (oci.md §1.2).
bool IsValidTag(std::string_view tag);

// A parsed digest "<algorithm>:<encoded>" (oci.md §1.3).
struct OciDigest {
  std::string algorithm;  // "sha256" or "sha512"
  std::string encoded;    // lower-case hex: 64 (sha256) or 128 (sha512) characters

  std::string String() const { return algorithm + ":" + encoded; }
  friend bool operator==(const OciDigest&, const OciDigest&) = default;
};

// Parses a digest of a supported algorithm (sha256, sha512). Errors: DigestInvalid for
// a malformed digest, uppercase hex, a wrong length, or a well-formed digest of an
// algorithm Hangar cannot compute (the message says which).
Result<OciDigest> ParseDigest(std::string_view digest);

// Incremental hashing in a digest's algorithm ("sha256" or "sha512"), over OpenSSL's EVP.
// Not thread-safe; one per stream. Movable.
class OciHasher {
 public:
  // `algorithm` must be one ParseDigest accepts (else the process aborts: a caller bug).
  explicit OciHasher(std::string_view algorithm);
  ~OciHasher();
  OciHasher(OciHasher&&) noexcept;
  OciHasher& operator=(OciHasher&&) noexcept;

  void Update(std::string_view data);
  // The digest of everything given so far; the hasher is spent afterwards.
  OciDigest Finish();

 private:
  struct Ctx;
  std::string algorithm_;
  std::unique_ptr<Ctx> ctx_;
};

// The digest of `bytes` in `algorithm` (sha256, sha512).
OciDigest DigestOf(std::string_view algorithm, std::string_view bytes);

// Whether a manifest reference is a digest rather than a tag (it contains ':', which tags
// cannot; oci.md §1.4).
inline bool IsDigestReference(std::string_view reference) {
  return reference.find(':') != std::string_view::npos;
}

}  // namespace hangar::services
