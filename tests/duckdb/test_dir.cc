#include "test_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

namespace hangar::duckdb::testing {

TestDir::TestDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "hangar-duckdb-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TestDir::~TestDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TestDir::Write(std::string_view name, std::string_view text) const {
  std::filesystem::path p = path_ / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

EngineOptions TestOptions(const std::string& allowed) {
  EngineOptions o;
  o.memory_limit_bytes = 256ull << 20;
  o.threads = 2;
  o.allowed_directories = {allowed};
  return o;
}

std::string Text(const QueryResult& r, size_t row, size_t col) {
  EXPECT_LT(row, r.rows.size());
  if (row >= r.rows.size()) return {};
  const auto* s = std::get_if<std::string>(&r.rows[row][col]);
  EXPECT_NE(s, nullptr) << "cell (" << row << ", " << col << ") is not text";
  return s ? *s : std::string();
}

int64_t Int(const QueryResult& r, size_t row, size_t col) {
  EXPECT_LT(row, r.rows.size());
  if (row >= r.rows.size()) return -1;
  const auto* i = std::get_if<int64_t>(&r.rows[row][col]);
  EXPECT_NE(i, nullptr) << "cell (" << row << ", " << col << ") is not an integer";
  return i ? *i : -1;
}

}  // namespace hangar::duckdb::testing
