#include "db/postgres/pg_conn.h"

#include <charconv>
#include <cstring>
#include <vector>

#include "core/hex.h"

namespace hangar::db {
namespace {

constexpr Oid kInt8Oid = 20;
constexpr Oid kByteaOid = 17;
constexpr Oid kBoolOid = 16;

// SQLSTATEs (PostgreSQL's appendix A) that decide what a caller does next.
constexpr std::string_view kUniqueViolation = "23505";
constexpr std::string_view kSerializationFailure = "40001";
constexpr std::string_view kDeadlockDetected = "40P01";

std::string Trimmed(const char* s) {
  std::string out = s ? s : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// A prepared statement of one PgConnection: prepared on its first execution, with the
// parameter types of that first binding (integers as int8, the rest left to the server).
class PgStmtImpl final : public StmtImpl {
 public:
  PgStmtImpl(PgConnection* conn, std::string name, std::string sql, int params)
      : conn_(conn), name_(std::move(name)), sql_(std::move(sql)), values_(params) {}
  // Frees the server's side too: a statement prepared past the cache's bound is one of many.
  ~PgStmtImpl() override {
    Reset();
    if (prepared_) conn_->Forget(name_);
  }

  void BindInt(int i, int64_t v) override {
    if (Slot* s = At(i)) *s = Slot{std::to_string(v), false, true};
  }
  void BindText(int i, std::string_view v) override {
    if (Slot* s = At(i)) *s = Slot{std::string(v), false, false};
  }
  void BindNull(int i) override {
    if (Slot* s = At(i)) *s = Slot{{}, true, false};
  }
  Result<bool> Step() override;
  int64_t Int(int col) const override {
    const char* v = PQgetvalue(res_, row_, col);
    if (PQftype(res_, col) == kBoolOid) return v[0] == 't' ? 1 : 0;
    int64_t out = 0;
    std::from_chars(v, v + std::strlen(v), out);
    return out;
  }
  std::string Text(int col) const override {
    const char* v = PQgetvalue(res_, row_, col);
    size_t n = static_cast<size_t>(PQgetlength(res_, row_, col));
    // bytea arrives in its text form, "\x" and hex digits.
    if (PQftype(res_, col) == kByteaOid && n >= 2 && v[0] == '\\' && v[1] == 'x') {
      auto bytes = HexDecode(std::string_view(v + 2, n - 2));
      if (bytes) return std::string(bytes->begin(), bytes->end());
    }
    return std::string(v, n);
  }
  bool IsNull(int col) const override { return PQgetisnull(res_, row_, col) != 0; }
  void Reset() override {
    if (res_) PQclear(res_);
    res_ = nullptr;
    row_ = -1;
    for (auto& s : values_) s = Slot{{}, true, false};
  }

 private:
  struct Slot {
    std::string value;
    bool null = true;
    bool integer = false;
  };
  Slot* At(int i) {
    if (i < 1 || static_cast<size_t>(i) > values_.size()) {
      bad_index_ = i;
      return nullptr;
    }
    return &values_[static_cast<size_t>(i - 1)];
  }
  Result<void> Execute();

  PgConnection* conn_;
  const std::string name_;
  const std::string sql_;
  std::vector<Slot> values_;
  std::vector<Oid> types_;  // as prepared; empty until then
  PGresult* res_ = nullptr;
  int row_ = -1;
  int bad_index_ = 0;
  bool prepared_ = false;
};

Result<void> PgStmtImpl::Execute() {
  if (bad_index_)
    return MakeError(ErrorCode::Internal,
                     "database error (bind): no parameter " + std::to_string(bad_index_));
  const int n = static_cast<int>(values_.size());
  if (types_.empty() && n > 0) {
    types_.resize(values_.size());
    for (size_t i = 0; i < values_.size(); ++i) types_[i] = values_[i].integer ? kInt8Oid : 0;
  }
  if (!prepared_) {
    PGresult* p = PQprepare(conn_->raw(), name_.c_str(), sql_.c_str(), n,
                            types_.empty() ? nullptr : types_.data());
    auto ok = conn_->Check(p, "prepare");
    PQclear(p);
    HANGAR_TRY(std::move(ok));
    prepared_ = true;
  }
  std::vector<const char*> values(values_.size());
  std::vector<int> lengths(values_.size()), formats(values_.size());
  for (size_t i = 0; i < values_.size(); ++i) {
    const Slot& s = values_[i];
    values[i] = s.null ? nullptr : s.value.data();
    lengths[i] = static_cast<int>(s.value.size());
    // A string for a parameter prepared as int8 is parsed from text by the server.
    formats[i] = (s.integer || types_[i] == kInt8Oid) ? 0 : 1;
  }
  PGresult* r = PQexecPrepared(conn_->raw(), name_.c_str(), n, values.data(), lengths.data(),
                               formats.data(), 0);
  auto ok = conn_->Check(r, "step");
  if (!ok) {
    PQclear(r);
    return ok;
  }
  res_ = r;
  return {};
}

Result<bool> PgStmtImpl::Step() {
  if (!res_) HANGAR_TRY(Execute());
  ++row_;
  return row_ < PQntuples(res_);
}

}  // namespace

std::string PostgresPlaceholders(std::string_view sql, int* count) {
  std::string out;
  out.reserve(sql.size() + 16);
  int highest = 0;
  bool in_literal = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (c == '\'') in_literal = !in_literal;  // '' inside a literal toggles twice
    if (c != '?' || in_literal) {
      out += c;
      continue;
    }
    size_t j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') ++j;
    int n = highest + 1;
    if (j > i + 1) std::from_chars(sql.data() + i + 1, sql.data() + j, n);
    highest = std::max(highest, n);
    out += '$';
    out += std::to_string(n);
    i = j - 1;
  }
  *count = highest;
  return out;
}

std::string RedactedDatabaseUrl(std::string_view url) {
  // scheme://user:password@host...: the password is between the first ':' after "//" and '@'.
  size_t start = url.find("://");
  size_t at = url.find('@');
  if (start == std::string_view::npos || at == std::string_view::npos || at < start)
    return std::string(url);
  size_t colon = url.find(':', start + 3);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& url) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (!conn) return MakeError(ErrorCode::Internal, "PostgreSQL: out of memory connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    return MakeError(ErrorCode::Unavailable,
                     "cannot connect to PostgreSQL at " + RedactedDatabaseUrl(url) + ": " + why);
  }
  // Notices (an IF NOT EXISTS that found the table) are not errors; keep them off stderr.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  std::unique_ptr<PgConnection> out(new PgConnection(conn));
  return out;
}

