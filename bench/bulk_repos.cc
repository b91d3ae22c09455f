// hangar-bulk-repos: fills a Hangar data dir and its database with N model repos, fast,
// for the 1,000,000-repo benchmark (bench/million_repos.sh, issue 17 "Speed and scale").
//
//   hangar-bulk-repos --data-dir D --count N [--threads T] [--orgs K]
//                     [--repos-only | --rows-only] [--database-url postgres://...]
//   hangar-bulk-repos --count N --sample M [--orgs K]
//       prints M of the N repo ids ("org-7/nova-llama-1007"), spread evenly over the
//       range, for a load generator's paths; makes nothing
//
// Creating a repo through the API (RepoService::Create) costs a libgit2 init, loose
// objects in their fan-out directories and an fsync: 21 inodes and 84 KiB each, at 40 to
// 290 repos/s on the 2-core benchmark machine. A million of those would take one to seven
// hours and want 21,000,000 inodes, more than that machine's 250 GB filesystem has. So this
// tool takes the bulk path, and says so (a copy costs 8 inodes, its directories, and
// 32 KiB):
//
//   * Git directories. A few template repos are made by the project's own code:
//     git::InitBareRepo with a README.md model card (YAML metadata), .gitattributes and a
//     small config.json in one commit, then MaintenanceService::Maintain (Full), so each
//     template is exactly what a maintained repo looks like (one pack with its bitmap,
//     packed-refs, commit-graph, the hangar-maintenance state, the search snapshot). A new
//     repo's directory is its template's non-empty directories (plus refs/, which git
//     needs) made with mkdir, and every file hard-linked. Git never rewrites a file in
//     place (refs, config, packs, the commit-graph go through a lock file and a rename), so
//     a push to one repo breaks its links and leaves the others alone. Lock files are not
//     linked: flock(2) on a shared inode would make every repo of a template one lock.
//     Each template serves at most kReposPerTemplate repos, under ext4's 65,000-link limit.
//   * Rows. Through db::RepoStore, the interface the server reads with (Create,
//     SetCardMeta with the card's metadata as the server indexes it at a push, and
//     AddDownloads today for every 10th repo, so the downloads and trending sorts have
//     something to order), from T threads.
//
// Names are models/org-<i mod K>/<word>-<word>-<i>, the words picked by a hash of i from
// a fixed list, so a search filter ("llama") matches about 3% of them. Repo i's
// created_at and last_modified are (start - N + i) seconds: distinct and in name order.
//
// Idempotent and resumable: a repo directory holding HEAD is complete (HEAD is linked
// last) and skipped; one without it is removed and made again. A row that exists is
// found and given its card metadata again; its downloads are not added twice (so a
// crash between a row's Create and its AddDownloads leaves that repo without them).

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cli/app.h"
#include "config/config.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "core/util.h"
#include "db/sql/sql_stores.h"
#include "git/repo_reader.h"
#include "git/repo_writer.h"
#include "services/auth/access_policy.h"
#include "services/maintenance/maintenance_service.h"
#include "services/repo/card_index.h"
#include "services/repo/model_card.h"
#include "services/repo/repo_service.h"

namespace hangar::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Repos made from one template: each template file gets this many links plus its own,
// under ext4's limit of 65,000 links per inode.
constexpr int64_t kReposPerTemplate = 50000;
// Repos a worker takes at a time from the shared counter.
constexpr int64_t kChunk = 64;

