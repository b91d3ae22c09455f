#include "db/sql/sql_viewer_store.h"

#include "core/util.h"

namespace hangar::db {
namespace {

// The columns of a split row after (repo_id, config, split), bound by BindSplit from ?4 on.
constexpr const char kSplitCols[] =
    "config, split, ordinal, status, error_code, error, builder, partial, num_rows, "
    "estimated_num_rows, num_columns, num_bytes_original, num_bytes_parquet, num_bytes_memory, "
    "columns_json";

constexpr const char kExportCols[] =
    "repo_id, source_commit, status, export_commit, viewer, error_code, error, updated_at, "
    "language";

constexpr const char kFileCols[] =
    "shard, path, sha256, size, row_offset, num_rows, row_group_rows";

Error RepoMissing(int64_t repo_id) {
  return MakeError(ErrorCode::RepoNotFound,
                   "repository #" + std::to_string(repo_id) + " not found");
}

Result<ExportStatus> ReadStatus(const std::string& name, std::string_view table) {
  auto status = ParseExportStatus(name);
  if (!status) {
    return MakeError(ErrorCode::Internal, "corrupt status '" + name + "' in " + std::string(table));
  }
  return *status;
}

// "1024,1024,17"; "" for no row groups. Row counts are never negative.
Result<std::string> EncodeRowGroups(const std::vector<int64_t>& rows) {
  std::string out;
  for (int64_t n : rows) {
    if (n < 0) return MakeError(ErrorCode::Internal, "negative row group size in viewer_files");
    if (!out.empty()) out += ',';
    out += std::to_string(n);
  }
  return out;
}

Result<std::vector<int64_t>> DecodeRowGroups(std::string_view text) {
  std::vector<int64_t> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    auto n = ParseUint64(text.substr(0, comma));
    if (!n || *n > static_cast<uint64_t>(INT64_MAX))
      return MakeError(ErrorCode::Internal, "corrupt row_group_rows in viewer_files");
    out.push_back(static_cast<int64_t>(*n));
    // A trailing comma would leave an empty last item: refuse it like any other corruption.
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty())
      return MakeError(ErrorCode::Internal, "corrupt row_group_rows in viewer_files");
  }
  return out;
}

Result<ViewerExport> ReadExport(const Stmt& s) {
  ViewerExport e;
  e.repo_id = s.Int(0);
  e.source_commit = s.Text(1);
  HANGAR_ASSIGN_OR_RETURN(e.status, ReadStatus(s.Text(2), "viewer_exports"));
  e.export_commit = s.Text(3);
  e.viewer = s.Int(4) != 0;
  e.error_code = s.Text(5);
  e.error = s.Text(6);
  e.updated_at = s.Int(7);
  e.language = s.Text(8);
  return e;
}

// Reads the columns of kSplitCols.
Result<ViewerSplit> ReadSplit(const Stmt& s) {
  ViewerSplit v;
  v.config = s.Text(0);
  v.split = s.Text(1);
  v.ordinal = static_cast<int>(s.Int(2));
  HANGAR_ASSIGN_OR_RETURN(v.status, ReadStatus(s.Text(3), "viewer_splits"));
  v.error_code = s.Text(4);
  v.error = s.Text(5);
  v.builder = s.Text(6);
  v.partial = s.Int(7) != 0;
  v.num_rows = s.Int(8);
  v.estimated_num_rows = s.OptInt(9);
  v.num_columns = s.Int(10);
  v.num_bytes_original = s.Int(11);
  v.num_bytes_parquet = s.Int(12);
  v.num_bytes_memory = s.Int(13);
  v.columns_json = s.Text(14);
  return v;
}

// Reads the columns of kFileCols.
Result<ViewerFile> ReadFile(const Stmt& s) {
  ViewerFile f;
  f.shard = static_cast<int>(s.Int(0));
  f.path = s.Text(1);
  auto sha = Sha256::ParseHex(s.Text(2));
  if (!sha) return MakeError(ErrorCode::Internal, "corrupt sha256 in viewer_files");
  f.sha256 = *sha;
  f.size = s.Int(3);
  f.row_offset = s.Int(4);
  f.num_rows = s.Int(5);
  HANGAR_ASSIGN_OR_RETURN(f.row_group_rows, DecodeRowGroups(s.Text(6)));
  return f;
}

