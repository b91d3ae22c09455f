#include "path_log_repos.h"

#include <memory>
#include <set>
#include <string_view>

#include "test_repo.h"

namespace hangar::git::testing {
namespace {

// Phase 1: the bulk of the history; then single.git and split.git (layer 1) get graphs.
constexpr std::string_view kPhase1 = R"SH(
git init -q -b main work
cd work
c() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
m() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git merge -q --no-ff "$@"; }
hb="$(printf 'hi\377\376.bin')"
mkdir -p src/lib docs 'données'
echo license > LICENSE; echo readme > README.md; echo a > src/a.py; echo x > src/lib/x.py
echo d > docs/d.md; echo é > 'données/été.txt'; printf 'hb' > "$hb"
git add -A && c 1000 -m root
echo a2 >> src/a.py && git add -A && c 1010 -m a2
echo r2 >> README.md && git add -A && c 1020 -m r2
git checkout -q -b side1 && echo s1 >> src/a.py && git add -A && c 1030 -m 's1 a'
git checkout -q main && echo r3 >> README.md && git add -A && c 1031 -m r3
m 1040 -m 'merge side1: a.py from the side' side1
git checkout -q -b side2 && echo s2 > src/lib/x.py && echo s2a >> src/a.py && git add -A && c 1050 -m s2
git checkout -q main && echo m2 >> docs/d.md && echo m2a >> src/a.py && git add -A && c 1050 -m m2
git merge -q --no-ff side2 -m 'merge side2: a.py from both' >/dev/null 2>&1 || true
printf 'resolved\n' > src/a.py && git add -A && c 1060 --no-edit
git checkout -q -b side3 && echo s3 >> docs/d.md && git add -A && c 1070 -m s3
git checkout -q main && echo m3 >> src/lib/x.py && git add -A && c 1071 -m m3
git merge -q --no-ff --no-commit side3 && echo evil >> README.md && git add -A && c 1080 -m 'evil merge'
git checkout -q -b side4 && echo same > docs/e.md && git add -A && c 1090 -m 'side4 e'
git checkout -q main && echo same > docs/e.md && git add -A && c 1090 -m 'main e'
m 1100 -m 'merge side4: e.md the same on both' side4
for b in o1 o2 o3; do git branch $b; done
git checkout -q o1 && echo o1 > src/o1.py && git add -A && c 1110 -m o1
git checkout -q o2 && echo o2 > docs/o2.md && git add -A && c 1111 -m o2
git checkout -q o3 && echo o3 >> src/a.py && git add -A && c 1112 -m o3
git checkout -q main && m 1120 -m octopus o1 o2 o3
git rm -q docs/d.md && c 1130 -m 'delete d'
echo d-again > docs/d.md && git add -A && c 1140 -m 're-add d'
mkdir -p src/lib2 && git mv src/lib/x.py src/lib2/x.py && c 1150 -m 'rename x'
echo t > thing && git add -A && c 1160 -m 'thing is a file'
git rm -q thing && mkdir thing && echo in > thing/inner && git add -A && c 1170 -m 'thing is a dir'
chmod +x src/a.py && git add -A && c 1180 -m 'a.py executable'
mkdir bulk && i=0 && while [ $i -lt 600 ]; do i=$((i+1)); echo $i > bulk/f$i.txt; done
echo big >> README.md && git add -A && c 1190 -m 'bulk: 601 paths'
echo skew >> src/a.py && git add -A && c 900 -m 'clock skew'
echo again >> LICENSE && git add -A && c 1200 -m 'license again'
printf 'hb2' > "$hb" && echo été2 >> 'données/été.txt' && git add -A && c 1210 -m 'non-ascii'
git checkout -q -b side5 HEAD~4 && echo s5 >> docs/e.md && git add -A && c 1215 -m s5
git checkout -q main
cd ..
for r in single split full nobloom nograph; do git clone -q --bare work $r.git; done
git -C single.git commit-graph write --reachable --changed-paths
git -C split.git commit-graph write --reachable --changed-paths --split
)SH";

// Phase 2: merges of old branches and more edits; split.git gets its second layer.
constexpr std::string_view kPhase2 = R"SH(
cd work
c() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
m() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git merge -q --no-ff "$@"; }
m 1220 -m 'merge side5' side5
echo p2 >> src/lib2/x.py && git add -A && c 1230 -m p2
git checkout -q -b late side2 && echo late >> LICENSE && git add -A && c 1235 -m 'late license'
git checkout -q main && m 1240 -X theirs -m 'merge late, theirs' late
cd ..
for r in single split full nobloom nograph; do git -C work push -q --all ../$r.git; done
git -C split.git commit-graph write --reachable --changed-paths --split=no-merge
)SH";

// Phase 3: commits no graph of single.git or split.git holds; then full.git's and
// nobloom.git's graphs.
constexpr std::string_view kPhase3 = R"SH(
cd work
c() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
m() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git merge -q --no-ff "$@"; }
git checkout -q -b side6 main~2 && echo s6 >> README.md && git add -A && c 1250 -m s6
git checkout -q main && echo p3 >> src/a.py && git add -A && c 1250 -m p3
m 1260 -m 'merge side6' side6
git rm -q -r thing && c 1270 -m 'thing gone'
cd ..
for r in single split full nobloom nograph; do git -C work push -q --all ../$r.git; done
git -C full.git commit-graph write --reachable --changed-paths
git -C nobloom.git commit-graph write --reachable
test "$(wc -l < split.git/objects/info/commit-graphs/commit-graph-chain)" = 2
)SH";

struct Holder {
  TempDir tmp;
  PathLogRepos repos;
};

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  for (size_t start = 0; start < s.size();) {
    size_t nl = s.find('\n', start);
    if (nl == s.npos) nl = s.size();
    if (nl > start) out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace

const PathLogRepos& GetPathLogRepos() {
  static const std::unique_ptr<Holder> holder = [] {
    auto h = std::make_unique<Holder>();
    const std::string& dir = h->tmp.path();
    Sh(dir, std::string(kPhase1));
    Sh(dir, std::string(kPhase2));
    Sh(dir, std::string(kPhase3));
    h->repos.dir = dir;
    h->repos.starts = Lines(Sh(dir + "/full.git", "git for-each-ref --format='%(objectname)'"));
    // Every file that ever existed (bulk/ thinned out), its directories, and paths that
    // never existed, including below a file.
    std::set<std::string> paths;
    std::string names = Sh(dir + "/full.git", "git log --all --format= --name-only -z");
    for (size_t start = 0; start < names.size();) {
      size_t end = names.find('\0', start);
      if (end == names.npos) end = names.size();
      std::string p = names.substr(start, end - start);
      start = end + 1;
      while (!p.empty() && p.front() == '\n') p.erase(0, 1);
      if (p.empty() || (p.starts_with("bulk/f") && p != "bulk/f7.txt" && p != "bulk/f600.txt"))
        continue;
      for (size_t slash = p.find('/'); slash != p.npos; slash = p.find('/', slash + 1))
        paths.insert(p.substr(0, slash));
      paths.insert(p);
    }
    for (const char* p : {"nope", "src/nope.py", "src/a.py/below", "docs/d.md/x", "bulk/f601.txt",
                          "données/nope", "a", "src/lib/nope"})
      paths.insert(p);
    h->repos.paths.assign(paths.begin(), paths.end());
    return h;
  }();
  return holder->repos;
}

}  // namespace hangar::git::testing
