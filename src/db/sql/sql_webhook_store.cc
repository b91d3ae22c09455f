#include "db/sql/sql_webhook_store.h"

#include <algorithm>

namespace hangar::db {
namespace {

constexpr const char kColumns[] =
    "w.id, w.owner_id, w.url, w.secret, w.domains, w.disabled, w.created_at, w.updated_at ";

// Domains are stored as one comma-separated column ("repo,discussion").
std::string JoinDomains(const std::vector<std::string>& domains) {
  std::string out;
  for (const auto& d : domains) out += (out.empty() ? "" : ",") + d;
  return out;
}

std::vector<std::string> SplitDomains(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

WebhookRecord ReadRow(const Stmt& s) {
  WebhookRecord w;
  w.id = s.Text(0);
  w.owner_id = s.Int(1);
  w.url = s.Text(2);
  w.secret = s.Text(3);
  w.domains = SplitDomains(s.Text(4));
  w.disabled = s.Int(5) != 0;
  w.created_at = s.Int(6);
  w.updated_at = s.Int(7);
  return w;
}

// The watches of `w`, in the order they were given.
Result<void> LoadWatches(Connection& c, WebhookRecord& w) {
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c.Prepare("SELECT kind, name FROM webhook_watches WHERE webhook_id = ? ORDER BY pos"));
  s.Bind(1, w.id);
  w.watched.clear();
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return {};
    w.watched.push_back({s.Text(0), s.Text(1)});
  }
}

Result<void> WriteWatches(Connection& c, const WebhookRecord& w) {
  HANGAR_ASSIGN_OR_RETURN(auto del, c.Prepare("DELETE FROM webhook_watches WHERE webhook_id = ?"));
  HANGAR_TRY(del.Bind(1, w.id).Run());
  int64_t pos = 0;
  for (const auto& x : w.watched) {
    HANGAR_ASSIGN_OR_RETURN(
        auto ins, c.Prepare("INSERT INTO webhook_watches (webhook_id, pos, kind, name) VALUES "
                            "(?, ?, ?, ?) ON CONFLICT (webhook_id, kind, name) DO NOTHING"));
    HANGAR_TRY(ins.Bind(1, w.id).Bind(2, pos++).Bind(3, x.kind).Bind(4, x.name).Run());
  }
  return {};
}

}  // namespace

Result<void> SqlWebhookStore::Create(const WebhookRecord& w, int max_per_owner) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto n, c->Prepare("SELECT COUNT(*) FROM webhooks WHERE owner_id = ?"));
    n.Bind(1, w.owner_id);
    HANGAR_TRY(n.Step());
    if (n.Int(0) >= max_per_owner) {
      return MakeError(ErrorCode::Conflict, "you have " + std::to_string(max_per_owner) +
                                                " webhooks already, the most one may have");
    }
    // INSERT … SELECT: an owner gone meanwhile inserts nothing (no FK error).
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("INSERT INTO webhooks (id, owner_id, url, secret, domains, disabled, "
                           "created_at, updated_at) SELECT ?, u.id, ?, ?, ?, ?, ?, ? FROM users u "
                           "WHERE u.id = ?"));
    HANGAR_TRY(s.Bind(1, w.id)
                   .Bind(2, w.url)
                   .Bind(3, w.secret)
                   .Bind(4, JoinDomains(w.domains))
                   .Bind(5, int64_t{w.disabled})
                   .Bind(6, w.created_at)
                   .Bind(7, w.updated_at)
                   .Bind(8, w.owner_id)
                   .Run());
    if (c->Changes() == 0) {
      return MakeError(ErrorCode::NotFound, "user #" + std::to_string(w.owner_id) + " not found");
    }
    return WriteWatches(*c, w);
  });
}

Result<WebhookRecord> SqlWebhookStore::Get(const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return InReadTransaction(*c, [&]() -> Result<WebhookRecord> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare(std::string("SELECT ") + kColumns + "FROM webhooks w WHERE w.id = ?"));
    s.Bind(1, id);
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return MakeError(ErrorCode::NotFound, "webhook " + id + " not found");
    WebhookRecord w = ReadRow(s);
    HANGAR_TRY(LoadWatches(*c, w));
    return w;
  });
}

