#pragma once
// Helpers shared by the storage tests: temporary directories and byte helpers.

#include <stdlib.h>

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hangar::storage::testing_util {

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hangar-storage-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::span<const char> AsBytes(std::string_view s) { return {s.data(), s.size()}; }

// Names of the entries directly in `dir` (empty when `dir` is missing).
inline std::vector<std::string> ListFiles(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  return out;
}

}  // namespace hangar::storage::testing_util
