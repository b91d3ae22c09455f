#include "cli/client_commands.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "client/downloader.h"
#include "client/hub_client.h"
#include "client/progress.h"
#include "client/uploader.h"

namespace hangar::cli {
namespace {

// Flags both commands take.
struct ClientFlags {
  std::string repo_type = "model";
  std::string endpoint;
  std::string token;
  std::string part_size;
  int workers = client::kDefaultWorkers;
  std::string revision;
  bool quiet = false;
};

struct UploadFlags {
  std::string repo_id, local_path, path_in_repo, message;
};

struct DownloadFlags {
  std::string repo_id;
  std::vector<std::string> paths;
  std::string local_dir;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

int Fail(std::string_view message, const Error* e = nullptr) {
  std::fprintf(stderr, "hangar: %.*s\n", static_cast<int>(message.size()), message.data());
  if (e != nullptr && Describe(e->code).http_status >= 500) return 1;
  return 2;
}

// Endpoint, token, part size and repo from the flags and the environment.
struct Resolved {
  std::unique_ptr<client::HubClient> hub;
  client::RepoRef repo;
  uint64_t part_size = client::kDefaultPartSize;
};

Result<Resolved> Resolve(const ClientFlags& f, const std::string& repo_id) {
  Resolved r;
  HANGAR_ASSIGN_OR_RETURN(auto repo, client::RepoRef::Parse(f.repo_type, repo_id));
  r.repo = std::move(repo);
  std::string endpoint = f.endpoint;
  if (endpoint.empty()) endpoint = Env("HANGAR_ENDPOINT");
  if (endpoint.empty()) endpoint = "http://127.0.0.1:8080";
  if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
    return MakeError(ErrorCode::BadRequest, "endpoint '" + endpoint + "' is not an http(s) URL");
  }
  std::string token = f.token;
  if (token.empty()) token = Env("HANGAR_TOKEN");
  if (token.empty()) token = Env("HF_TOKEN");
  if (!f.part_size.empty()) {
    auto ps = client::ParseByteSize(f.part_size);
    if (!ps) {
      return MakeError(ErrorCode::BadRequest,
                       "--part-size '" + f.part_size + "' is not a size like 64M, 1G or 1048576");
    }
    r.part_size = *ps;
  }
  if (f.workers < 1 || f.workers > 64) {
    return MakeError(ErrorCode::BadRequest, "--workers must be between 1 and 64");
  }
  r.hub = std::make_unique<client::HubClient>(endpoint, token);
  return r;
}

void AddCommon(CLI::App* sub, ClientFlags& f) {
  sub->add_option("--repo-type", f.repo_type, "model, dataset or space (default model)")
      ->check(CLI::IsMember({"model", "dataset", "space"}));
  sub->add_option("--endpoint", f.endpoint,
                  "hub URL (default $HANGAR_ENDPOINT, else http://127.0.0.1:8080)");
  sub->add_option("--token", f.token, "access token (default $HANGAR_TOKEN, else $HF_TOKEN)");
  sub->add_option("--part-size", f.part_size,
                  "part size in bytes; suffixes K, M, G (default " +
                      std::to_string(client::kDefaultPartSize >> 20) + "M)");
  sub->add_option("--workers", f.workers,
                  "parallel requests (default " + std::to_string(client::kDefaultWorkers) + ")");
  sub->add_flag("--quiet,-q", f.quiet, "no progress bar");
}

bool ShowProgress(const ClientFlags& f) { return !f.quiet && ::isatty(STDERR_FILENO) == 1; }

int RunUpload(const ClientFlags& f, const UploadFlags& u) {
  auto r = Resolve(f, u.repo_id);
  if (!r) return Fail(r.error().message, &r.error());
  client::Progress progress(ShowProgress(f));
  client::UploadOptions opts;
  opts.local_path = u.local_path;
  opts.path_in_repo = u.path_in_repo;
  if (!f.revision.empty()) opts.revision = f.revision;
  opts.commit_message = u.message;
  opts.part_size = r->part_size;
  opts.workers = f.workers;
  opts.progress = &progress;
  auto done = client::Upload(*r->hub, r->repo, opts);
  progress.Finish();
  if (!done) return Fail(done.error().message, &done.error());
  if (!f.quiet) {
    std::fprintf(stderr, "uploaded %zu file(s) (%zu LFS; %llu part(s) sent, %llu already there)\n",
                 done->files, done->lfs_files, static_cast<unsigned long long>(done->parts_sent),
                 static_cast<unsigned long long>(done->parts_resumed));
  }
  std::printf("%s\n", done->commit_url.c_str());
  return 0;
}

int RunDownload(const ClientFlags& f, const DownloadFlags& d) {
  auto r = Resolve(f, d.repo_id);
  if (!r) return Fail(r.error().message, &r.error());
  client::Progress progress(ShowProgress(f));
  client::DownloadOptions opts;
  if (!f.revision.empty()) opts.revision = f.revision;
  opts.paths = d.paths;
  opts.local_dir = std::filesystem::path(d.local_dir.empty() ? r->repo.name : d.local_dir);
  opts.part_size = r->part_size;
  opts.workers = f.workers;
  opts.progress = &progress;
  auto done = client::Download(*r->hub, r->repo, opts);
  progress.Finish();
  if (!done) return Fail(done.error().message, &done.error());
  if (!f.quiet) {
    std::fprintf(stderr, "downloaded %zu file(s), %zu already present, at %s\n", done->files,
                 done->skipped, done->commit.c_str());
  }
  std::printf("%s\n", opts.local_dir.string().c_str());
  return 0;
}

}  // namespace

void AddClientCommands(CLI::App& app, std::optional<int>* exit_code) {
  // Owned for the life of the process: CLI11 binds to these addresses.
  static ClientFlags up_flags, down_flags;
  static UploadFlags up;
  static DownloadFlags down;

  auto* upload = app.add_subcommand("upload", "upload a file or directory to a repo (one commit)");
  upload->add_option("REPO_ID", up.repo_id, "namespace/name")->required();
  upload->add_option("LOCAL_PATH", up.local_path, "file or directory")->required();
  upload->add_option("PATH_IN_REPO", up.path_in_repo,
                     "where it goes (default: the file's name, or the root for a directory)");
  upload->add_option("--revision", up_flags.revision,
                     "branch to commit to, created if missing (default main)");
  upload->add_option("--commit-message", up.message, "commit summary");
  AddCommon(upload, up_flags);
  upload->callback([exit_code] { *exit_code = RunUpload(up_flags, up); });

  auto* download = app.add_subcommand("download", "download files of a repo");
  download->add_option("REPO_ID", down.repo_id, "namespace/name")->required();
  download->add_option("PATH", down.paths, "files or directories (default: all)");
  download->add_option("--revision", down_flags.revision, "branch, tag or commit (default main)");
  download->add_option("--local-dir", down.local_dir, "target directory (default ./<name>)");
  AddCommon(download, down_flags);
  download->callback([exit_code] { *exit_code = RunDownload(down_flags, down); });
}

}  // namespace hangar::cli