PgConnection::~PgConnection() {
  DropStatements();  // the server frees a session's statements when it ends
  PQfinish(conn_);
}

Result<void> PgConnection::Check(PGresult* res, std::string_view what) {
  ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
    const char* n = PQcmdTuples(res);
    changes_ = (n && *n) ? std::strtoll(n, nullptr, 10) : 0;
    retryable_ = false;
    return {};
  }
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string_view code = state ? state : "";
  retryable_ = code == kSerializationFailure || code == kDeadlockDetected;
  if (code == kUniqueViolation)
    return MakeError(ErrorCode::Conflict, std::string(what) + ": already exists");
  std::string msg = Trimmed(res ? PQresultErrorMessage(res) : PQerrorMessage(conn_));
  return MakeError(ErrorCode::Internal, "database error (" + std::string(what) + "): " + msg);
}

bool PgConnection::Broken() const { return PQstatus(conn_) != CONNECTION_OK; }

Result<void> PgConnection::Exec(const std::string& sql) {
  PGresult* r = PQexec(conn_, sql.c_str());
  auto ok = Check(r, "exec");
  PQclear(r);
  return ok;
}

Result<int64_t> PgConnection::LastInsertId() {
  PGresult* r = PQexec(conn_, "SELECT lastval()");
  auto ok = Check(r, "last insert id");
  int64_t id = ok && PQntuples(r) == 1 ? std::strtoll(PQgetvalue(r, 0, 0), nullptr, 10) : 0;
  PQclear(r);
  HANGAR_TRY(std::move(ok));
  return id;
}

void PgConnection::Forget(std::string name) {
  forgotten_.push_back(std::move(name));
  if (forgotten_.size() >= 32 && PQtransactionStatus(conn_) == PQTRANS_IDLE) Deallocate();
}

void PgConnection::Deallocate() {
  // Not through Check: a failure here must not change what Changes/Retryable report.
  for (const auto& name : forgotten_) PQclear(PQexec(conn_, ("DEALLOCATE " + name).c_str()));
  forgotten_.clear();
}

Result<void> PgConnection::Begin(bool write) {
  if (!forgotten_.empty()) Deallocate();
  // SERIALIZABLE gives the read-then-write logic of a store's transaction the guarantee
  // SQLite's single writer gives it; InTransaction retries what the server aborts.
  return Exec(write ? "BEGIN ISOLATION LEVEL SERIALIZABLE"
                    : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

Result<std::unique_ptr<StmtImpl>> PgConnection::PrepareImpl(std::string_view sql) {
  int params = 0;
  std::string text = PostgresPlaceholders(sql, &params);
  std::string name = "s" + std::to_string(next_name_++);
  return std::unique_ptr<StmtImpl>(
      std::make_unique<PgStmtImpl>(this, std::move(name), std::move(text), params));
}

Result<std::shared_ptr<Pool>> OpenPostgresPool(const std::string& url, PostgresOptions options) {
  HANGAR_ASSIGN_OR_RETURN(auto first, PgConnection::Open(url));
  HANGAR_TRY(Migrate(*first));
  auto open = [url]() -> Result<std::unique_ptr<Connection>> {
    HANGAR_ASSIGN_OR_RETURN(auto conn, PgConnection::Open(url));
    return std::unique_ptr<Connection>(std::move(conn));
  };
  return std::make_shared<Pool>(SqlDialect::Postgres, std::move(first), std::move(open),
                                Pool::Options{options.max_connections, false});
}

}  // namespace hangar::db
