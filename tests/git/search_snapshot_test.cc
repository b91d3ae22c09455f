// git::SearchSnapshot (search_snapshot.h) against git grep itself: for many patterns —
// literals, regexes, anchors, empty matches, case folding, path scopes — the snapshot's
// matches must be exactly the lines `git grep -n -I` lists, over files with CRLF, no final
// newline, binaries, long lines, symlinks, executables and awkward names.

#include "git/search_snapshot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_repo.h"

namespace hangar::git {
namespace {

using testing::Quote;
using testing::Sh;
using testing::TempDir;

constexpr std::string_view kScript = R"SH(
git init -q -b main work
cd work
mkdir -p src/deep/er docs 'odd dir'
printf 'alpha beta\nGamma delta\n\nomega step one\n  omega step two\nlast line no newline' > src/a.py
printf 'foo\nbar\nfoo \n  foo\n' > two.txt
printf 'crlf line\r\nOmega Step crlf\r\n' > docs/win.txt
printf 'bin\000ary omega step\n' > src/blob.bin
printf 'x%.0s' $(seq 1 900) > src/long.txt && printf ' omega step tail\n' >> src/long.txt
printf 'v3123 tensor\nv3 tensor\nv34567 tensor\n-dash start\n' > src/deep/er/t.txt
printf 'héllo wörld omega\nÜber\n' > 'odd dir/ünï code.md'
printf '#!/bin/sh\necho omega step\n' > run.sh && chmod +x run.sh
ln -s src/a.py link.py
: > empty.txt
printf '\n\n\n' > blank.txt
git add -A && git commit -q -m one
cd .. && git clone -q --bare work repo.git
)SH";

struct Line {
  std::string path;
  uint32_t line;
  std::string text;
  bool operator==(const Line&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Line& l) {
  return os << l.path << ":" << l.line << ":" << l.text;
}

class SearchSnapshotTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    Sh(dir_->path(), std::string(kScript));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  std::string Repo() { return dir_->path() + "/repo.git"; }
  Oid Main() { return Oid::ParseHex(Sh(Repo(), "git rev-parse main").substr(0, 40)).value(); }

  // What git grep lists (LC_ALL=C, as git::Grep runs it).
  std::vector<Line> GitGrep(const std::string& pattern, bool fixed, bool icase,
                            const std::string& path = "") {
    { std::ofstream(dir_->path() + "/pattern") << pattern << "\n"; }
    int rc = 0;
    std::string out =
        Sh(Repo(),
           "LC_ALL=C git grep -n -z -I --full-name " + std::string(fixed ? "-F" : "-E") +
               (icase ? " -i" : "") + " -f " + Quote(dir_->path() + "/pattern") + " main -- " +
               (path.empty() ? "" : Quote(path)),
           &rc);
    std::vector<Line> lines;
    std::string_view s(out);
    while (!s.empty()) {
      size_t a = s.find('\0'), b = s.find('\0', a + 1), nl = s.find('\n', b + 1);
      if (nl == std::string_view::npos) break;
      std::string name(s.substr(0, a));
      name.erase(0, name.find(':') + 1);
      lines.push_back(
          Line{name, static_cast<uint32_t>(std::stoul(std::string(s.substr(a + 1, b - a - 1)))),
               std::string(s.substr(b + 1, nl - b - 1))});
      s.remove_prefix(nl + 1);
    }
    return lines;
  }

  std::vector<Line> Snapshot(const std::string& pattern, bool fixed, bool icase,
                             const std::string& path = "") {
    auto snap = SearchSnapshot::Open(Repo(), Main());
    EXPECT_TRUE(snap) << snap.error().message;
    if (!snap) return {};
    GrepOptions o;
    o.fixed_string = fixed;
    o.ignore_case = icase;
    o.path = path;
    o.max_line_bytes = 100000;
    o.max_matches = 100000;
    auto found = (*snap)->Search(pattern, o, Later());
    EXPECT_TRUE(found) << found.error().message;
    std::vector<Line> lines;
    if (!found) return lines;
    if (!*found) {  // left to git grep (a backreference): what git::Grep answers then
      auto via = Grep(Repo(), Main(), pattern, o);
      EXPECT_TRUE(via) << via.error().message;
      if (via)
        for (auto& m : via->matches) lines.push_back(Line{m.path, m.line, m.text});
      return lines;
    }
    for (auto& m : (*found)->matches) lines.push_back(Line{m.path, m.line, m.text});
    return lines;
  }