Result<std::vector<WebhookRecord>> SqlWebhookStore::ListByOwner(int64_t owner_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return InReadTransaction(*c, [&]() -> Result<std::vector<WebhookRecord>> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare(std::string("SELECT ") + kColumns +
                           "FROM webhooks w WHERE w.owner_id = ? ORDER BY w.created_at, w.id"));
    s.Bind(1, owner_id);
    std::vector<WebhookRecord> out;
    for (;;) {
      HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back(ReadRow(s));
    }
    for (auto& w : out) HANGAR_TRY(LoadWatches(*c, w));
    return out;
  });
}

Result<void> SqlWebhookStore::Update(const WebhookRecord& w) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE webhooks SET url = ?, secret = ?, domains "
                                               "= ?, disabled = ?, updated_at = ? WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, w.url)
                   .Bind(2, w.secret)
                   .Bind(3, JoinDomains(w.domains))
                   .Bind(4, int64_t{w.disabled})
                   .Bind(5, w.updated_at)
                   .Bind(6, w.id)
                   .Run());
    if (c->Changes() == 0) return MakeError(ErrorCode::NotFound, "webhook " + w.id + " not found");
    return WriteWatches(*c, w);
  });
}

Result<bool> SqlWebhookStore::Delete(const std::string& id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    // The children first: no reliance on the connection's foreign-key setting.
    for (const char* sql : {"DELETE FROM webhook_watches WHERE webhook_id = ?",
                            "DELETE FROM webhook_deliveries WHERE webhook_id = ?"}) {
      HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
      HANGAR_TRY(s.Bind(1, id).Run());
    }
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM webhooks WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, id).Run());
    return c->Changes() > 0;
  });
}

Result<std::vector<WebhookRecord>> SqlWebhookStore::Matching(const WebhookTarget& t,
                                                             const std::string& domain) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return InReadTransaction(*c, [&]() -> Result<std::vector<WebhookRecord>> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare(std::string("SELECT DISTINCT ") + kColumns +
                           "FROM webhooks w JOIN webhook_watches x ON x.webhook_id = w.id WHERE "
                           "w.disabled = 0 AND ((x.kind = ? AND x.name = ?) OR (x.kind IN "
                           "('user', 'org') AND x.name = ?)) ORDER BY w.id"));
    s.Bind(1, t.kind).Bind(2, t.full_name).Bind(3, t.ns);
    std::vector<WebhookRecord> out;
    for (;;) {
      HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      WebhookRecord w = ReadRow(s);
      if (std::find(w.domains.begin(), w.domains.end(), domain) != w.domains.end()) {
        out.push_back(std::move(w));
      }
    }
    return out;
  });
}

Result<void> SqlWebhookStore::AddDelivery(const WebhookDelivery& d, int keep) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("INSERT INTO webhook_deliveries (webhook_id, event, repo, attempt, "
                           "status, error, latency_ms, created_at) SELECT w.id, ?, ?, ?, ?, ?, "
                           "?, ? FROM webhooks w WHERE w.id = ?"));
    HANGAR_TRY(s.Bind(1, d.event)
                   .Bind(2, d.repo)
                   .Bind(3, int64_t{d.attempt})
                   .Bind(4, int64_t{d.status})
                   .Bind(5, d.error)
                   .Bind(6, d.latency_ms)
                   .Bind(7, d.created_at)
                   .Bind(8, d.webhook_id)
                   .Run());
    HANGAR_ASSIGN_OR_RETURN(
        auto trim,
        c->Prepare("DELETE FROM webhook_deliveries WHERE webhook_id = ? AND id <= (SELECT id FROM "
                   "webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)"));
    return trim.Bind(1, d.webhook_id).Bind(2, d.webhook_id).Bind(3, int64_t{keep}).Run();
  });
}