struct Options {
  std::string data_dir;
  std::string database_url;  // "" = the configuration's ([database] url or SQLite)
  int64_t count = 0;
  int threads = 4;
  int64_t orgs = 1000;
  bool dirs = true;    // false with --rows-only
  bool rows = true;    // false with --repos-only
  int64_t sample = 0;  // --sample: print this many repo ids and stop
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "hangar-bulk-repos: %s\n"
               "usage: hangar-bulk-repos --data-dir D --count N [--threads T] [--orgs K]\n"
               "                         [--repos-only | --rows-only] [--database-url URL]\n"
               "       hangar-bulk-repos --count N --sample M [--orgs K]\n",
               why);
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage("missing value of an option");
      return argv[++i];
    };
    auto number = [&](int64_t lo, int64_t hi) -> int64_t {
      std::string v = value();
      auto n = ParseUint64(v);
      if (!n || static_cast<int64_t>(*n) < lo || static_cast<int64_t>(*n) > hi)
        Usage(("bad number " + v).c_str());
      return static_cast<int64_t>(*n);
    };
    if (a == "--data-dir") {
      o.data_dir = value();
    } else if (a == "--database-url") {
      o.database_url = value();
    } else if (a == "--count") {
      o.count = number(1, 100'000'000);
    } else if (a == "--threads") {
      o.threads = static_cast<int>(number(1, 256));
    } else if (a == "--orgs") {
      o.orgs = number(1, 10'000'000);
    } else if (a == "--sample") {
      o.sample = number(1, 100'000'000);
    } else if (a == "--repos-only") {
      o.rows = false;
    } else if (a == "--rows-only") {
      o.dirs = false;
    } else {
      Usage(("unknown argument " + std::string(a)).c_str());
    }
  }
  if (o.count == 0) Usage("--count is required");
  if (o.sample == 0 && o.data_dir.empty()) Usage("--data-dir is required");
  if (!o.dirs && !o.rows) Usage("--repos-only and --rows-only exclude each other");
  return o;
}

// splitmix64: a well-mixed hash of the repo index, for its words and download count.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::string_view kWords[] = {
    "alpha",  "amber", "apex",   "aurora", "basil",   "beacon", "birch",   "blaze",
    "bloom",  "cedar", "cipher", "cobalt", "comet",   "coral",  "crest",   "delta",
    "dune",   "ember", "falcon", "fern",   "flint",   "gale",   "garnet",  "glacier",
    "harbor", "hazel", "helix",  "indigo", "iris",    "jade",   "juniper", "kestrel",
    "lark",   "lotus", "lumen",  "maple",  "meadow",  "mesa",   "nimbus",  "nova",
    "oak",    "onyx",  "opal",   "orbit",  "pine",    "prism",  "quartz",  "raven",
    "ridge",  "sable", "sage",   "sierra", "sparrow", "summit", "tidal",   "topaz",
    "tundra", "umber", "vega",   "willow", "zephyr",  "llama",  "mistral", "granite"};
constexpr uint64_t kWordCount = std::size(kWords);

RepoId RepoName(int64_t i, int64_t orgs) {
  uint64_t h = Mix(static_cast<uint64_t>(i));
  std::string name = std::string(kWords[h % kWordCount]) + "-" +
                     std::string(kWords[(h >> 16) % kWordCount]) + "-" + std::to_string(i);
  return RepoId{RepoType::Model, "org-" + std::to_string(i % orgs), std::move(name)};
}

// The model cards of the templates: repo i gets variant i % size, so listings filtered by
// library or pipeline_tag find every kind throughout the range.
struct CardVariant {
  const char* library;
  const char* pipeline;
  const char* license;
  const char* language;
};
constexpr CardVariant kVariants[] = {
    {"transformers", "text-generation", "apache-2.0", "en"},
    {"diffusers", "text-to-image", "openrail", "en"},
    {"sentence-transformers", "feature-extraction", "mit", "en"},
    {"timm", "image-classification", "apache-2.0", "en"},
    {"transformers", "automatic-speech-recognition", "mit", "fr"},
    {"peft", "text-generation", "llama2", "en"},
    {"transformers", "token-classification", "cc-by-4.0", "de"},
    {"gguf", "text-generation", "apache-2.0", "zh"},
};
constexpr int64_t kVariantCount = std::size(kVariants);