  static std::chrono::steady_clock::time_point Later() {
    return std::chrono::steady_clock::now() + std::chrono::seconds(30);
  }

  static TempDir* dir_;
};
TempDir* SearchSnapshotTest::dir_ = nullptr;

TEST_F(SearchSnapshotTest, MatchesWhatGitGrepLists) {
  struct Case {
    std::string pattern;
    bool fixed, icase;
    std::string path;
  };
  const std::vector<Case> cases = {
      {"omega step", true, false, ""},
      {"omega step", true, true, ""},
      {"OMEGA", true, true, ""},
      {"omega", false, false, ""},
      {"^omega", false, false, ""},
      {"line$", false, false, ""},
      {"x*", false, false, ""},
      {"^$", false, false, ""},
      {".", false, false, ""},
      {"v3[0-9]{3} tensor", false, false, ""},
      {"(alpha|delta)", false, true, ""},
      {"[[:upper:]]", false, false, ""},
      {"-dash", true, false, ""},
      {"-dash", false, false, ""},
      {"crlf", false, false, "docs"},
      {"omega", true, false, "src"},
      {"omega", true, false, "src/a.py"},
      {"omega", true, false, "sr"},
      {"wörld", true, false, ""},
      {"Ü", true, true, ""},
      {"no newline$", false, false, ""},
      {"step\r$", false, false, ""},
      {"a.py", true, false, ""},
      {"(a)(b)?\\1", false, false, ""},
      {"nothing matches this", true, false, ""},
      // Classes that match a newline must still match within one line, as git's do.
      {"foo\\s", false, false, ""},
      {"[[:space:]]foo", false, false, ""},
      {"o[[:space:]]", false, false, ""},
      {"\\W", false, false, ""},
      {"[[:cntrl:]]", false, false, ""},
      {"\\s$", false, false, ""},
      {"\\`a", false, false, ""},
      {"\\`", false, false, ""},
  };
  for (const Case& c : cases) {
    auto want = GitGrep(c.pattern, c.fixed, c.icase, c.path);
    EXPECT_EQ(Snapshot(c.pattern, c.fixed, c.icase, c.path), want)
        << "pattern '" << c.pattern << "' fixed=" << c.fixed << " icase=" << c.icase << " path='"
        << c.path << "'";
  }
  // The fixture exercises what it should: matches in several files, a binary left out.
  EXPECT_GE(GitGrep("omega", true, false).size(), 5u);
  for (const Line& l : Snapshot("ary", true, false)) EXPECT_NE(l.path, "src/blob.bin");
}

TEST_F(SearchSnapshotTest, LimitsTruncationAndReuse) {
  auto snap = SearchSnapshot::Open(Repo(), Main());
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_EQ((*snap)->files(), 9u);  // every file but the binary and the symlink
  GrepOptions o;
  o.fixed_string = false;
  o.max_matches = 2;
  o.max_line_bytes = 10;
  auto found = (*snap)->Search(".", o, Later());
  ASSERT_TRUE(found);
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->matches.size(), 2u);
  EXPECT_TRUE((*found)->truncated);
  EXPECT_LE((*found)->matches[0].text.size(), 10u);
  // Left to git grep (killable): backreferences, and lines too long for glibc's regex.
  auto backref = (*snap)->Search("(a)\\1", o, Later());
  ASSERT_TRUE(backref);
  EXPECT_FALSE(*backref);
  // The snapshot is kept in the repository and opened again without writing.
  auto again = SearchSnapshot::OpenExisting(Repo(), Main());
  ASSERT_TRUE(again);
  ASSERT_NE(again->get(), nullptr);
  EXPECT_EQ((*again)->bytes(), (*snap)->bytes());
  // A bad regex is a BadRequest with glibc's reason.
  auto bad = (*snap)->Search("a(", o, Later());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::BadRequest);
  // Too much text for the limits: Unavailable, nothing written.
  TempDir other;
  Sh(other.path(), "git clone -q --bare " + Quote(Repo()) + " r.git");
  auto over = SearchSnapshot::Open(other.path() + "/r.git", Main(), SnapshotLimits{10, 1000});
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::Unavailable);
  EXPECT_TRUE(std::filesystem::is_empty(other.path() + "/r.git/hangar-search"));
}