// Binds ?1 repo_id, ?2 config, ?3 split and ?4… the split's other columns in kSplitCols
// order, the layout both the INSERT and the UPDATE of a split use.
Stmt& BindSplit(Stmt& s, int64_t repo_id, const ViewerSplit& v) {
  return s.Bind(1, repo_id)
      .Bind(2, v.config)
      .Bind(3, v.split)
      .Bind(4, int64_t{v.ordinal})
      .Bind(5, ExportStatusName(v.status))
      .Bind(6, v.error_code)
      .Bind(7, v.error)
      .Bind(8, v.builder)
      .Bind(9, int64_t{v.partial ? 1 : 0})
      .Bind(10, v.num_rows)
      .Bind(11, v.estimated_num_rows)
      .Bind(12, v.num_columns)
      .Bind(13, v.num_bytes_original)
      .Bind(14, v.num_bytes_parquet)
      .Bind(15, v.num_bytes_memory)
      .Bind(16, v.columns_json);
}

Result<void> InsertSplit(Connection& c, int64_t repo_id, const ViewerSplit& v) {
  static const std::string kSql = std::string("INSERT INTO viewer_splits (repo_id, ") + kSplitCols +
                                  ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                                  "?13, ?14, ?15, ?16)";
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(kSql));
  return BindSplit(s, repo_id, v).Run();
}

// Replaces the files of one split (which must exist: the foreign key refuses others).
Result<void> ReplaceFiles(Connection& c, int64_t repo_id, const ViewerSplit& v,
                          const std::vector<ViewerFile>& files) {
  {
    HANGAR_ASSIGN_OR_RETURN(
        auto d,
        c.Prepare("DELETE FROM viewer_files WHERE repo_id = ? AND config = ? AND split = ?"));
    HANGAR_TRY(d.Bind(1, repo_id).Bind(2, v.config).Bind(3, v.split).Run());
  }
  static const std::string kSql =
      std::string("INSERT INTO viewer_files (repo_id, config, split, ") + kFileCols +
      ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  for (const ViewerFile& f : files) {
    HANGAR_ASSIGN_OR_RETURN(auto row_groups, EncodeRowGroups(f.row_group_rows));
    // A statement per row: Stmt resets when destroyed, not after Run().
    HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(kSql));
    HANGAR_TRY(s.Bind(1, repo_id)
                   .Bind(2, v.config)
                   .Bind(3, v.split)
                   .Bind(4, int64_t{f.shard})
                   .Bind(5, f.path)
                   .Bind(6, f.sha256.Hex())
                   .Bind(7, f.size)
                   .Bind(8, f.row_offset)
                   .Bind(9, f.num_rows)
                   .Bind(10, row_groups)
                   .Run());
  }
  return {};
}

}  // namespace

SqlViewerStore::SqlViewerStore(std::shared_ptr<Pool> pool, std::function<int64_t()> now)
    : pool_(std::move(pool)), now_(now ? std::move(now) : std::function<int64_t()>(NowUnix)) {}

Result<void> SqlViewerStore::BeginExport(int64_t repo_id, const std::string& source_commit,
                                         bool viewer, const std::vector<ViewerSplit>& splits,
                                         const std::string& language) {
  const int64_t now = now_();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    {
      // INSERT ... SELECT from repos: a missing repo inserts nothing instead of an FK error.
      HANGAR_ASSIGN_OR_RETURN(
          auto s,
          c->Prepare("INSERT INTO viewer_exports (repo_id, source_commit, status, export_commit, "
                     "viewer, error_code, error, updated_at, language) SELECT id, ?, ?, '', ?, "
                     "'', '', ?, ? FROM repos WHERE id = ? ON CONFLICT (repo_id) DO UPDATE SET "
                     "source_commit = excluded.source_commit, status = excluded.status, "
                     "export_commit = '', viewer = excluded.viewer, error_code = '', error = '', "
                     "updated_at = excluded.updated_at, language = excluded.language"));
      HANGAR_TRY(s.Bind(1, source_commit)
                     .Bind(2, ExportStatusName(ExportStatus::Pending))
                     .Bind(3, int64_t{viewer ? 1 : 0})
                     .Bind(4, now)
                     .Bind(5, language)
                     .Bind(6, repo_id)
                     .Run());
      if (c->Changes() == 0) return RepoMissing(repo_id);
    }
    {
      // The previous export's files go with its splits (ON DELETE CASCADE).
      HANGAR_ASSIGN_OR_RETURN(auto d, c->Prepare("DELETE FROM viewer_splits WHERE repo_id = ?"));
      HANGAR_TRY(d.Bind(1, repo_id).Run());
    }
    for (const ViewerSplit& v : splits) HANGAR_TRY(InsertSplit(*c, repo_id, v));
    return {};
  });
}

