// Engine::Open: the version check, the database's configuration, and the sandbox.

#include <filesystem>
#include <string>

#include "core/quote.h"
#include "duckdb/engine_state.h"

#ifndef HANGAR_DUCKDB_VERSION
#error "HANGAR_DUCKDB_VERSION (the pinned duckdb.h's release) comes from CMakeLists.txt"
#endif

namespace hangar::duckdb {
namespace {

using internal::ConfigHandle;
using internal::ConnectionHandle;
using internal::DatabaseHandle;
using internal::ResultHandle;

// An absolute directory in the form DuckDB's allowed_directories matches by prefix:
// lexically normal, with a trailing '/' (so "/data" does not also allow "/database").
Result<std::string> NormaliseDirectory(const std::string& dir, std::string_view what) {
  if (dir.empty() || dir[0] != '/' || dir.find('\0') != std::string::npos)
    return MakeError(ErrorCode::BadRequest,
                     std::string(what) + " '" + dir + "' is not an absolute directory");
  std::string normal = std::filesystem::path(dir).lexically_normal().string();
  if (normal.back() != '/') normal += '/';
  if (normal == "/")
    return MakeError(ErrorCode::BadRequest,
                     std::string(what) + " '" + dir + "' would allow every file");
  return normal;
}

Result<EngineOptions> Normalise(EngineOptions o) {
  if (o.memory_limit_bytes == 0 || o.threads < 1 || o.max_connections < 1 ||
      o.default_timeout.count() <= 0 || o.default_max_result_bytes == 0)
    return MakeError(ErrorCode::BadRequest,
                     "DuckDB engine options: memory limit, threads, connections, timeout and "
                     "result cap must all be positive");
  for (std::string& dir : o.allowed_directories) {
    HANGAR_ASSIGN_OR_RETURN(dir, NormaliseDirectory(dir, "allowed directory"));
  }
  if (!o.temp_directory.empty()) {
    HANGAR_ASSIGN_OR_RETURN(std::string temp,
                            NormaliseDirectory(o.temp_directory, "temp directory"));
    o.temp_directory = temp;
  }
  return o;
}

Result<DatabaseHandle> OpenDatabase(const EngineOptions& o) {
  ConfigHandle config;
  if (duckdb_create_config(config.out()) != DuckDBSuccess)
    return MakeError(ErrorCode::Internal, "DuckDB: cannot create a configuration");
  const std::pair<const char*, std::string> settings[] = {
      {"memory_limit", std::to_string(o.memory_limit_bytes) + "b"},
      {"threads", std::to_string(o.threads)},
      {"temp_directory", o.temp_directory},
      {"max_temp_directory_size", std::to_string(o.temp_directory_limit_bytes) + "b"},
      // Extensions: none fetched, none loaded but the ones built into libduckdb.so.
      {"autoinstall_known_extensions", "false"},
      {"autoload_known_extensions", "false"},
      {"allow_community_extensions", "false"},
      {"allow_unsigned_extensions", "false"},
  };
  for (const auto& [name, value] : settings) {
    if (duckdb_set_config(config.get(), name, value.c_str()) != DuckDBSuccess)
      return MakeError(ErrorCode::Internal,
                       std::string("DuckDB refused the setting ") + name + " = '" + value + "'");
  }
  DatabaseHandle db;
  char* error = nullptr;
  if (duckdb_open_ext(nullptr, db.out(), config.get(), &error) != DuckDBSuccess)
    return MakeError(ErrorCode::Internal,
                     "DuckDB: cannot open a database: " + internal::TakeString(error));
  return db;
}

Result<void> Exec(duckdb_connection c, const std::string& sql) {
  ResultHandle r;
  if (duckdb_query(c, sql.c_str(), r.out()) != DuckDBSuccess)
    return MakeError(ErrorCode::Internal,
                     "DuckDB sandbox: " + sql + ": " + duckdb_result_error(r.get()));
  return {};
}

// From here on the database's queries touch files only under the allowed directories, and
// no statement can change a setting again (lock_configuration). The order matters: DuckDB
// takes allowed_directories only while external access is still enabled.
Result<void> ApplySandbox(duckdb_database db, const EngineOptions& o) {
  ConnectionHandle c;
  if (duckdb_connect(db, c.out()) != DuckDBSuccess)
    return MakeError(ErrorCode::Internal, "DuckDB: cannot open a connection");
  std::string dirs;
  // String literals: SET takes no parameters, and these are the operator's configured
  // directories.
  for (const std::string& dir : o.allowed_directories)
    dirs += (dirs.empty() ? "" : ", ") + QuoteDoubled(dir, '\'');
  HANGAR_TRY(Exec(c.get(), "SET GLOBAL allowed_directories = [" + dirs + "]"));
  // Parquet's settings exist once its (built-in) extension has loaded, after the open.
  if (o.cache_parquet_metadata)
    HANGAR_TRY(Exec(c.get(), "SET GLOBAL parquet_metadata_cache = true"));
  HANGAR_TRY(Exec(c.get(), "SET GLOBAL enable_external_access = false"));
  HANGAR_TRY(Exec(c.get(), "SET GLOBAL lock_configuration = true"));
  return {};
}

}  // namespace

std::string_view HeaderVersion() { return HANGAR_DUCKDB_VERSION; }

std::string_view LibraryVersion() { return duckdb_library_version(); }

Result<void> CheckLibraryVersion(std::string_view header_version) {
  if (LibraryVersion() == header_version) return {};
  return MakeError(ErrorCode::Internal,
                   "DuckDB library is " + std::string(LibraryVersion()) +
                       " but Hangar was built with the duckdb.h of " + std::string(header_version) +
                       " (scripts/duckdb.pin); run scripts/install-deps.sh and rebuild");
}

Result<std::unique_ptr<Engine>> Engine::Open(EngineOptions options) {
  HANGAR_TRY(CheckLibraryVersion(HeaderVersion()));
  HANGAR_ASSIGN_OR_RETURN(EngineOptions normal, Normalise(std::move(options)));
  HANGAR_ASSIGN_OR_RETURN(DatabaseHandle db, OpenDatabase(normal));
  HANGAR_TRY(ApplySandbox(db.get(), normal));
  return std::unique_ptr<Engine>(
      new Engine(std::make_unique<State>(std::move(normal), std::move(db))));
}

Engine::Engine(std::unique_ptr<State> state) : state_(std::move(state)) {}
Engine::~Engine() = default;

const EngineOptions& Engine::options() const { return state_->options; }

}  // namespace hangar::duckdb
