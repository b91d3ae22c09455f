#include "services/oci/oci_names.h"
#include "core/util.h"

#include <openssl/evp.h>

#include <cctype>
#include <cstdlib>
#include <vector>

#include "core/hex.h"

namespace hangar::services {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsLowerHex(char c) { return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9'); }

// One path component: [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*
bool IsValidComponent(std::string_view c) {
  size_t i = 0;
  while (true) {
    size_t start = i;
    while (i < c.size() && IsLowerAlnum(c[i])) ++i;
    if (i == start) return false;  // empty run: leading, trailing or doubled separator
    if (i == c.size()) return true;
    if (c[i] == '.') {
      ++i;
    } else if (c[i] == '_') {
      ++i;
      if (i < c.size() && c[i] == '_') ++i;
    } else if (c[i] == '-') {
      while (i < c.size() && c[i] == '-') ++i;
    } else {
      return false;
    }
  }
}

}  // namespace

Result<OciName> ParseOciName(std::string_view name) {
  auto invalid = [&](std::string_view why) {
    return MakeError(ErrorCode::NameInvalid, "invalid repository name \"" +
                                                 std::string(name.substr(0, 300)) +
                                                 "\": " + std::string(why));
  };
  if (name.empty() || name.size() > 255) return invalid("must be 1 to 255 characters");
  std::vector<std::string_view> parts;
  for (size_t pos = 0;;) {
    size_t slash = name.find('/', pos);
    std::string_view part = name.substr(pos, slash == std::string_view::npos ? slash : slash - pos);
    if (!IsValidComponent(part)) {
      return invalid(
          "components are lower-case letters and digits joined by '.', '_', '__' or '-'");
    }
    parts.push_back(part);
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  OciName out;
  size_t first = 0;
  if (parts.size() == 3 && parts[0] == "datasets") {
    out.type = RepoType::Dataset;
    first = 1;
  } else if (parts.size() == 3 && parts[0] == "spaces") {
    out.type = RepoType::Space;
    first = 1;
  }
  if (parts.size() - first != 2) {
    return invalid("hub repositories are named ns/name, datasets/ns/name or spaces/ns/name");
  }
  out.ns = std::string(parts[first]);
  out.name = std::string(parts[first + 1]);
  return out;
}

bool MatchesOciNameGrammar(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  for (size_t pos = 0;;) {
    size_t slash = name.find('/', pos);
    if (!IsValidComponent(
            name.substr(pos, slash == std::string_view::npos ? slash : slash - pos))) {
      return false;
    }
    if (slash == std::string_view::npos) return true;
    pos = slash + 1;
  }
}

std::string OciNameOf(const RepoId& id) { return AsciiLower(id.UrlPath()); }

bool IsValidTag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128) return false;
  for (size_t i = 0; i < tag.size(); ++i) {
    char c = tag[i];
    bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!word && (i == 0 || (c != '.' && c != '-'))) return false;
  }
  return true;
}

Result<OciDigest> ParseDigest(std::string_view digest) {
  auto invalid = [&](std::string_view why) {
    return MakeError(
        ErrorCode::DigestInvalid,
        "invalid digest \"" + std::string(digest.substr(0, 300)) + "\": " + std::string(why));
  };
  size_t colon = digest.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == digest.size()) {
    return invalid("expected <algorithm>:<hex>");
  }
  std::string_view alg = digest.substr(0, colon);
  std::string_view enc = digest.substr(colon + 1);
  for (char c : alg) {
    if (!IsLowerAlnum(c) && c != '+' && c != '.' && c != '_' && c != '-') {
      return invalid("malformed algorithm");
    }
  }
  for (char c : enc) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '=' && c != '_' && c != '-') {
      return invalid("malformed encoded part");
    }
  }
  size_t want = alg == "sha256" ? 64 : alg == "sha512" ? 128 : 0;
  if (want == 0) return invalid("unsupported algorithm (sha256 and sha512 are)");
  if (enc.size() != want) {
    return invalid(std::string(alg) + " needs " + std::to_string(want) + " hex characters");
  }
  for (char c : enc) {
    if (!IsLowerHex(c)) return invalid("hex must be lower-case 0-9a-f");
  }
  return OciDigest{std::string(alg), std::string(enc)};
}

struct OciHasher::Ctx {
  EVP_MD_CTX* md = nullptr;
  ~Ctx() { EVP_MD_CTX_free(md); }
};

OciHasher::OciHasher(std::string_view algorithm)
    : algorithm_(algorithm), ctx_(std::make_unique<Ctx>()) {
  const EVP_MD* md = algorithm == "sha256"   ? EVP_sha256()
                     : algorithm == "sha512" ? EVP_sha512()
                                             : nullptr;
  ctx_->md = EVP_MD_CTX_new();
  if (!md || !ctx_->md || EVP_DigestInit_ex(ctx_->md, md, nullptr) != 1) std::abort();
}
OciHasher::~OciHasher() = default;
OciHasher::OciHasher(OciHasher&&) noexcept = default;
OciHasher& OciHasher::operator=(OciHasher&&) noexcept = default;

void OciHasher::Update(std::string_view data) {
  if (!data.empty()) EVP_DigestUpdate(ctx_->md, data.data(), data.size());
}

OciDigest OciHasher::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_->md, out, &n);
  return OciDigest{algorithm_, HexEncode(std::span<const uint8_t>(out, n))};
}

OciDigest DigestOf(std::string_view algorithm, std::string_view bytes) {
  OciHasher h(algorithm);
  h.Update(bytes);
  return h.Finish();
}

}  // namespace hangar::services
