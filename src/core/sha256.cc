#include "core/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

#include "core/hex.h"

namespace hangar {

struct Sha256Hasher::Ctx {
  EVP_MD_CTX* md = nullptr;
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256Hasher::Sha256Hasher() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  // Allocation or init failure of a built-in digest is not recoverable (STYLE.md §3).
  if (!ctx_->md || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) std::abort();
}
Sha256Hasher::~Sha256Hasher() = default;
Sha256Hasher::Sha256Hasher(Sha256Hasher&&) noexcept = default;
Sha256Hasher& Sha256Hasher::operator=(Sha256Hasher&&) noexcept = default;

void Sha256Hasher::Update(std::span<const uint8_t> data) {
  EVP_DigestUpdate(ctx_->md, data.data(), data.size());
}
void Sha256Hasher::Update(std::string_view data) {
  EVP_DigestUpdate(ctx_->md, data.data(), data.size());
}

Sha256 Sha256Hasher::Finish() {
  Sha256 out;
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, out.bytes.data(), &len);
  return out;
}

std::string Sha256::Hex() const { return HexEncode(bytes); }

std::optional<Sha256> Sha256::ParseHex(std::string_view hex) {
  if (!IsLowerHex(hex, 64)) return std::nullopt;
  auto raw = HexDecode(hex);
  Sha256 out;
  std::copy(raw->begin(), raw->end(), out.bytes.begin());
  return out;
}

Sha256 Sha256::Of(std::string_view data) {
  Sha256Hasher h;
  h.Update(data);
  return h.Finish();
}

}  // namespace hangar
