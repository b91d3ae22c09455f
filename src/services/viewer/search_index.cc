// SearchIndexWriter, SearchIndex and RankBm25 (search_index.h).

#include "services/viewer/search_index.h"

#include <fcntl.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

namespace hangar::services::viewer {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::string_view kBucketMagic = "HSI1";
constexpr int kVersion = 1;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(uint8_t(v) | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}

// Reads a varint at `pos` of `data`, moving `pos` past it; false when cut short.
bool GetVarint(std::string_view data, size_t& pos, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && pos < data.size(); shift += 7) {
    auto byte = uint8_t(data[pos++]);
    v |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

bool GetBytes(std::string_view data, size_t& pos, std::string_view& out) {
  uint64_t n = 0;
  if (!GetVarint(data, pos, n) || n > data.size() - pos) return false;
  out = data.substr(pos, n);
  pos += n;
  return true;
}

std::string BucketPath(const std::string& dir, uint32_t bucket, bool raw = false) {
  return dir + (raw ? "/raw" : "/b") + std::to_string(bucket);
}

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::NotFound, "cannot read " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return MakeError(ErrorCode::Internal, "cannot read " + path);
  return data;
}

// Writes `data` to `path` (appended, or as the whole file); `sync`: durable before it
// returns (the final files, which a rename then publishes).
Result<void> WriteWhole(const std::string& path, std::string_view data, bool append, bool sync) {
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0) return MakeError(ErrorCode::Internal, "cannot write " + path);
  bool ok = true;
  for (size_t done = 0; ok && done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    done += ok ? size_t(n) : 0;
  }
  if (ok && sync) ok = ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok) return MakeError(ErrorCode::Internal, "cannot write " + path);
  return {};
}

Error Damaged(const std::string& path) {
  return MakeError(ErrorCode::Internal, "search index bucket " + path + " is damaged");
}

}  // namespace

uint32_t TermBucket(std::string_view term, uint32_t buckets) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : term) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return uint32_t(h & (buckets - 1));
}

SearchIndexWriter::SearchIndexWriter(std::string dir, uint32_t buckets, size_t flush_bytes)
    : dir_(std::move(dir)), buckets_(buckets), flush_bytes_(flush_bytes), pending_(buckets) {}

SearchIndexWriter::~SearchIndexWriter() = default;

Result<std::unique_ptr<SearchIndexWriter>> SearchIndexWriter::Create(std::string dir,
                                                                     uint32_t buckets,
                                                                     size_t flush_bytes) {
  buckets = std::bit_ceil(std::clamp<uint32_t>(buckets, 1, 65536));
  std::error_code ec;
  if (!fs::create_directory(dir, ec))
    return MakeError(ErrorCode::Internal, "cannot create " + dir + ": " + ec.message());
  return std::unique_ptr<SearchIndexWriter>(
      new SearchIndexWriter(std::move(dir), buckets, flush_bytes));
}

Result<void> SearchIndexWriter::Add(uint64_t row, std::vector<std::string>& terms) {
  if (any_row_ && row <= last_row_)
    return MakeError(ErrorCode::BadRequest, "search index rows must come in ascending order");
  any_row_ = true;
  last_row_ = row;
  ++docs_;
  terms_total_ += terms.size();
  std::sort(terms.begin(), terms.end());
  for (size_t i = 0; i < terms.size();) {
    size_t j = i + 1;
    while (j < terms.size() && terms[j] == terms[i]) ++j;
    std::string& out = pending_[TermBucket(terms[i], buckets_)];
    size_t before = out.size();
    PutVarint(out, terms[i].size());
    out += terms[i];
    PutVarint(out, row);
    PutVarint(out, j - i);
    PutVarint(out, terms.size());
    pending_bytes_ += out.size() - before;
    i = j;
  }
  if (pending_bytes_ >= flush_bytes_) return Flush();
  return {};
}

Result<void> SearchIndexWriter::Flush() {
  for (uint32_t b = 0; b < buckets_; ++b) {
    if (pending_[b].empty()) continue;
    HANGAR_TRY(WriteWhole(BucketPath(dir_, b, true), pending_[b], true, false));
    pending_[b].clear();
    pending_[b].shrink_to_fit();
  }
  pending_bytes_ = 0;
  return {};
}

