#include "cli/oci_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "client/oci_client.h"
#include "client/oci_transfer.h"
#include "client/progress.h"

namespace hangar::cli {
namespace {

namespace fs = std::filesystem;

// Flags both commands take.
struct OciFlags {
  std::string ref;
  std::string token, username, password;
  bool plain_http = false;
  int workers = client::kDefaultOciWorkers;
  bool quiet = false;
  bool verbose = false;
};

struct PushFlags {
  std::vector<std::string> paths;
  std::string part_size;
  std::vector<std::string> annotations;
  bool no_resume = false;
  bool file_sha256 = false;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The credentials for `registry`: --username/--password, else --token / $HANGAR_TOKEN
// (as the password of user "hangar", or of --username), else the Docker config file.
Result<client::Credentials> ResolveCredentials(const OciFlags& f, const std::string& registry) {
  std::string token = f.token.empty() ? Env("HANGAR_TOKEN") : f.token;
  if (!f.password.empty() && f.username.empty()) {
    return MakeError(ErrorCode::BadRequest, "--password needs --username");
  }
  if (!f.username.empty()) {
    std::string password = f.password.empty() ? token : f.password;
    if (password.empty()) {
      return MakeError(ErrorCode::BadRequest, "--username needs --password or --token");
    }
    return client::Credentials{f.username, password};
  }
  if (!token.empty()) {
    return client::Credentials{"hangar", token, "the token of --token / $HANGAR_TOKEN"};
  }
  std::string dir = Env("DOCKER_CONFIG");
  fs::path config = !dir.empty() ? fs::path(dir) / "config.json"
                                 : fs::path(Env("HOME")) / ".docker" / "config.json";
  std::ifstream in(config);
  if (!in) return client::Credentials{};  // anonymous
  std::stringstream ss;
  ss << in.rdbuf();
  auto found = client::DockerConfigCredentials(ss.str(), registry);
  if (!found) {
    return MakeError(ErrorCode::BadRequest, config.string() + ": " + found.error().message);
  }
  return found->value_or(client::Credentials{});
}

// --verbose: "oci: <line>" on stderr.
std::function<void(std::string_view)> VerboseLog(const OciFlags& f) {
  if (!f.verbose) return nullptr;
  return [](std::string_view line) {
    std::fprintf(stderr, "oci: %.*s\n", static_cast<int>(line.size()), line.data());
  };
}

Result<std::unique_ptr<client::OciClient>> MakeClient(const OciFlags& f, client::OciRef& ref) {
  HANGAR_ASSIGN_OR_RETURN(ref, client::OciRef::Parse(f.ref));
  if (f.workers < 1 || f.workers > 64) {
    return MakeError(ErrorCode::BadRequest, "--workers must be between 1 and 64");
  }
  client::OciClientOptions o;
  o.registry = ref.registry;
  o.plain_http = f.plain_http;
  HANGAR_ASSIGN_OR_RETURN(o.credentials, ResolveCredentials(f, ref.registry));
  o.log = VerboseLog(f);
  return std::make_unique<client::OciClient>(std::move(o));
}

bool ShowProgress(const OciFlags& f) {
  return !f.quiet && !f.verbose && ::isatty(STDERR_FILENO) == 1;
}

int RunPush(const OciFlags& f, const PushFlags& p) {
  client::OciRef ref;
  auto c = MakeClient(f, ref);
  if (!c) return Fail(c.error());
  client::OciPushOptions opts;
  for (const auto& path : p.paths) opts.paths.emplace_back(path);
  if (!p.part_size.empty()) {
    auto ps = client::ParseByteSize(p.part_size);
    if (!ps) {
      return Fail(MakeError(ErrorCode::BadRequest, "--part-size '" + p.part_size +
                                                       "' is not a size like 64M, 1G or 1048576"));
    }
    opts.part_size = *ps;
  }
  for (const auto& a : p.annotations) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(MakeError(ErrorCode::BadRequest, "--annotation '" + a + "' is not key=value"));
    }
    opts.annotations[a.substr(0, eq)] = a.substr(eq + 1);
  }
  opts.workers = f.workers;
  opts.file_sha256 = p.file_sha256;
  if (!p.no_resume) opts.resume_dir = client::DefaultOciResumeDir();
  client::Progress progress(ShowProgress(f));
  opts.progress = &progress;
  opts.log = VerboseLog(f);
  auto done = client::OciPush(**c, ref, opts);
  progress.Finish();
  if (!done) return Fail(done.error());
  if (!f.quiet) {
    std::fprintf(stderr, "pushed %zu file(s) in %zu part(s): %zu sent, %zu already there\n",
                 done->files, done->parts, done->parts_sent, done->parts_skipped);
  }
  std::printf("%s/%s@%s\n", ref.registry.c_str(), ref.repository.c_str(),
              done->manifest_digest.c_str());
  return 0;
}

int RunPull(const OciFlags& f, const std::string& output) {
  client::OciRef ref;
  auto c = MakeClient(f, ref);
  if (!c) return Fail(c.error());
  client::OciPullOptions opts;
  opts.output = output.empty() ? fs::path(".") : fs::path(output);
  opts.workers = f.workers;
  client::Progress progress(ShowProgress(f));
  opts.progress = &progress;
  opts.log = VerboseLog(f);
  auto done = client::OciPull(**c, ref, opts);
  progress.Finish();
  if (!done) return Fail(done.error());
  if (!f.quiet) {
    std::fprintf(stderr, "pulled %zu file(s) in %zu part(s) from %s", done->files, done->parts,
                 done->manifest_digest.c_str());
    if (done->layers_skipped > 0)
      std::fprintf(stderr, " (%zu untitled layer(s) skipped)", done->layers_skipped);
    std::fprintf(stderr, "\n");
  }
  std::printf("%s\n", opts.output.string().c_str());
  return 0;
}

void AddCommon(CLI::App* sub, OciFlags& f) {
  sub->add_option("REF", f.ref, "host[:port]/name[:tag|@digest]")->required();
  sub->add_option("--token", f.token,
                  "registry token (default $HANGAR_TOKEN), sent as the password of user "
                  "'hangar' or of --username");
  sub->add_option("--username,-u", f.username, "user name");
  sub->add_option("--password,-p", f.password, "password");
  sub->add_flag("--plain-http", f.plain_http,
                "http:// (automatic for 127.0.0.1, localhost and ::1)");
  sub->add_option("--workers", f.workers,
                  "parts in flight (default " + std::to_string(client::kDefaultOciWorkers) + ")");
  sub->add_flag("--quiet,-q", f.quiet, "no progress bar or summary");
  sub->add_flag("--verbose,-v", f.verbose, "one line per request on stderr");
}

}  // namespace