TEST_F(SearchSnapshotTest, LongLinesGoToGitGrepAndTheDeadlineHolds) {
  TempDir other;
  Sh(other.path(), R"SH(
git init -q -b main w && cd w
python3 -c "open('long.txt','w').write('x' * 20000 + ' needle\n')"
python3 -c "open('big.txt','w').write('a short line\n' * 200000)"
git add -A && git commit -q -m one && cd .. && git clone -q --bare w r.git
)SH");
  const std::string repo = other.path() + "/r.git";
  Oid head = Oid::ParseHex(Sh(repo, "git rev-parse main").substr(0, 40)).value();
  auto snap = SearchSnapshot::Open(repo, head);
  ASSERT_TRUE(snap) << snap.error().message;
  GrepOptions o;
  o.fixed_string = false;
  o.path = "long.txt";
  auto regex = (*snap)->Search("needle", o, Later());  // a 20,007-byte line: git's job
  ASSERT_TRUE(regex);
  EXPECT_FALSE(*regex);
  o.fixed_string = true;
  auto literal = (*snap)->Search("needle", o, Later());  // literals take lines up to 1 MiB
  ASSERT_TRUE(literal);
  ASSERT_TRUE(*literal);
  EXPECT_EQ((*literal)->matches.size(), 1u);
  // git::Grep answers the regex through git grep with the same result.
  GrepOptions via;
  via.path = "long.txt";
  auto grep = Grep(repo, head, "need[l]e", via);
  ASSERT_TRUE(grep) << grep.error().message;
  EXPECT_EQ(grep->matches.size(), 1u);
  // A search still running at its deadline stops with Unavailable (2.6 MB of lines).
  o.path = "big.txt";
  o.fixed_string = false;
  auto late = (*snap)->Search("zzz", o, std::chrono::steady_clock::now() - std::chrono::seconds(1));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ErrorCode::Unavailable);
}

TEST_F(SearchSnapshotTest, AMalformedSnapshotIsRemoved) {
  TempDir other;
  Sh(other.path(), "git clone -q --bare " + Quote(Repo()) + " r.git");
  const std::string repo = other.path() + "/r.git";
  ASSERT_TRUE(SearchSnapshot::Open(repo, Main()));
  std::string file;
  for (auto& e : std::filesystem::directory_iterator(repo + "/hangar-search")) file = e.path();
  const auto full = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, full - 3);
  auto cut = SearchSnapshot::OpenExisting(repo, Main());
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code, ErrorCode::Internal);
  EXPECT_FALSE(std::filesystem::exists(file));
  // Cut exactly where the trailer starts (an entry boundary): refused as well.
  ASSERT_TRUE(SearchSnapshot::Open(repo, Main()));
  std::filesystem::resize_file(file, full - 25);  // "HANGAR-SEARCH-END" + u64
  auto at_boundary = SearchSnapshot::OpenExisting(repo, Main());
  ASSERT_FALSE(at_boundary);
  EXPECT_EQ(at_boundary.error().code, ErrorCode::Internal);
  auto rebuilt = SearchSnapshot::Open(repo, Main());  // written again
  ASSERT_TRUE(rebuilt) << rebuilt.error().message;
}

}  // namespace
}  // namespace hangar::git