// Groups one bucket's raw records by term (rows stay ascending: they were added in order)
// and writes the final file.
Result<void> SearchIndexWriter::FinishBucket(uint32_t bucket) {
  std::string raw_path = BucketPath(dir_, bucket, true);
  std::string raw;
  if (fs::exists(raw_path)) {
    HANGAR_ASSIGN_OR_RETURN(raw, ReadWhole(raw_path));
  }
  struct TermPostings {
    uint64_t df = 0, last_row = 0;
    std::string postings;
  };
  std::map<std::string_view, TermPostings> terms;
  for (size_t pos = 0; pos < raw.size();) {
    std::string_view term;
    uint64_t row = 0, tf = 0, length = 0;
    if (!GetBytes(raw, pos, term) || !GetVarint(raw, pos, row) || !GetVarint(raw, pos, tf) ||
        !GetVarint(raw, pos, length))
      return Damaged(raw_path);
    TermPostings& t = terms[term];
    PutVarint(t.postings, row - t.last_row);
    PutVarint(t.postings, tf);
    PutVarint(t.postings, length);
    t.last_row = row;
    ++t.df;
  }
  std::string out(kBucketMagic);
  PutVarint(out, terms.size());
  uint64_t offset = 0;
  for (const auto& [term, t] : terms) {
    PutVarint(out, term.size());
    out += term;
    PutVarint(out, t.df);
    PutVarint(out, offset);
    offset += t.postings.size();
  }
  for (const auto& kv : terms) out += kv.second.postings;
  HANGAR_TRY(WriteWhole(BucketPath(dir_, bucket), out, false, true));
  std::error_code ec;
  fs::remove(raw_path, ec);
  return {};
}

Result<void> SearchIndexWriter::Finish(std::string_view language) {
  HANGAR_TRY(Flush());
  for (uint32_t b = 0; b < buckets_; ++b) HANGAR_TRY(FinishBucket(b));
  json::object meta{{"version", kVersion},         {"docs", docs_},
                    {"terms_total", terms_total_}, {"rows", any_row_ ? last_row_ + 1 : 0},
                    {"buckets", buckets_},         {"language", language}};
  return WriteWhole(dir_ + "/meta", json::serialize(meta), false, true);
}

Result<SearchIndex> SearchIndex::Open(const std::string& dir) {
  HANGAR_ASSIGN_OR_RETURN(std::string text, ReadWhole(dir + "/meta"));
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  const json::object* meta = ec ? nullptr : v.if_object();
  auto number = [&](std::string_view key) -> std::optional<uint64_t> {
    const json::value* x = meta ? meta->if_contains(key) : nullptr;
    if (!x || !x->is_number()) return std::nullopt;
    return x->to_number<uint64_t>(ec);
  };
  auto version = number("version"), docs = number("docs"), total = number("terms_total"),
       buckets = number("buckets"), rows = number("rows");
  const json::value* language = meta ? meta->if_contains("language") : nullptr;
  if (!version || *version != kVersion || !docs || !total || !rows || !buckets || *buckets == 0 ||
      *buckets > 65536 || !std::has_single_bit(*buckets) || !language || !language->is_string())
    return MakeError(ErrorCode::Internal, "search index " + dir + " has a foreign meta file");
  SearchIndex index;
  index.dir_ = dir;
  index.docs_ = *docs;
  index.terms_total_ = *total;
  index.rows_ = *rows;
  index.buckets_ = uint32_t(*buckets);
  index.language_ = std::string(language->as_string());
  return index;
}

