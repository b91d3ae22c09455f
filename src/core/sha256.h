#pragma once
// Sha256: the 32-byte SHA-256 of some bytes (LFS oid, OCI digest value, blob store key),
// and Sha256Hasher, an incremental hasher over OpenSSL's EVP API.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hangar {

struct Sha256 {
  std::array<uint8_t, 32> bytes{};

  // 64 lower-case hex characters.
  std::string Hex() const;
  // Parses exactly 64 lower-case hex characters (the LFS and OCI form); nullopt otherwise.
  static std::optional<Sha256> ParseHex(std::string_view hex);
  // The SHA-256 of `data`, in one call.
  static Sha256 Of(std::string_view data);

  friend bool operator==(const Sha256&, const Sha256&) = default;
  friend auto operator<=>(const Sha256&, const Sha256&) = default;
};

// Incremental SHA-256. Not thread-safe; one per stream.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(Sha256Hasher&&) noexcept;
  Sha256Hasher& operator=(Sha256Hasher&&) noexcept;

  void Update(std::span<const uint8_t> data);
  void Update(std::string_view data);
  // The digest of everything given so far; the hasher is spent afterwards.
  Sha256 Finish();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace hangar

template <>
struct std::hash<hangar::Sha256> {
  size_t operator()(const hangar::Sha256& s) const noexcept {
    size_t h;
    __builtin_memcpy(&h, s.bytes.data(), sizeof h);
    return h;
  }
};
