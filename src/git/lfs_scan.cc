#include "git/lfs_scan.h"

#include <charconv>
#include <unordered_map>
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

// The LFS pointers among `objects` (object ids, one per line; other kinds of objects and
// blobs of another size are skipped), each with its blob, in the order given.
Result<std::vector<std::pair<Oid, Pointer>>> ReadPointers(const std::string& repo,
                                                          const std::string& objects,
                                                          Clock::time_point deadline) {
  std::vector<std::pair<Oid, Pointer>> found;
  HANGAR_ASSIGN_OR_RETURN(
      std::string checked,
      RunWithInput(repo, "cat-file", {"--batch-check=%(objecttype) %(objectname) %(objectsize)"},
                   objects, deadline));
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
    auto blob = Oid::ParseHex(head.substr(0, head.find(' ')));
    auto pointer = ParsePointer(std::string_view(contents.data() + eol + 1, size));
    if (blob && pointer) found.emplace_back(*blob, *pointer);
    pos = eol + 1 + size + 1;
  }
  return found;
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
  HANGAR_ASSIGN_OR_RETURN(auto pointers, ReadPointers(repo, listed, deadline));
  std::unordered_set<std::string> seen;
  for (auto& [blob, pointer] : pointers) {
    if (seen.insert(pointer.oid.Hex()).second) found.push_back(pointer);
  }
  return found;
}

Result<std::vector<LfsAppearance>> LfsAppearances(const std::string& repo,
                                                  const std::vector<Oid>& tips,
                                                  std::chrono::milliseconds timeout) {
  std::vector<LfsAppearance> out;
  if (tips.empty()) return out;
  const auto deadline = Clock::now() + timeout;
  std::string revs;
  for (const auto& t : tips) revs += t.Hex() + "\n";
  // Per commit "\x01<id> <time>\0" then its raw changes ":<modes> <old> <new> <A|M|T>\0<path>\0",
  // oldest commit first.
  HANGAR_ASSIGN_OR_RETURN(std::string log,
                          RunWithInput(repo, "log",
                                       {"--reverse", "--topo-order", "--format=%x01%H %ct", "-z",
                                        "--raw", "--diff-merges=first-parent", "--no-abbrev",
                                        "--no-renames", "--diff-filter=AMT", "--stdin"},
                                       revs, deadline));
  struct Seen {
    Oid commit;
    int64_t time;
    std::string path;
  };
  std::unordered_map<std::string, Seen> first;  // by blob id (hex), the first one only
  std::string blobs;
  Oid commit;
  int64_t time = 0;
  size_t pos = 0;
  auto next_field = [&]() -> std::optional<std::string_view> {
    if (pos >= log.size()) return std::nullopt;
    size_t nul = log.find('\0', pos);
    if (nul == std::string::npos) nul = log.size();
    std::string_view f(log.data() + pos, nul - pos);
    pos = nul + 1;
    return f;
  };
  while (auto f = next_field()) {
    std::string_view field = *f;
    while (!field.empty() && field.front() == '\n') field.remove_prefix(1);
    if (field.empty()) continue;
    if (field.front() == '\x01') {
      auto id = Oid::ParseHex(field.substr(1, 40));
      if (!id || field.size() < 42) return Malformed("log (commit line)");
      commit = *id;
      std::string_view t = field.substr(42);
      std::from_chars(t.data(), t.data() + t.size(), time);
      continue;
    }
    // ":100644 100644 <old> <new> M"; the path is the next field.
    auto path = next_field();
    if (field.front() != ':' || field.size() < 97 || !path) return Malformed("log --raw");
    std::string blob(field.substr(56, 40));
    if (field.substr(1, 6) == "160000" || field.substr(8, 6) == "160000") continue;  // submodules
    if (first.emplace(blob, Seen{commit, time, std::string(*path)}).second) blobs += blob + "\n";
  }
  if (blobs.empty()) return out;
  HANGAR_ASSIGN_OR_RETURN(auto pointers, ReadPointers(repo, blobs, deadline));
  std::unordered_map<std::string, size_t> index;  // by object id (hex), into `out`
  for (auto& [blob, pointer] : pointers) {
    auto [it, added] = index.emplace(pointer.oid.Hex(), out.size());
    if (!added) {
      out[it->second].blobs.push_back(blob);
      continue;
    }
    const Seen& s = first.at(blob.Hex());
    out.push_back(LfsAppearance{pointer, blob, {blob}, s.path, s.commit, s.time});
  }
  return out;
}

}  // namespace hangar::git
