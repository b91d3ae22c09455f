#pragma once
// Test helper: a real S3 endpoint (Ceph's RADOS gateway on a one-node cluster, started by
// scripts/s3-server.sh on 127.0.0.1). Tests that need S3 call S3Server::Shared().
//
// Under CTest the cluster is a fixture shared by every S3 test (tests/CMakeLists.txt):
// HANGAR_TEST_S3_ENV names the s3.env file it wrote. A binary run by hand starts its own
// cluster in a temporary directory (~15 s) and stops it at exit.

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "testing/subprocess.h"

#ifndef HANGAR_S3_SERVER_SCRIPT
#error "HANGAR_S3_SERVER_SCRIPT must name scripts/s3-server.sh"
#endif

namespace hangar::testing {

class S3Server {
 public:
  // The process-wide endpoint; nullptr with `*error` set when it cannot be had.
  static S3Server* Shared(std::string* error) {
    static std::string start_error;
    static std::unique_ptr<S3Server> server = Open(&start_error);
    if (!server && error != nullptr) *error = start_error;
    return server.get();
  }

  ~S3Server() {
    if (own_dir_.empty()) return;
    ChildProcess stop;
    if (stop.Start({HANGAR_S3_SERVER_SCRIPT, "stop", own_dir_})) {
      for (int i = 0; i < 300 && !stop.Exited(); ++i) ::usleep(50 * 1000);
    }
    std::error_code ec;
    std::filesystem::remove_all(own_dir_, ec);
  }

  const std::string& endpoint() const { return endpoint_; }  // "http://127.0.0.1:<port>"
  const std::string& region() const { return region_; }
  const std::string& access_key() const { return access_key_; }
  const std::string& secret_key() const { return secret_key_; }

 private:
  S3Server() = default;

  static std::unique_ptr<S3Server> Open(std::string* error) {
    if (const char* env = std::getenv("HANGAR_TEST_S3_ENV"); env != nullptr && *env != '\0') {
      std::ifstream in(env);
      if (!in) {
        *error = std::string("HANGAR_TEST_S3_ENV names ") + env +
                 ", which cannot be read (did the s3_server_start fixture fail?)";
        return nullptr;
      }
      return FromEnvLines(in, error);
    }
    return StartOwn(error);
  }

  // KEY=VALUE lines as scripts/s3-server.sh prints them.
  static std::unique_ptr<S3Server> FromEnvLines(std::istream& in, std::string* error) {
    std::map<std::string, std::string> kv;
    for (std::string line; std::getline(in, line);) {
      auto eq = line.find('=');
      if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    auto s = std::unique_ptr<S3Server>(new S3Server());
    s->endpoint_ = kv["S3_ENDPOINT"];
    s->region_ = kv["S3_REGION"];
    s->access_key_ = kv["S3_ACCESS_KEY"];
    s->secret_key_ = kv["S3_SECRET_KEY"];
    if (s->endpoint_.empty() || s->access_key_.empty() || s->secret_key_.empty()) {
      *error = "the S3 server's env lines lack S3_ENDPOINT / S3_ACCESS_KEY / S3_SECRET_KEY";
      return nullptr;
    }
    return s;
  }

  static std::unique_ptr<S3Server> StartOwn(std::string* error) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hangar-s3.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      *error = "mkdtemp failed";
      return nullptr;
    }
    ChildProcess start;
    if (!start.Start(
            {HANGAR_S3_SERVER_SCRIPT, "start", tmpl, "--watch", std::to_string(::getpid())})) {
      *error = "cannot run " HANGAR_S3_SERVER_SCRIPT;
      return nullptr;
    }
    std::string out;
    while (auto line = start.ReadLine(std::chrono::seconds(120))) out += *line + "\n";
    for (int i = 0; i < 100 && !start.Exited(); ++i) ::usleep(50 * 1000);
    std::istringstream lines(out);
    auto s = FromEnvLines(lines, error);
    if (!s) {
      *error = HANGAR_S3_SERVER_SCRIPT " start did not bring up S3 (its messages are above)";
      std::error_code ec;
      std::filesystem::remove_all(tmpl, ec);
      return nullptr;
    }
    s->own_dir_ = tmpl;
    return s;
  }

  std::string endpoint_, region_, access_key_, secret_key_;
  std::string own_dir_;  // set when this process started the cluster
};

}  // namespace hangar::testing