Result<std::optional<ViewerExport>> SqlViewerStore::GetExport(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  static const std::string kSql =
      std::string("SELECT ") + kExportCols + " FROM viewer_exports WHERE repo_id = ?";
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kSql));
  s.Bind(1, repo_id);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return std::optional<ViewerExport>();
  HANGAR_ASSIGN_OR_RETURN(auto e, ReadExport(s));
  return std::optional<ViewerExport>(std::move(e));
}

Result<bool> SqlViewerStore::SetExportStatus(int64_t repo_id, const std::string& source_commit,
                                             ExportStatus status, const std::string& export_commit,
                                             const std::string& error_code,
                                             const std::string& error) {
  const int64_t now = now_();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // One statement, so the superseded check and the write are atomic without a transaction.
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("UPDATE viewer_exports SET status = ?, export_commit = ?, "
                                     "error_code = ?, error = ?, updated_at = ? "
                                     "WHERE repo_id = ? AND source_commit = ?"));
  HANGAR_TRY(s.Bind(1, ExportStatusName(status))
                 .Bind(2, export_commit)
                 .Bind(3, error_code)
                 .Bind(4, error)
                 .Bind(5, now)
                 .Bind(6, repo_id)
                 .Bind(7, source_commit)
                 .Run());
  return c->Changes() > 0;
}

Result<bool> SqlViewerStore::PutSplit(int64_t repo_id, const std::string& source_commit,
                                      const ViewerSplit& split,
                                      const std::optional<std::vector<ViewerFile>>& files) {
  const int64_t now = now_();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    {
      // The superseded check, which also records the progress on the export row.
      HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE viewer_exports SET updated_at = ? "
                                                 "WHERE repo_id = ? AND source_commit = ?"));
      HANGAR_TRY(s.Bind(1, now).Bind(2, repo_id).Bind(3, source_commit).Run());
      if (c->Changes() == 0) return false;
    }
    {
      HANGAR_ASSIGN_OR_RETURN(
          auto s,
          c->Prepare("UPDATE viewer_splits SET ordinal = ?4, status = ?5, error_code = ?6, "
                     "error = ?7, builder = ?8, partial = ?9, num_rows = ?10, "
                     "estimated_num_rows = ?11, num_columns = ?12, num_bytes_original = ?13, "
                     "num_bytes_parquet = ?14, num_bytes_memory = ?15, columns_json = ?16 "
                     "WHERE repo_id = ?1 AND config = ?2 AND split = ?3"));
      HANGAR_TRY(BindSplit(s, repo_id, split).Run());
      // The error rolls back the updated_at above with the rest of the transaction.
      if (c->Changes() == 0) {
        return MakeError(ErrorCode::NotFound, "split '" + split.split + "' of config '" +
                                                  split.config + "' was not begun");
      }
    }
    if (files) HANGAR_TRY(ReplaceFiles(*c, repo_id, split, *files));
    return true;
  });
}

Result<std::vector<ViewerSplit>> SqlViewerStore::ListSplits(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  // config and split break ordinal ties, so the order is total even if a caller repeats one.
  static const std::string kSql = std::string("SELECT ") + kSplitCols +
                                  " FROM viewer_splits WHERE repo_id = ? "
                                  "ORDER BY ordinal, config, split";
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kSql));
  s.Bind(1, repo_id);
  std::vector<ViewerSplit> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    HANGAR_ASSIGN_OR_RETURN(auto v, ReadSplit(s));
    out.push_back(std::move(v));
  }
  return out;
}

Result<std::vector<ViewerFile>> SqlViewerStore::ListFiles(int64_t repo_id,
                                                          const std::string& config,
                                                          const std::string& split) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  static const std::string kSql =
      std::string("SELECT ") + kFileCols +
      " FROM viewer_files WHERE repo_id = ? AND config = ? AND split = ? ORDER BY shard";
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kSql));
  s.Bind(1, repo_id).Bind(2, config).Bind(3, split);
  std::vector<ViewerFile> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    HANGAR_ASSIGN_OR_RETURN(auto f, ReadFile(s));
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::vector<int64_t>> SqlViewerStore::ListUnfinished() {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT repo_id FROM viewer_exports "
                                             "WHERE status IN (?, ?) ORDER BY repo_id"));
  s.Bind(1, ExportStatusName(ExportStatus::Pending))
      .Bind(2, ExportStatusName(ExportStatus::Running));
  std::vector<int64_t> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    out.push_back(s.Int(0));
  }
  return out;
}

Result<void> SqlViewerStore::Delete(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // Splits and files go with the export row (ON DELETE CASCADE).
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM viewer_exports WHERE repo_id = ?"));
  return s.Bind(1, repo_id).Run();
}

}  // namespace hangar::db