std::string Readme(const CardVariant& v) {
  return std::string("---\nlibrary_name: ") + v.library + "\npipeline_tag: " + v.pipeline +
         "\nlicense: " + v.license + "\nlanguage:\n- " + v.language +
         "\ntags:\n- bulk\n- benchmark\n---\n\n# A bulk-made model\n\n"
         "One of the repos hangar-bulk-repos made for the 1,000,000-repo benchmark.\n";
}

// A template bare repo and what its copies are made of.
struct Template {
  std::string dir;
  std::string commit;                // 40 hex, the head of main
  services::CardMeta meta;           // what the server indexes from its README.md
  std::vector<std::string> subdirs;  // relative, parents first
  std::vector<std::string> files;    // relative, HEAD last
};

// Lists the directories and files a copy of `t.dir` is made of (see the file comment).
Result<void> ScanTemplate(Template& t) {
  std::error_code ec;
  std::vector<std::string> dirs;
  for (fs::recursive_directory_iterator it(t.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), t.dir).string();
    if (it->is_directory()) {
      // Empty ones (refs/heads/, refs/tags/ after pack-refs) git makes when it needs them.
      if (rel == "refs" || !fs::is_empty(it->path())) dirs.push_back(rel);
    } else if (it->path().extension() != ".lock" && rel != "HEAD") {
      t.files.push_back(rel);
    }
  }
  if (ec) return MakeError(ErrorCode::Internal, "reading template " + t.dir + ": " + ec.message());
  std::sort(dirs.begin(), dirs.end());  // a parent sorts before its children
  t.subdirs = std::move(dirs);
  t.files.push_back("HEAD");  // last: a copy with HEAD is complete
  return {};
}

// Makes (or reuses) template `dir` with card `variant`: InitBareRepo, then a full
// maintenance, as a repo would look after the server maintained it.
Result<Template> MakeTemplate(const std::string& dir, const CardVariant& variant,
                              services::MaintenanceService& maintenance) {
  Template t;
  t.dir = dir;
  const std::string readme = Readme(variant);
  // InitBareRepo moves a finished repository into place, so one with HEAD is whole; one
  // without the maintenance state was left before its maintenance ended.
  if (!fs::exists(dir + "/HEAD")) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    std::vector<std::pair<std::string, std::string>> files = {
        {".gitattributes", std::string(git::InitialGitattributes())},
        {"README.md", readme},
        {"config.json",
         "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 512,\n"
         "  \"num_hidden_layers\": 4\n}\n"}};
    // A fixed time, so the copies of one variant hold the same commit.
    git::Signature sig{"bulk", "bulk@hangar.invalid", 1700000000, 0};
    HANGAR_TRY(git::InitBareRepo(dir, files, sig, "initial commit"));
  }
  if (services::ReadMaintenanceState(dir).last_full_unix == 0) {
    HANGAR_TRY(maintenance.Maintain(dir, services::MaintenanceLevel::Full));
  }
  HANGAR_ASSIGN_OR_RETURN(auto head, git::RepoReader().ResolveRevision(dir, "HEAD"));
  t.commit = head.Hex();
  HANGAR_ASSIGN_OR_RETURN(auto card, services::ParseCardData(readme));
  if (card) t.meta = services::ExtractCardMeta(*card);
  HANGAR_TRY(ScanTemplate(t));
  return t;
}

// Makes repo directory `dest` from `t`. Returns false when it was complete already.
Result<bool> CopyTemplate(const Template& t, const std::string& dest) {
  struct stat st;
  if (::lstat((dest + "/HEAD").c_str(), &st) == 0) return false;
  std::error_code ec;
  fs::remove_all(dest, ec);  // a copy a crash left half made
  auto fail = [&](const std::string& what) {
    return MakeError(ErrorCode::Internal, what + ": " + std::strerror(errno));
  };
  if (::mkdir(dest.c_str(), 0755) != 0) return fail("mkdir " + dest);
  for (const auto& d : t.subdirs) {
    const std::string p = dest + "/" + d;
    if (::mkdir(p.c_str(), 0755) != 0) return fail("mkdir " + p);
  }
  for (const auto& f : t.files) {
    const std::string from = t.dir + "/" + f, to = dest + "/" + f;
    if (::link(from.c_str(), to.c_str()) != 0) {
      if (errno == EMLINK) return fail("link " + to + " (too many links to " + from + ")");
      return fail("link " + to);
    }
  }
  return true;
}

