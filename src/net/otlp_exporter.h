#pragma once
// SpanExporter: sends spans to an OpenTelemetry collector by OTLP/HTTP with JSON bodies
// (opentelemetry-proto's ExportTraceServiceRequest in its JSON mapping: ids as hex, times
// as decimal strings; issue 17 §4). Spans are queued and sent in batches from a thread of
// its own, so a request never waits for the collector; when the queue is full (the
// collector is slow or down) new spans are dropped and counted.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hangar::net {

// One finished span. Times in unix nanoseconds.
struct Span {
  std::string trace_id;   // 32 hex
  std::string span_id;    // 16 hex
  std::string parent_id;  // 16 hex, or "" for a root
  std::string name;       // "GET /api/models/{ns}/{name}"
  int kind = 2;           // OTLP SpanKind: 2 = server, 3 = client
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool error = false;  // status ERROR (a 5xx answer)
  std::vector<std::pair<std::string, std::string>> string_attributes;
  std::vector<std::pair<std::string, int64_t>> int_attributes;
};

struct SpanExporterOptions {
  std::string endpoint;  // e.g. "http://collector:4318/v1/traces"
  std::string service_name = "hangar";
  size_t max_queue = 8192;    // spans waiting; beyond, new ones are dropped
  size_t max_batch = 512;     // spans per request to the collector
  int flush_ms = 1000;        // a partial batch waits at most this long
  int timeout_ms = 2000;      // per request to the collector
  int last_timeout_ms = 500;  // for the last batch, sent while the process stops
};

// Thread-safe. The destructor sends one last batch of what is queued and joins the thread:
// with a collector that does not answer, a stop waits at most timeout_ms (a request in
// flight) + last_timeout_ms.
class SpanExporter {
 public:
  explicit SpanExporter(SpanExporterOptions options);
  ~SpanExporter();
  SpanExporter(const SpanExporter&) = delete;
  SpanExporter& operator=(const SpanExporter&) = delete;

  // Queues `span` (never blocks on the network).
  void Add(Span span);

  // The OTLP JSON body of `spans` (ExportTraceServiceRequest), for tests.
  static std::string Encode(const std::vector<Span>& spans, const std::string& service_name);

 private:
  void Run();

  const SpanExporterOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Span> queue_;  // guarded by mu_
  uint64_t dropped_ = 0;    // guarded by mu_: since the last warning
  bool stopping_ = false;   // guarded by mu_
  std::thread thread_;      // last: started once the members above exist
};

}  // namespace hangar::net
