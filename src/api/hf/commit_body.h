#pragma once
// The NDJSON body of an HF commit (hf-api.md §7.2), parsed as it arrives: each line goes
// through Boost.JSON's event parser, and a file's base64 content is decoded as its string
// arrives, so a commit costs its decoded files in memory, not two or three copies of its
// text (issue 13: concurrent 60 MiB commits).

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "core/byte_source.h"
#include "core/result.h"
#include "services/content/commit_service.h"

namespace hangar::api {

// Largest NDJSON commit body: inline files are base64 in it (LFS files travel separately).
inline constexpr uint64_t kMaxCommitBody = 64 * 1024 * 1024;

// A header line first, then one line per operation (file, lfsFile, copyFile, deletedFile,
// deletedFolder); blank lines and CR line ends are skipped; members other than those
// §7.2 names are ignored. Paths are not validated here (CommitService does). Feed() takes
// the body in pieces of any size. Errors: BadRequest naming the line and the problem.
class CommitBodyParser {
 public:
  // `size`: the body's length when known, to size decoded files before they arrive.
  explicit CommitBodyParser(std::optional<uint64_t> size = std::nullopt);
  ~CommitBodyParser();
  CommitBodyParser(const CommitBodyParser&) = delete;
  CommitBodyParser& operator=(const CommitBodyParser&) = delete;

  // The next bytes of the body.
  Result<void> Feed(std::string_view bytes);
  // Once the body has ended: the commit it describes. Errors: BadRequest (a line left
  // unfinished is parsed first; no header line).
  Result<services::CommitInput> Finish() &&;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The whole body at once, through CommitBodyParser.
Result<services::CommitInput> ParseCommitBody(std::string_view ndjson);

// `body` read to its end through CommitBodyParser. Errors: PayloadTooLarge past
// kMaxCommitBody; those of CommitBodyParser and of reading.
Result<services::CommitInput> ReadCommitBody(ByteSource& body);

}  // namespace hangar::api