Result<PostingList> SearchIndex::Find(std::string_view term) const {
  PostingList list;
  list.path_ = BucketPath(dir_, TermBucket(term, buckets_));
  auto data = ReadWhole(list.path_);
  if (!data) return Damaged(list.path_);
  list.bucket_ = std::make_shared<const std::string>(std::move(*data));
  std::string_view d(*list.bucket_);
  if (!d.starts_with(kBucketMagic)) return Damaged(list.path_);
  size_t pos = kBucketMagic.size();
  uint64_t count = 0;
  if (!GetVarint(d, pos, count)) return Damaged(list.path_);
  std::optional<std::pair<uint64_t, uint64_t>> found;  // df, offset
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view t;
    uint64_t df = 0, offset = 0;
    if (!GetBytes(d, pos, t) || !GetVarint(d, pos, df) || !GetVarint(d, pos, offset))
      return Damaged(list.path_);
    if (t == term) found = {df, offset};
  }
  if (!found) return list;
  if (found->second > d.size() - pos) return Damaged(list.path_);
  list.pos_ = pos + found->second;
  list.df_ = list.left_ = found->first;
  list.rows_end_ = rows_;
  return list;
}

Result<bool> PostingList::Next(Posting& out) {
  if (left_ == 0) return false;
  std::string_view d(*bucket_);
  uint64_t delta = 0, tf = 0, length = 0;
  if (!GetVarint(d, pos_, delta) || !GetVarint(d, pos_, tf) || !GetVarint(d, pos_, length))
    return Damaged(path_);
  // Rows ascend from the first and stay inside the split: anything else is damage.
  if ((delta == 0 && left_ != df_) || row_ + delta >= rows_end_ || tf == 0) return Damaged(path_);
  --left_;
  row_ += delta;
  out = Posting{row_, uint32_t(tf), uint32_t(length)};
  return true;
}

Result<std::vector<Posting>> SearchIndex::Lookup(std::string_view term) const {
  HANGAR_ASSIGN_OR_RETURN(PostingList list, Find(term));
  std::vector<Posting> out;
  out.reserve(list.df());
  Posting p;
  while (true) {
    HANGAR_ASSIGN_OR_RETURN(bool more, list.Next(p));
    if (!more) break;
    out.push_back(p);
  }
  return out;
}

Result<RankedRows> RankBm25(const SearchIndex& index, std::vector<std::string> terms,
                            uint64_t offset, uint64_t length) {
  constexpr double k1 = 1.2, b = 0.75;
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  const double n = double(index.docs()), average = std::max(index.average_length(), 1e-9);
  // One cursor a term, at its next posting; the scores of a row are added in term order.
  struct Cursor {
    PostingList list;
    double idf = 0;
    Posting at;
    bool live = false;
  };
  std::vector<Cursor> cursors;
  for (const auto& term : terms) {
    HANGAR_ASSIGN_OR_RETURN(PostingList list, index.Find(term));
    if (list.df() == 0) continue;
    double df = double(list.df());
    Cursor& c =
        cursors.emplace_back(Cursor{std::move(list), std::log(1 + (n - df + 0.5) / (df + 0.5))});
    HANGAR_ASSIGN_OR_RETURN(c.live, c.list.Next(c.at));
  }
  // The best `keep` so far, worst on top (a row scored lower, or equal and later, is worse).
  using Scored = std::pair<double, uint64_t>;
  auto better = [](const Scored& x, const Scored& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  };
  std::vector<Scored> best;
  const uint64_t keep = offset + length;
  RankedRows out;
  while (true) {
    uint64_t row = UINT64_MAX;
    for (const auto& c : cursors)
      if (c.live) row = std::min(row, c.at.row);
    if (row == UINT64_MAX) break;
    double score = 0;
    for (auto& c : cursors) {
      if (!c.live || c.at.row != row) continue;
      double tf = c.at.tf;
      score += c.idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * c.at.length / average));
      HANGAR_ASSIGN_OR_RETURN(c.live, c.list.Next(c.at));
    }
    ++out.total;
    if (keep == 0) continue;
    Scored s{score, row};
    if (best.size() < keep) {
      best.push_back(s);
      std::push_heap(best.begin(), best.end(), better);
    } else if (better(s, best.front())) {
      std::pop_heap(best.begin(), best.end(), better);
      best.back() = s;
      std::push_heap(best.begin(), best.end(), better);
    }
  }
  std::sort_heap(best.begin(), best.end(), better);
  for (size_t i = offset; i < best.size(); ++i) out.rows.push_back(best[i].second);
  return out;
}

}  // namespace hangar::services::viewer
