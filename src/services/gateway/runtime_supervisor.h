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
  std::string error;  // why it failed or last died, with the end of its log
};

// Thread-safe; one per process. The runtimes stop (SIGTERM, then SIGKILL) with it.
class RuntimeSupervisor {
 public:
  // A request's hold on a ready runtime: the runtime is not stopped while one exists.
  struct Lease {
    std::string url;              // http://127.0.0.1:<port>
    std::shared_ptr<void> hold;  // released when the request ends
  };

  RuntimeSupervisor(RepoService& repos, ContentService& content, SupervisorOptions options);
  ~RuntimeSupervisor();

  // The protocol of template `name`, or "" when there is no such template.
  std::string ProtocolOf(const std::string& name) const;
  // A ready runtime of template `runtime` serving `version` of `model`, started (and waited
  // for, at most `wait`) when none is. Errors: NotFound (no such template), Unavailable (it
  // failed to start or died: the message says why), GatewayTimeout (not ready in time).
  Result<Lease> Acquire(const std::string& runtime, const std::string& model,
                        const db::VersionRecord& version, std::chrono::milliseconds wait);
  // What the routes want now: (runtime, model) pairs each at one version. A runtime of a
  // wanted pair at another version is drained; one of a pair no route names any more is
  // drained once unused for a minute. Missing ones are started.
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
  void Step(Instance& in);                            // one look at a process
  Result<void> Start(Instance& in);                   // snapshot, spawn
  Result<std::filesystem::path> Snapshot(Instance& in);
  void Stop(Instance& in);                            // SIGTERM, wait, SIGKILL

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
