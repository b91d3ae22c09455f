#pragma once
// A split's full-text index (dataset-viewer.md §4.5, issue 15): for each term (text_terms.h)
// the rows holding it, with the term's count in the row and the row's length in terms, so
// /search ranks by BM25 reading only the postings of the query's terms, never the split.
//
// On disk, one directory, written whole and then renamed into place (an index is complete
// or absent):
//   meta      JSON: {"version": 1, "docs": rows added, "terms_total": Σ row lengths,
//             "rows": last row + 1, "buckets": B, "language": stemmer}
//   b<i>      for i < B (a power of two), the terms whose FNV-1a 64 hash ends in i:
//             "HSI1", varint term count, then per term in byte order: varint length,
//             bytes, varint df (rows holding it), varint offset of its postings; then the
//             postings: per row in ascending order varint (row − previous row), varint tf,
//             varint row length.
// A bucket is a few MiB at most (B grows with the split), read whole by a lookup.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace hangar::services::viewer {

// One row holding a term.
struct Posting {
  uint64_t row = 0;     // index in the split
  uint32_t tf = 0;      // how often the term occurs in the row
  uint32_t length = 0;  // the row's terms, all of them
};

// Builds an index. Rows are added in ascending order; postings are spilled to one file per
// bucket as they come (memory stays under `flush_bytes`), and Finish sorts each bucket.
class SearchIndexWriter {
 public:
  // Starts writing into `dir`, which must not exist (its parent must). `buckets` is
  // rounded up to a power of two in [1, 65536]. Errors: Internal (the directory).
  static Result<std::unique_ptr<SearchIndexWriter>> Create(std::string dir, uint32_t buckets,
                                                           size_t flush_bytes = 32u << 20);
  ~SearchIndexWriter();

  // Adds row `row` (greater than the previous one) holding `terms` (any order; a repeat
  // counts). Sorts `terms` in place. Errors: Internal (a write), BadRequest (rows out of
  // order).
  Result<void> Add(uint64_t row, std::vector<std::string>& terms);
  // Writes every bucket in its final form and then `meta`. Errors: Internal.
  Result<void> Finish(std::string_view language);

 private:
  SearchIndexWriter(std::string dir, uint32_t buckets, size_t flush_bytes);
  Result<void> Flush();
  Result<void> FinishBucket(uint32_t bucket);

  std::string dir_;
  uint32_t buckets_;
  size_t flush_bytes_;
  std::vector<std::string> pending_;  // per bucket: raw records not yet appended to disk
  size_t pending_bytes_ = 0;
  uint64_t docs_ = 0, terms_total_ = 0;
  bool any_row_ = false;
  uint64_t last_row_ = 0;
};

// The postings of one term, decoded as they are read. Holds its bucket's bytes.
class PostingList {
 public:
  // Rows holding the term.
  uint64_t df() const { return df_; }
  // The next posting (rows ascending); false at the end. Errors: Internal (damaged).
  Result<bool> Next(Posting& out);

 private:
  friend class SearchIndex;
  std::shared_ptr<const std::string> bucket_;
  std::string path_;
  size_t pos_ = 0;
  uint64_t df_ = 0, left_ = 0, row_ = 0, rows_end_ = 0;
};

// A complete index, opened for lookups. Thread-safe (every lookup reads its bucket anew).
class SearchIndex {
 public:
  // Errors: NotFound (no index in `dir`), Internal (an unreadable or foreign meta).
  static Result<SearchIndex> Open(const std::string& dir);

  // The rows holding `term` (none when no row does). Errors: Internal (a damaged bucket).
  Result<PostingList> Find(std::string_view term) const;
  // All of Find's postings at once (tests, small lists).
  Result<std::vector<Posting>> Lookup(std::string_view term) const;

  uint64_t docs() const { return docs_; }
  double average_length() const { return docs_ ? double(terms_total_) / double(docs_) : 0; }
  const std::string& language() const { return language_; }

 private:
  std::string dir_;
  uint64_t docs_ = 0, terms_total_ = 0, rows_ = 0;
  uint32_t buckets_ = 1;
  std::string language_;
};

// The bucket of `term` among `buckets` (a power of two): FNV-1a 64 of its bytes, low bits.
uint32_t TermBucket(std::string_view term, uint32_t buckets);

// A page of search results ranked by BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5)
// / (df + 0.5)), as DuckDB's full-text extension scores): rows holding any of the terms,
// by score descending, ties by row ascending (§4.5).
struct RankedRows {
  std::vector<uint64_t> rows;  // the page: at most `length` rows from rank `offset`
  uint64_t total = 0;          // rows holding any of the terms
};
// `terms`: the query's terms (repeats ignored). The lists are merged by row as they are
// decoded, keeping only the best offset + length rows: memory for the page, not the
// matches. Errors: Find's.
Result<RankedRows> RankBm25(const SearchIndex& index, std::vector<std::string> terms,
                            uint64_t offset, uint64_t length);

}  // namespace hangar::services::viewer