Result<std::vector<WebhookDelivery>> SqlWebhookStore::Deliveries(const std::string& webhook_id,
                                                                 int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT id, webhook_id, event, repo, attempt, status, error, latency_ms, "
                         "created_at FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id "
                         "DESC LIMIT ?"));
  s.Bind(1, webhook_id).Bind(2, int64_t{limit});
  std::vector<WebhookDelivery> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    WebhookDelivery d;
    d.id = s.Int(0);
    d.webhook_id = s.Text(1);
    d.event = s.Text(2);
    d.repo = s.Text(3);
    d.attempt = static_cast<int>(s.Int(4));
    d.status = static_cast<int>(s.Int(5));
    d.error = s.Text(6);
    d.latency_ms = s.Int(7);
    d.created_at = s.Int(8);
    out.push_back(std::move(d));
  }
}

Result<std::optional<std::map<std::string, std::string>>> SqlWebhookStore::RefHeads(
    int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  using Heads = std::optional<std::map<std::string, std::string>>;
  return InReadTransaction(*c, [&]() -> Result<Heads> {
    HANGAR_ASSIGN_OR_RETURN(auto unknown,
                            c->Prepare("SELECT 1 FROM ref_heads_unknown WHERE repo_id = ?"));
    unknown.Bind(1, repo_id);
    HANGAR_ASSIGN_OR_RETURN(bool is_unknown, unknown.Step());
    if (is_unknown) return Heads();
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT ref, oid FROM ref_heads WHERE repo_id = ?"));
    s.Bind(1, repo_id);
    std::map<std::string, std::string> heads;
    for (;;) {
      HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return Heads(std::move(heads));
      heads.emplace(s.Text(0), s.Text(1));
    }
  });
}

Result<void> SqlWebhookStore::SetRefHeads(int64_t repo_id,
                                          const std::map<std::string, std::string>& heads) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    for (const char* sql : {"DELETE FROM ref_heads WHERE repo_id = ?",
                            "DELETE FROM ref_heads_unknown WHERE repo_id = ?"}) {
      HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
      HANGAR_TRY(s.Bind(1, repo_id).Run());
    }
    for (const auto& [ref, oid] : heads) {
      // INSERT … SELECT: a repo deleted meanwhile gets no rows.
      HANGAR_ASSIGN_OR_RETURN(
          auto ins, c->Prepare("INSERT INTO ref_heads (repo_id, ref, oid) SELECT r.id, ?, ? FROM "
                               "repos r WHERE r.id = ?"));
      HANGAR_TRY(ins.Bind(1, ref).Bind(2, oid).Bind(3, repo_id).Run());
    }
    return {};
  });
}

Result<bool> SqlWebhookStore::SwapRefHead(int64_t repo_id, const std::string& ref,
                                          const std::string& expected, const std::string& value,
                                          std::string* current) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    HANGAR_ASSIGN_OR_RETURN(auto s,
                            c->Prepare("SELECT oid FROM ref_heads WHERE repo_id = ? AND ref = ?"));
    s.Bind(1, repo_id).Bind(2, ref);
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    std::string now = row ? s.Text(0) : "";
    if (now != expected) {
      if (current) *current = now;
      return false;
    }
    if (value.empty()) {
      HANGAR_ASSIGN_OR_RETURN(auto del,
                              c->Prepare("DELETE FROM ref_heads WHERE repo_id = ? AND ref = ?"));
      HANGAR_TRY(del.Bind(1, repo_id).Bind(2, ref).Run());
    } else if (row) {
      HANGAR_ASSIGN_OR_RETURN(
          auto up, c->Prepare("UPDATE ref_heads SET oid = ? WHERE repo_id = ? AND ref = ?"));
      HANGAR_TRY(up.Bind(1, value).Bind(2, repo_id).Bind(3, ref).Run());
    } else {
      HANGAR_ASSIGN_OR_RETURN(
          auto ins, c->Prepare("INSERT INTO ref_heads (repo_id, ref, oid) SELECT r.id, ?, ? FROM "
                               "repos r WHERE r.id = ?"));
      HANGAR_TRY(ins.Bind(1, ref).Bind(2, value).Bind(3, repo_id).Run());
    }
    return true;
  });
}

}  // namespace hangar::db
