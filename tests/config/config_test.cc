#include "config/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace hangar::config {
namespace {

// An injectable environment.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::function<std::optional<std::string>(const std::string&)> Lookup() const {
    return [this](const std::string& name) -> std::optional<std::string> {
      auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
};

LoadOptions Options(const FakeEnv& env, std::optional<std::string> toml = std::nullopt) {
  LoadOptions o;
  o.getenv = env.Lookup();
  o.config_toml = std::move(toml);
  return o;
}

std::string ErrorOf(const Result<Config>& r) {
  EXPECT_FALSE(r.has_value());
  if (r.has_value()) return "";
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest) << r.error().message;
  return r.error().message;
}

TEST(LoadConfig, DefaultsStartAWorkingHub) {
  FakeEnv env;
  Config c = LoadConfig(Options(env)).value();
  EXPECT_EQ(c.server.listen, "127.0.0.1:8080");
  EXPECT_EQ(c.server.public_url, "");
  EXPECT_GE(c.server.threads, 1);  // 0 resolved to the core count
  EXPECT_GE(c.server.worker_threads, 8);
  EXPECT_EQ(c.server.max_header_bytes, 16384);
  EXPECT_EQ(c.server.idle_timeout_s, 60);
  EXPECT_EQ(c.server.shutdown_grace_s, 30);
  EXPECT_EQ(c.storage.data_dir, "./hangar-data");
  EXPECT_EQ(c.storage.blobs, BlobsKind::Local);
  EXPECT_EQ(c.storage.download_mode, DownloadMode::Proxy);
  EXPECT_EQ(c.storage.upload_mode, UploadMode::Proxy);
  EXPECT_EQ(c.database.sqlite_path, "./hangar-data/hangar.db");
  EXPECT_EQ(c.database.url, "");
  EXPECT_EQ(c.limits.pack_concurrency, 3);
  EXPECT_EQ(c.limits.pack_per_principal, 2);
  EXPECT_EQ(c.limits.pack_queue, 32);
  EXPECT_EQ(c.limits.pack_queue_wait_s, 60);
  EXPECT_EQ(c.limits.push_concurrency, 2);
  EXPECT_EQ(c.limits.password_hash_concurrency, 2);
  EXPECT_EQ(c.limits.max_json_body_bytes, 10 * 1024 * 1024);
  EXPECT_EQ(c.limits.max_lfs_batch_objects, 1000);
  EXPECT_EQ(c.limits.max_upload_bytes, 0);
  EXPECT_EQ(c.auth.ticket_ttl_s, 3600);
  EXPECT_EQ(c.auth.secret_file, "./hangar-data/secret");
  EXPECT_EQ(c.cache.entries, 100000);
  EXPECT_EQ(c.log.level, "info");
  EXPECT_TRUE(c.log.access_log);
}

