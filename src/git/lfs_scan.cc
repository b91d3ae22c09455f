#include "git/lfs_scan.h"

#include <charconv>
#include <unordered_set>

#include "core/util.h"
#include "git/history_internal.h"

namespace hangar::git {

namespace {

using Clock = std::chrono::steady_clock;
using history_internal::Failed;
using history_internal::Git;

// A pointer file is at least this long ("version …\noid sha256:<64>\nsize 0\n").
constexpr uint64_t kMinPointerSize = 100;
// rev-list lists each object once as 41 bytes: this holds some six million of them.
constexpr size_t kMaxListing = 256 << 20;

// Runs git `subcommand` in `repo` with `input` on stdin, within what is left until
// `deadline`, and wants exit 0. Returns stdout.
Result<std::string> RunWithInput(const std::string& repo, std::string_view subcommand,
                                 std::initializer_list<std::string_view> args,
                                 std::string_view input, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0)
    return MakeError(ErrorCode::Unavailable, "the scan for LFS objects timed out");
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, subcommand));
  for (auto a : args) cmd.Arg(a);
  cmd.Timeout(left).MaxOutput(kMaxListing);
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run(input));
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  return std::move(out.stdout_data);
}

Error Malformed(std::string_view what) {
  return MakeError(ErrorCode::Internal, "unexpected output of git " + std::string(what));
}

}  // namespace

Result<std::vector<Pointer>> PointersBetween(const std::string& repo, const std::vector<Oid>& tips,
                                             const std::vector<Oid>& exclude,
                                             std::chrono::milliseconds timeout) {
  std::vector<Pointer> found;
  if (tips.empty()) return found;
  const auto deadline = Clock::now() + timeout;
  // Revisions on stdin ("^" excludes): no argument list to outgrow, whatever the refs.
  std::string revs;
  for (const auto& t : tips) revs += t.Hex() + "\n";
  for (const auto& e : exclude) revs += "^" + e.Hex() + "\n";
  HANGAR_ASSIGN_OR_RETURN(
      std::string listed,
      RunWithInput(repo, "rev-list",
                   {"--objects", "--no-object-names",
                    "--filter=blob:limit=" + std::to_string(kMaxPointerSize - 1), "--stdin"},
                   revs, deadline));
  // Which of them are blobs of a pointer's size.
  HANGAR_ASSIGN_OR_RETURN(
      std::string checked,
      RunWithInput(repo, "cat-file", {"--batch-check=%(objecttype) %(objectname) %(objectsize)"},
                   listed, deadline));
  std::string small;
  size_t pos = 0;
  while (pos < checked.size()) {
    std::string_view line = NextLine(checked, pos);
    if (line.rfind("blob ", 0) != 0) continue;
    std::string_view rest = line.substr(5);
    size_t space = rest.find(' ');
    if (space == rest.npos) return Malformed("cat-file --batch-check");
    uint64_t size = 0;
    std::string_view digits = rest.substr(space + 1);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), size).ec != std::errc())
      return Malformed("cat-file --batch-check");
    if (size >= kMinPointerSize && size < kMaxPointerSize) {
      small.append(rest.substr(0, space));
      small.push_back('\n');
    }
  }
  if (small.empty()) return found;
  HANGAR_ASSIGN_OR_RETURN(std::string contents,
                          RunWithInput(repo, "cat-file", {"--batch"}, small, deadline));
  // "<oid> blob <size>\n<size bytes>\n" per object.
  std::unordered_set<std::string> seen;
  pos = 0;
  while (pos < contents.size()) {
    size_t eol = contents.find('\n', pos);
    if (eol == std::string::npos) return Malformed("cat-file --batch");
    std::string_view head(contents.data() + pos, eol - pos);
    size_t sp = head.rfind(' ');
    uint64_t size = 0;
    if (sp == head.npos ||
        std::from_chars(head.data() + sp + 1, head.data() + head.size(), size).ec != std::errc() ||
        eol + 1 + size > contents.size()) {
      return Malformed("cat-file --batch");
    }
    auto pointer = ParsePointer(std::string_view(contents.data() + eol + 1, size));
    if (pointer && seen.insert(pointer->oid.Hex()).second) found.push_back(*pointer);
    pos = eol + 1 + size + 1;
  }
  return found;
}

}  // namespace hangar::git
