#pragma once
// RuntimeSupervisor: backends Hangar runs itself (issue 16, docs/gateway.md §Supervised
// runtimes). A runtime template (config [runtimes.<name>]) is a command; for each model
// version a route's runtime backend serves, the supervisor materializes the version's files
// into a snapshot directory (hard links to the blob store's objects where it is local,
// else copies), starts the command with the snapshot's path and a free port, waits for its
// readiness path, restarts it with backoff when it dies, and drains it (no new requests,
// then SIGTERM once its requests ended) when its route moves to another version.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/principal.h"
#include "core/result.h"
#include "db/registry_store.h"
#include "services/content/content_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// A runtime template (the values of config.h RuntimeTemplate).
struct RuntimeSpec {
  std::vector<std::string> command;  // {snapshot} {port} {model} {version} replaced
  std::string protocol = "oip";
  std::string ready_path;  // "" = /v2/health/ready (oip) or /health (openai)
  int start_timeout_s = 60;
};

struct SupervisorOptions {
  std::filesystem::path dir;  // <data>/runtimes: snapshots/ and logs/
  std::map<std::string, RuntimeSpec> templates;
  std::chrono::milliseconds drain_timeout{30000};  // SIGTERM then, requests or not
  std::chrono::milliseconds tick{100};             // how often processes are looked at
};

// What the metrics and the route detail show of one runtime process.
struct RuntimeState {
  std::string runtime;  // the template
  std::string model;
  int64_t version = 0;
  std::string state;  // starting | ready | failed | draining
  int port = 0;
  int64_t restarts = 0;
  int in_flight = 0;
  std::string error;   // why it failed or last died
  std::string detail;  // the end of its log (for site admins: it names paths of the host)
};

// Thread-safe; one per process. The runtimes stop (SIGTERM, then SIGKILL) with it.
class RuntimeSupervisor {
 public:
  // A request's hold on a ready runtime: the runtime is not stopped while one exists.
  struct Lease {
    std::string url;             // http://127.0.0.1:<port>
    std::shared_ptr<void> hold;  // released when the request ends
  };

  RuntimeSupervisor(RepoService& repos, ContentService& content, SupervisorOptions options);
  ~RuntimeSupervisor();

  // The protocol of template `name`, or "" when there is no such template.
  std::string ProtocolOf(const std::string& name) const;
  // A ready runtime of template `runtime` serving `version` of `model`, started (and waited
  // for, at most `wait`) when none is. Errors: NotFound (no such template), Unavailable (it
  // failed to start or died: the message says why, with the end of its log when
  // `detailed`), GatewayTimeout (not ready in time).
  Result<Lease> Acquire(const std::string& runtime, const std::string& model,
                        const db::VersionRecord& version, std::chrono::milliseconds wait,
                        bool detailed);
  // What the routes want now: (runtime, model) pairs each at one version. A runtime of a
  // wanted pair at another version is drained once unused for kSupersededGrace (a request
  // naming that version, `route@alias`, keeps it); one of a pair no route names any more
  // once unused for a minute, or at once when it is failing. Missing ones are started.
  static constexpr std::chrono::seconds kSupersededGrace{5};
  struct Want {
    std::string runtime, model;
    db::VersionRecord version;
  };
  void Retain(const std::vector<Want>& wanted);
  std::vector<RuntimeState> States();

 private:
  struct Instance;
  std::shared_ptr<Instance> Ensure(const std::string& runtime, const std::string& model,
                                   const db::VersionRecord& v);  // mu_ held
  void Loop();
  struct Spawned;
  // One look at a process, with mu_ held by `lock`; the slow parts (a snapshot, a start, a
  // probe, a stop) run with it released.
  void Step(std::unique_lock<std::mutex>& lock, Instance& in);
  void StepStarting(std::unique_lock<std::mutex>& lock, Instance& in);
  // Marks `in` failed for `why`, to start again after `backoff`; keeps its log's end.
  void Fail(Instance& in, std::string why, std::chrono::steady_clock::duration backoff);
  // These read only what never changes in an instance: no lock needed.
  Result<Spawned> Start(const Instance& in);  // snapshot, spawn
  Result<std::filesystem::path> Snapshot(const Instance& in);
  static void Stop(pid_t pid);  // SIGTERM to its group, wait, SIGKILL

  RepoService& repos_;
  ContentService& content_;
  SupervisorOptions options_;
  std::mutex mu_;  // guards instances_ and stop_
  std::condition_variable changed_;
  std::map<std::string, std::shared_ptr<Instance>> instances_;  // by runtime/model/version
  bool stop_ = false;
  std::thread loop_;
};

}  // namespace hangar::services