TEST(LoadConfig, TomlOverridesDefaults) {
  FakeEnv env;
  Config c = LoadConfig(Options(env, R"(
[server]
listen = "0.0.0.0:9000"
public_url = "https://hub.example.com/"
threads = 4
worker_threads = 16

[storage]
data_dir = "/srv/hangar"
download_mode = "redirect"

[limits]
pack_queue = 64
max_json_body_bytes = "2MiB"
max_upload_bytes = 1073741824

[log]
level = "debug"
access_log = false
)"))
                 .value();
  EXPECT_EQ(c.server.listen, "0.0.0.0:9000");
  EXPECT_EQ(c.server.public_url, "https://hub.example.com");  // trailing '/' dropped
  EXPECT_EQ(c.server.threads, 4);
  EXPECT_EQ(c.server.worker_threads, 16);
  EXPECT_EQ(c.storage.data_dir, "/srv/hangar");
  EXPECT_EQ(c.storage.download_mode, DownloadMode::Redirect);
  EXPECT_EQ(c.database.sqlite_path, "/srv/hangar/hangar.db");  // follows data_dir
  EXPECT_EQ(c.auth.secret_file, "/srv/hangar/secret");
  EXPECT_EQ(c.limits.pack_queue, 64);
  EXPECT_EQ(c.limits.max_json_body_bytes, 2 * 1024 * 1024);
  EXPECT_EQ(c.limits.max_upload_bytes, int64_t{1} << 30);
  EXPECT_EQ(c.limits.pack_concurrency, 3);  // untouched keys keep their defaults
  EXPECT_EQ(c.log.level, "debug");
  EXPECT_FALSE(c.log.access_log);
}

TEST(LoadConfig, ReadsATomlFile) {
  auto path = std::filesystem::temp_directory_path() /
              ("hangar-config-test-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << "[database]\nurl = \"postgres://u@db/hangar\"\n";
  FakeEnv env;
  LoadOptions o = Options(env);
  o.config_file = path;
  Config c = LoadConfig(o).value();
  EXPECT_EQ(c.database.url, "postgres://u@db/hangar");

  // HANGAR_CONFIG names the file when no --config was given.
  FakeEnv with_var{{{"HANGAR_CONFIG", path.string()}}};
  EXPECT_EQ(LoadConfig(Options(with_var)).value().database.url, "postgres://u@db/hangar");
  std::filesystem::remove(path);

  o.config_file = path;
  std::string message = ErrorOf(LoadConfig(o));
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("cannot be read"), std::string::npos) << message;
}

TEST(LoadConfig, EnvironmentOverridesToml) {
  FakeEnv env{{{"HANGAR_LISTEN", "127.0.0.1:7000"},
               {"HANGAR_DATA_DIR", "/data"},
               {"HANGAR_PUBLIC_URL", "http://hub:7000"},
               {"HANGAR_LOG_LEVEL", "warn"},
               {"HANGAR_LIMITS_PACK_QUEUE", "5"},
               {"HANGAR_LOG_ACCESS_LOG", "off"},
               {"HANGAR_STORAGE_UPLOAD_MODE", "direct"}}};
  Config c = LoadConfig(Options(env, R"(
[server]
listen = "127.0.0.1:9000"
[limits]
pack_queue = 64
push_concurrency = 4
)"))
                 .value();
  EXPECT_EQ(c.server.listen, "127.0.0.1:7000");
  EXPECT_EQ(c.storage.data_dir, "/data");
  EXPECT_EQ(c.server.public_url, "http://hub:7000");
  EXPECT_EQ(c.log.level, "warn");
  EXPECT_EQ(c.limits.pack_queue, 5);
  EXPECT_EQ(c.limits.push_concurrency, 4);  // TOML value not shadowed by any variable
  EXPECT_FALSE(c.log.access_log);
  EXPECT_EQ(c.storage.upload_mode, UploadMode::Direct);
}

TEST(LoadConfig, LongEnvironmentNamesBeatShortOnes) {
  FakeEnv env{{{"HANGAR_LISTEN", "127.0.0.1:7000"}, {"HANGAR_SERVER_LISTEN", "127.0.0.1:7001"}}};
  EXPECT_EQ(LoadConfig(Options(env)).value().server.listen, "127.0.0.1:7001");
}

TEST(LoadConfig, FlagsOverrideEnvironment) {
  FakeEnv env{{{"HANGAR_LISTEN", "127.0.0.1:7000"}, {"HANGAR_CACHE_ENTRIES", "5"}}};
  LoadOptions o = Options(env, "[cache]\nentries = 7\n");
  o.overrides = {{"server.listen", "127.0.0.1:0"}, {"cache.entries", "9"}};
  Config c = LoadConfig(o).value();
  EXPECT_EQ(c.server.listen, "127.0.0.1:0");
  EXPECT_EQ(c.cache.entries, 9);
}

TEST(LoadConfig, UnknownKeysAreRejectedByName) {
  FakeEnv env;
  std::string m = ErrorOf(LoadConfig(Options(env, "[server]\nlisen = \"x:1\"\n")));
  EXPECT_NE(m.find("unknown key 'server.lisen'"), std::string::npos) << m;

  m = ErrorOf(LoadConfig(Options(env, "[servr]\nlisten = \"x:1\"\n")));
  EXPECT_NE(m.find("'servr.listen'"), std::string::npos) << m;

  m = ErrorOf(LoadConfig(Options(env, "listen = \"x:1\"\n")));
  EXPECT_NE(m.find("unknown key 'listen'"), std::string::npos) << m;

  m = ErrorOf(LoadConfig(Options(env, "[server.tls]\ncert = \"x\"\n")));
  EXPECT_NE(m.find("unknown key 'server.tls'"), std::string::npos) << m;

  LoadOptions o = Options(env);
  o.overrides = {{"server.bogus", "1"}};
  m = ErrorOf(LoadConfig(o));
  EXPECT_NE(m.find("unknown config key 'server.bogus'"), std::string::npos) << m;
}

TEST(LoadConfig, TomlSyntaxErrorsGiveALine) {
  FakeEnv env;
  std::string m = ErrorOf(LoadConfig(Options(env, "[server]\nlisten = \n")));
  EXPECT_NE(m.find("(inline):2:"), std::string::npos) << m;
}

TEST(LoadConfig, BadValuesAreRejected) {
  FakeEnv env;
  struct Case {
    std::string toml;
    std::string expect;  // a substring of the message
  };
  const Case cases[] = {
      {"[server]\nthreads = -1\n", "server.threads: must be between 0 and 1024, got -1"},
      {"[server]\nthreads = \"four\"\n", "server.threads: expected an integer, got 'four'"},
      {"[server]\nthreads = 1.5\n", "server.threads: unsupported value type"},
      {"[server]\nlisten = 8080\n", "server.listen: expected a string, got an integer"},
      {"[server]\nlisten = \"localhost\"\n", "needs a port"},
      {"[server]\nlisten = \"127.0.0.1:99999\"\n", "port must be at most 65535"},
      {"[server]\npublic_url = \"hub.example.com\"\n", "server.public_url: expected an http"},
      {"[storage]\nblobs = \"ftp\"\n", "storage.blobs: expected one of local, s3; got 'ftp'"},
      {"[storage]\ndownload_mode = \"Proxy\"\n", "expected one of proxy, redirect"},
      {"[storage]\ndata_dir = \"\"\n", "storage.data_dir: must not be empty"},
      {"[limits]\nmax_upload_bytes = -5\n", "limits.max_upload_bytes: must be between 0"},
      {"[limits]\nmax_json_body_bytes = \"10 apples\"\n", "expected a byte count"},
      {"[limits]\npack_concurrency = 0\n", "limits.pack_concurrency: must be between 1"},
      {"[database]\nurl = \"mysql://x\"\n", "database.url"},
      {"[log]\nlevel = \"loud\"\n", "log.level: expected one of trace, debug, info"},
      {"[log]\naccess_log = \"maybe\"\n", "expected true or false, got 'maybe'"},
      {"[log]\naccess_format = \"xml\"\n", "log.access_format: expected one of text, json"},
      {"[log]\notlp_endpoint = \"garbage\"\n", "log.otlp_endpoint: expected an http"},
      {"[log]\notlp_endpoint = \"ftp://127.0.0.1:1/x\"\n", "log.otlp_endpoint: expected an http"},
      {"[log]\notlp_endpoint = \"http://\"\n", "has no host"},
      {"[log]\notlp_endpoint = \"http://[::1\"\n", "no closing ']'"},
      {"[jobs]\nthreads = 0\n", "jobs.threads: must be between 1"},
      {"[cache]\nttl_ms = -1\n", "cache.ttl_ms: must be between 0"},
      {"[server]\ndrain_delay_ms = -1\n", "server.drain_delay_ms: must be between 0"},
  };
  for (const Case& tc : cases) {
    std::string m = ErrorOf(LoadConfig(Options(env, tc.toml)));
    EXPECT_NE(m.find(tc.expect), std::string::npos) << tc.toml << " → " << m;
    EXPECT_NE(m.find("config file (inline)"), std::string::npos) << m;
  }
}

TEST(LoadConfig, BadEnvironmentValuesNameTheVariable) {
  FakeEnv env{{{"HANGAR_SERVER_IDLE_TIMEOUT_S", "-3"}}};
  std::string m = ErrorOf(LoadConfig(Options(env)));
  EXPECT_EQ(m, "HANGAR_SERVER_IDLE_TIMEOUT_S: must be between 1 and 86400, got -3");

  FakeEnv listen{{{"HANGAR_LISTEN", "nonsense"}}};
  m = ErrorOf(LoadConfig(Options(listen)));
  EXPECT_NE(m.find("HANGAR_LISTEN: listen address 'nonsense' needs a port"), std::string::npos)
      << m;
}

TEST(LoadConfig, HugeIntegersDoNotWrapIntoRange) {
  FakeEnv env{{{"HANGAR_SERVER_THREADS", "4294967297"}}};  // 2^32 + 1
  std::string m = ErrorOf(LoadConfig(Options(env)));
  EXPECT_NE(m.find("must be between 0 and 1024"), std::string::npos) << m;
}

TEST(LoadConfig, BodyLimitsAreReadAndMustFitTheBudget) {
  FakeEnv env{{{"HANGAR_LIMITS_MIN_BODY_RATE", "2KiB"}, {"HANGAR_LIMITS_BODY_RATE_WINDOW_S", "5"}}};
  auto c = LoadConfig(Options(env));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->limits.min_body_rate, 2048);
  EXPECT_EQ(c->limits.body_rate_window_s, 5);
  EXPECT_EQ(c->limits.body_buffer_bytes, 1 << 20);
  EXPECT_EQ(c->limits.connections_per_ip, 256);
  FakeEnv small{
      {{"HANGAR_LIMITS_BODY_MEMORY_BYTES", "1MiB"}, {"HANGAR_LIMITS_BODY_BUFFER_BYTES", "2MiB"}}};
  std::string m = ErrorOf(LoadConfig(Options(small)));
  EXPECT_NE(m.find("limits.body_memory_bytes: must be at least limits.body_buffer_bytes"),
            std::string::npos)
      << m;
}

TEST(ToToml, RoundTripsThroughLoadConfig) {
  FakeEnv env{{{"HANGAR_PUBLIC_URL", "https://hub.example.com"},
               {"HANGAR_DATA_DIR", "/srv/a \"quoted\" dir"},
               {"HANGAR_STORAGE_BLOBS", "s3"},
               {"HANGAR_LOG_ACCESS_LOG", "false"}}};
  Config a = LoadConfig(Options(env)).value();
  std::string text = ToToml(a);
  EXPECT_NE(text.find("[limits]\npack_concurrency = 3\n"), std::string::npos) << text;
  Config b = LoadConfig(Options(FakeEnv{}, text)).value();
  EXPECT_EQ(ToToml(b), text);
  EXPECT_EQ(b.storage.data_dir, "/srv/a \"quoted\" dir");
  EXPECT_EQ(b.storage.blobs, BlobsKind::S3);
  EXPECT_FALSE(b.log.access_log);
}

TEST(SetKey, ParsesLikeAFlag) {
  Config c;
  ASSERT_TRUE(SetKey(c, "limits.max_upload_bytes", "5GiB").has_value());
  EXPECT_EQ(c.limits.max_upload_bytes, int64_t{5} << 30);
  EXPECT_EQ(SetKey(c, "limits.nope", "1").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(SetKey(c, "server.threads", "2000").error().message,
            "server.threads: must be between 0 and 1024, got 2000");
}

TEST(ParseOverride, SplitsAtTheFirstEquals) {
  auto kv = ParseOverride("server.public_url=http://h/?a=b").value();
  EXPECT_EQ(kv.first, "server.public_url");
  EXPECT_EQ(kv.second, "http://h/?a=b");
  EXPECT_EQ(ParseOverride("log.level=").value().second, "");
  EXPECT_EQ(ParseOverride("nokey").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(ParseOverride("=v").error().code, ErrorCode::BadRequest);
}

TEST(ParseListen, Forms) {
  EXPECT_EQ(ParseListen("127.0.0.1:8080").value(),
            (std::pair<std::string, uint16_t>("127.0.0.1", 8080)));
  EXPECT_EQ(ParseListen("[::1]:0").value(), (std::pair<std::string, uint16_t>("::1", 0)));
  EXPECT_EQ(ParseListen("localhost:80").value(),
            (std::pair<std::string, uint16_t>("localhost", 80)));
  EXPECT_EQ(ParseListen("0.0.0.0:65535").value().second, 65535);
  for (std::string_view bad :
       {"", ":8080", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:80a", "::1:8080",
        "[::1]", "[::1]8080", "[::1:80", "[]:80", "[host]:80", "bad host:80", "h:-1"}) {
    auto r = ParseListen(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
    EXPECT_NE(r.error().message.find(std::string(bad)), std::string::npos) << r.error().message;
  }
  EXPECT_NE(ParseListen("::1:8080").error().message.find("brackets"), std::string::npos);
}

}  // namespace
}  // namespace hangar::config

namespace hangar::config {
namespace {

TEST(LoadConfig, ReadsRuntimeTemplates) {
  FakeEnv env;
  auto c = LoadConfig(Options(env, R"(
[runtimes.onnx]
command = ["node", "server.mjs", "--model-dir", "{snapshot}", "--port", "{port}"]
start_timeout_s = 20

[runtimes.chat]
command = ["vllm", "serve", "{snapshot}"]
protocol = "openai"
ready_path = "/ping"
)"));
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->runtimes.size(), 2u);
  const RuntimeTemplate& onnx = c->runtimes.at("onnx");
  EXPECT_EQ(onnx.command.size(), 6u);
  EXPECT_EQ(onnx.command[3], "{snapshot}");
  EXPECT_EQ(onnx.protocol, "oip");
  EXPECT_EQ(onnx.start_timeout_s, 20);
  EXPECT_EQ(c->runtimes.at("chat").protocol, "openai");
  EXPECT_EQ(c->runtimes.at("chat").ready_path, "/ping");
}

TEST(LoadConfig, RefusesBadRuntimeTemplates) {
  struct Case {
    const char* toml;
    const char* says;
  } cases[] = {
      {"[runtimes.x]\nprotocol = \"oip\"\n", "command is required"},
      {"[runtimes.x]\ncommand = [\"a\", 3]\n", "every element is a string"},
      {"[runtimes.x]\ncommand = [\"a\"]\nprotocol = \"grpc\"\n", "oip or openai"},
      {"[runtimes.x]\ncommand = [\"a\"]\nstart_timeout_s = 0\n", "from 1 to 3600"},
      {"[runtimes.x]\ncommand = [\"a\"]\nready_path = \"health\"\n", "start with '/'"},
      {"[runtimes.x]\ncommand = [\"a\"]\nport = 1\n", "unknown key"},
      {"[runtimes]\nx = 1\n", "must be a table"},
  };
  FakeEnv env;
  for (const auto& k : cases) {
    auto c = LoadConfig(Options(env, k.toml));
    ASSERT_FALSE(c) << k.toml;
    EXPECT_NE(c.error().message.find(k.says), std::string::npos) << c.error().message;
  }
}

}  // namespace
}  // namespace hangar::config
