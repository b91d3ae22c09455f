#include "services/repo/card_index.h"

#include <boost/json.hpp>

#include <set>

#include "core/log.h"
#include "core/util.h"

namespace hangar::services {

namespace json = boost::json;

namespace {

// `v` without control characters and surrounding spaces; "" when it is too long.
std::string CleanValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) out += c;
  }
  size_t b = out.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  out = out.substr(b, out.find_last_not_of(' ') - b + 1);
  return out.size() <= kMaxCardTagBytes ? out : "";
}

// A scalar card value as text: strings as they are, numbers printed; else "".
std::string ScalarText(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_int64()) return std::to_string(v.as_int64());
  if (v.is_uint64()) return std::to_string(v.as_uint64());
  if (v.is_double()) return json::serialize(v);
  return "";
}

// Items of one list field looked at; more than can become tags, fewer than a hostile card.
constexpr size_t kMaxListItems = 4 * kMaxCardTags;

// The values of field `key`: one for a scalar, each scalar of a list.
std::vector<std::string> Values(const json::object& card, std::string_view key) {
  std::vector<std::string> out;
  const json::value* v = card.if_contains(key);
  if (!v) return out;
  if (v->is_array()) {
    for (const auto& item : v->as_array()) {
      if (out.size() >= kMaxListItems) break;
      out.push_back(ScalarText(item));
    }
  } else {
    out.push_back(ScalarText(*v));
  }
  return out;
}

std::string First(const json::object& card, std::string_view key) {
  auto values = Values(card, key);
  return values.empty() ? "" : CleanValue(values.front());
}

class TagList {
 public:
  explicit TagList(std::vector<std::string>& out) : out_(out) {}
  void Add(std::string_view prefix, std::string_view value) {
    std::string tag = CleanValue(value);
    if (tag.empty() || out_.size() >= kMaxCardTags) return;
    tag.insert(0, prefix);
    if (tag.size() > kMaxCardTagBytes || !seen_.insert(tag).second) return;
    out_.push_back(std::move(tag));
  }
  void AddAll(const json::object& card, std::string_view key, std::string_view prefix) {
    for (const auto& v : Values(card, key)) Add(prefix, v);
  }

 private:
  std::vector<std::string>& out_;
  std::set<std::string> seen_;
};

}  // namespace

CardMeta ExtractCardMeta(const json::object& card, RepoType type) {
  CardMeta meta;
  meta.library = First(card, "library_name");
  meta.pipeline = First(card, "pipeline_tag");
  TagList tags(meta.tags);
  tags.Add("", meta.library);
  tags.AddAll(card, "tags", "");
  if (type == RepoType::Dataset) {
    for (const char* key : {"task_categories", "task_ids", "language", "multilinguality",
                            "size_categories", "annotations_creators"}) {
      tags.AddAll(card, key, std::string(key) + ":");
    }
  } else {
    tags.Add("", meta.pipeline);
    tags.AddAll(card, "language", "");
  }
  tags.AddAll(card, "datasets", "dataset:");
  tags.AddAll(card, "base_model", "base_model:");
  tags.AddAll(card, "license", "license:");
  return meta;
}

DownloadCounter::DownloadCounter(db::RepoStore& repos, Options options)
    : repos_(repos), options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return NowUnix(); };
  if (options_.flush_interval.count() > 0) thread_ = std::thread([this] { Run(); });
}

DownloadCounter::~DownloadCounter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (auto flushed = Flush(); !flushed) {
    Log("services")
        ->warn("downloads: {} counts lost at shutdown: {}", Pending(), flushed.error().message);
  }
}

void DownloadCounter::Count(int64_t repo_id) {
  int64_t day = options_.clock() / 86400;
  std::lock_guard lock(mu_);
  ++pending_[Key{repo_id, day}];
}

int64_t DownloadCounter::Pending() const {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (const auto& [key, count] : pending_) n += count;
  return n;
}

Result<void> DownloadCounter::Flush() {
  std::lock_guard flushing(flush_mu_);
  std::map<Key, int64_t> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(pending_);
  }
  Result<void> result;
  std::map<Key, int64_t> failed;
  for (const auto& [key, count] : batch) {
    auto added = repos_.AddDownloads(key.first, key.second, count);
    if (!added) {
      if (result) result = std::move(added).error();
      failed.emplace(key, count);
    }
  }
  if (!failed.empty()) {
    std::lock_guard lock(mu_);
    for (const auto& [key, count] : failed) pending_[key] += count;
  }
  if (failed.size() < batch.size() && options_.after_flush) options_.after_flush();
  return result;
}

void DownloadCounter::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.flush_interval, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    if (auto flushed = Flush(); !flushed) {
      Log("services")
          ->warn("downloads: flush failed, kept for the next one: {}", flushed.error().message);
    }
    lock.lock();
  }
}

}  // namespace hangar::services