// Runs `work(i)` for i in [0, count) on `threads` threads, printing progress every 5 s
// with `label`. Stops at the first error and returns it. Returns the seconds taken.
Result<double> RunParallel(const char* label, int64_t count, int threads,
                           const std::function<Result<void>(int64_t)>& work) {
  std::atomic<int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::optional<Error> first_error;
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    pool.emplace_back([&] {
      while (!failed.load()) {
        const int64_t begin = next.fetch_add(kChunk);
        if (begin >= count) return;
        for (int64_t i = begin; i < std::min(count, begin + kChunk); ++i) {
          auto r = work(i);
          if (!r) {
            std::lock_guard lock(mu);
            if (!first_error) first_error = std::move(r).error();
            failed = true;
            return;
          }
          ++done;
        }
      }
    });
  }
  // Progress from this thread until the workers are through.
  auto last = Clock::now();
  int64_t last_done = 0;
  while (done.load() < count && !failed.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto now = Clock::now();
    if (now - last < std::chrono::seconds(5)) continue;
    const int64_t d = done.load();
    const double s = std::chrono::duration<double>(now - last).count();
    std::fprintf(stderr, "  %s %lld/%lld (%.0f/s)\n", label, static_cast<long long>(d),
                 static_cast<long long>(count), static_cast<double>(d - last_done) / s);
    last = now;
    last_done = d;
  }
  for (auto& th : pool) th.join();
  if (first_error) return *first_error;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void PrintRate(const char* what, int64_t count, int64_t skipped, double seconds) {
  std::printf("bulk: %s %lld in %.1f s = %.0f repos/s (%lld existed already)\n", what,
              static_cast<long long>(count), seconds,
              static_cast<double>(count) / std::max(seconds, 1e-9),
              static_cast<long long>(skipped));
  std::fflush(stdout);
}