void AddOciCommands(CLI::App& app, std::optional<int>* exit_code) {
  // Owned for the life of the process: CLI11 binds to these addresses.
  static OciFlags push_flags, pull_flags;
  static PushFlags push;
  static std::string output;

  auto* oci = app.add_subcommand("oci", "push and pull files to and from OCI registries");
  oci->require_subcommand(1);

  auto* push_cmd = oci->add_subcommand("push", "push files as an OCI artifact, in parallel parts");
  AddCommon(push_cmd, push_flags);
  push_cmd->add_option("PATH", push.paths, "files or directories")->required();
  push_cmd->add_option("--part-size", push.part_size,
                       "bytes per layer; suffixes K, M, G (default " +
                           std::to_string(client::kDefaultOciPartSize >> 20) + "M)");
  push_cmd->add_option("--annotation,-a", push.annotations, "manifest annotation key=value");
  push_cmd->add_flag("--no-resume", push.no_resume,
                     "do not record finished parts for resuming (~/.cache/hangar/oci-push)");
  push_cmd->add_flag("--file-sha256", push.file_sha256,
                     "also annotate each multi-part file with its whole sha256 (one more "
                     "read and hash of the file, on its own thread)");
  push_cmd->callback([exit_code] { *exit_code = RunPush(push_flags, push); });

  auto* pull_cmd = oci->add_subcommand("pull", "pull an artifact's files into a directory");
  AddCommon(pull_cmd, pull_flags);
  pull_cmd->add_option("--output,-o", output, "target directory (default .)");
  pull_cmd->callback([exit_code] { *exit_code = RunPull(pull_flags, output); });
}

}  // namespace hangar::cli
