// viewer-copy-peer: the peer of the viewer's conversion benchmark (issue 15): DuckDB on its
// own, through its C API, converting a CSV file to Parquet shards with the statement the
// export runs (read_csv with the same options, COPY with the same row groups and shards),
// under the same memory limit and threads. Prints the seconds it took. Not part of the
// server: Hangar's own DuckDB calls are all in src/duckdb/.
//
//   viewer-copy-peer FILE.csv OUT_DIR [memory_bytes] [threads] [row_group_rows] [groups_per_file]

#include <duckdb.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

// `s` as an SQL string literal (the peer's own arguments, not user input).
std::string Literal(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

bool Exec(duckdb_connection c, const std::string& sql) {
  duckdb_result r;
  bool ok = duckdb_query(c, sql.c_str(), &r) == DuckDBSuccess;
  if (!ok) std::fprintf(stderr, "viewer-copy-peer: %s\n", duckdb_result_error(&r));
  duckdb_destroy_result(&r);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: viewer-copy-peer FILE.csv OUT_DIR [memory_bytes] [threads] "
                 "[row_group_rows] [groups_per_file]\n");
    return 2;
  }
  std::string memory = argc > 3 ? argv[3] : "1073741824";
  std::string threads = argc > 4 ? argv[4] : "2";
  std::string rows = argc > 5 ? argv[5] : "10240";
  std::string groups = argc > 6 ? argv[6] : "20";
  duckdb_database db;
  duckdb_connection con;
  if (duckdb_open(nullptr, &db) != DuckDBSuccess || duckdb_connect(db, &con) != DuckDBSuccess)
    return 1;
  if (!Exec(con, "SET memory_limit = '" + memory + "b'") || !Exec(con, "SET threads = " + threads))
    return 1;
  auto start = std::chrono::steady_clock::now();
  bool ok = Exec(con, "COPY (SELECT * FROM read_csv(" + Literal(argv[1]) +
                          ", delim = ',', header = true, quote = '\"', encoding = 'utf-8', "
                          "max_line_size = 67108864, buffer_size = 67108864, null_padding = true, "
                          "union_by_name = true)) TO " +
                          Literal(argv[2]) + " (FORMAT parquet, ROW_GROUP_SIZE " + rows +
                          ", ROW_GROUPS_PER_FILE " + groups + ")");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  duckdb_disconnect(&con);
  duckdb_close(&db);
  if (!ok) return 1;
  std::printf("%.3f\n", s);
  return 0;
}