Result<void> Run(const Options& o) {
  config::LoadOptions load;
  load.overrides.emplace_back("storage.data_dir", o.data_dir);
  if (!o.database_url.empty()) load.overrides.emplace_back("database.url", o.database_url);
  HANGAR_ASSIGN_OR_RETURN(config::Config c, config::LoadConfig(load));
  const fs::path data(c.storage.data_dir);
  const fs::path repos_root = data / "repos";
  std::error_code ec;
  fs::create_directories(repos_root, ec);
  if (ec) return MakeError(ErrorCode::Internal, "creating " + repos_root.string());

  HANGAR_ASSIGN_OR_RETURN(db::Stores stores,
                          db::OpenStores(c.database.url, c.database.sqlite_path, o.threads + 2));
  // The services the templates' maintenance needs, as the App wires them.
  services::AccessPolicy access(*stores.users);
  git::RepoReader reader;
  services::RepoService repo_svc(*stores.repos, access, reader, repos_root);
  services::MaintenanceService maintenance(*stores.repos, repo_svc, cli::MaintenanceOptionsFrom(c));

  // Variant v's copies: repo i is copy (i / kVariantCount) / kReposPerTemplate of variant
  // i % kVariantCount. Templates live beside repos/, on the same filesystem (hard links).
  const auto t0 = Clock::now();
  const int64_t per_variant = (o.count + kVariantCount - 1) / kVariantCount;
  const int64_t copies = (per_variant + kReposPerTemplate - 1) / kReposPerTemplate;
  std::vector<Template> templates;
  for (int64_t copy = 0; copy < copies; ++copy) {
    for (int64_t v = 0; v < kVariantCount; ++v) {
      const std::string dir = (data / "bulk-templates" /
                               ("v" + std::to_string(v) + "-" + std::to_string(copy) + ".git"))
                                  .string();
      HANGAR_ASSIGN_OR_RETURN(auto t, MakeTemplate(dir, kVariants[v], maintenance));
      templates.push_back(std::move(t));
    }
  }
  auto template_of = [&](int64_t i) -> const Template& {
    return templates[((i / kVariantCount) / kReposPerTemplate) * kVariantCount + i % kVariantCount];
  };
  std::printf("bulk: %zu templates (%zu dirs, %zu files each) in %.1f s\n", templates.size(),
              templates[0].subdirs.size() + 1, templates[0].files.size(),
              std::chrono::duration<double>(Clock::now() - t0).count());
  std::fflush(stdout);

  if (o.dirs) {
    for (int64_t k = 0; k < std::min(o.orgs, o.count); ++k) {
      fs::create_directories(repos_root / "models" / ("org-" + std::to_string(k)), ec);
      if (ec) return MakeError(ErrorCode::Internal, "creating org directories: " + ec.message());
    }
    std::atomic<int64_t> skipped{0};
    HANGAR_ASSIGN_OR_RETURN(
        double s, RunParallel("dirs", o.count, o.threads, [&](int64_t i) -> Result<void> {
          RepoId id = RepoName(i, o.orgs);
          HANGAR_ASSIGN_OR_RETURN(bool made, CopyTemplate(template_of(i), repo_svc.GitPath(id)));
          if (!made) ++skipped;
          return {};
        }));
    PrintRate("dirs", o.count, skipped.load(), s);
  }

  if (o.rows) {
    const int64_t start = NowUnix() - o.count;
    const int64_t today = NowUnix() / 86400;
    std::atomic<int64_t> skipped{0};
    HANGAR_ASSIGN_OR_RETURN(
        double s, RunParallel("rows", o.count, o.threads, [&](int64_t i) -> Result<void> {
          const Template& t = template_of(i);
          db::RepoRecord rec;
          RepoId id = RepoName(i, o.orgs);
          rec.type = id.type;
          rec.ns = id.ns;
          rec.name = id.name;
          rec.created_at = rec.last_modified = start + i;
          rec.last_commit = t.commit;
          auto created = stores.repos->Create(rec);
          bool existed = false;
          if (!created && created.error().code == ErrorCode::Conflict) {
            created = stores.repos->Find(id);
            existed = true;
            ++skipped;
          }
          if (!created) return std::move(created).error();
          HANGAR_TRY(
              stores.repos->SetCardMeta(created->id, t.meta.library, t.meta.pipeline, t.meta.tags));
          if (!existed && i % 10 == 0) {
            const int64_t n = 1 + static_cast<int64_t>(Mix(~static_cast<uint64_t>(i)) % 100000);
            HANGAR_TRY(stores.repos->AddDownloads(created->id, today, n));
          }
          return {};
        }));
    PrintRate(c.database.url.empty() ? "rows (sqlite)" : "rows (postgres)", o.count, skipped.load(),
              s);
  }
  return {};
}

// Prints o.sample repo ids spread evenly over [0, o.count), one per line.
void PrintSample(const Options& o) {
  for (int64_t k = 0; k < o.sample; ++k) {
    // Offset by a hash of k, so the picks do not all share i mod K (one org).
    int64_t i = k * o.count / o.sample;
    int64_t span = std::max<int64_t>(1, o.count / o.sample);
    i = std::min(o.count - 1, i + static_cast<int64_t>(Mix(static_cast<uint64_t>(k)) % span));
    std::printf("%s\n", RepoName(i, o.orgs).Id().c_str());
  }
}

}  // namespace
}  // namespace hangar::bench

int main(int argc, char** argv) {
  auto opts = hangar::bench::ParseArgs(argc, argv);
  if (opts.sample > 0) {
    hangar::bench::PrintSample(opts);
    return 0;
  }
  auto r = hangar::bench::Run(opts);
  if (!r) {
    std::fprintf(stderr, "hangar-bulk-repos: %s\n", r.error().message.c_str());
    return 1;
  }
  return 0;
}
