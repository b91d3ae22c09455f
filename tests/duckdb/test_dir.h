#pragma once
// A temporary directory for the DuckDB tests, removed with everything in it at the end.

#include <filesystem>
#include <string>
#include <string_view>

#include "duckdb/engine.h"

namespace hangar::duckdb::testing {

class TestDir {
 public:
  TestDir();
  ~TestDir();
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // `path()/name` as a string.
  std::string File(std::string_view name) const { return (path_ / name).string(); }
  // Writes `text` to `path()/name` (directories made) and returns its path.
  std::string Write(std::string_view name, std::string_view text) const;

 private:
  std::filesystem::path path_;
};

// Engine options for tests: 256 MiB, 2 threads, `allowed` the one allowed directory.
EngineOptions TestOptions(const std::string& allowed);

// The cell at (row, col) of `r` as a string (fails the test when it is not one).
std::string Text(const QueryResult& r, size_t row = 0, size_t col = 0);
// The cell at (row, col) of `r` as an int64 (fails the test when it is not one).
int64_t Int(const QueryResult& r, size_t row = 0, size_t col = 0);

}  // namespace hangar::duckdb::testing
