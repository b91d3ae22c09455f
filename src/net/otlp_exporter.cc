#include "net/otlp_exporter.h"

#include <boost/json.hpp>

#include <chrono>

#include "core/log.h"
#include "net/http_client.h"

namespace hangar::net {
namespace json = boost::json;

namespace {

json::object StringAttribute(const std::string& key, const std::string& value) {
  return {{"key", key}, {"value", {{"stringValue", value}}}};
}

}  // namespace

SpanExporter::SpanExporter(SpanExporterOptions options)
    : options_(std::move(options)), thread_([this] { Run(); }) {}

SpanExporter::~SpanExporter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SpanExporter::Add(Span span) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= options_.max_queue) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(span));
    if (queue_.size() < options_.max_batch) return;
  }
  cv_.notify_one();
}

std::string SpanExporter::Encode(const std::vector<Span>& spans, const std::string& service_name) {
  json::array out;
  out.reserve(spans.size());
  for (const Span& s : spans) {
    json::array attributes;
    for (const auto& [k, v] : s.string_attributes) attributes.push_back(StringAttribute(k, v));
    for (const auto& [k, v] : s.int_attributes) {
      // OTLP's JSON mapping writes 64-bit integers as strings.
      attributes.push_back({{"key", k}, {"value", {{"intValue", std::to_string(v)}}}});
    }
    json::object span{{"traceId", s.trace_id},
                      {"spanId", s.span_id},
                      {"name", s.name},
                      {"kind", s.kind},
                      {"startTimeUnixNano", std::to_string(s.start_ns)},
                      {"endTimeUnixNano", std::to_string(s.end_ns)},
                      {"attributes", std::move(attributes)},
                      {"status", {{"code", s.error ? 2 : 1}}}};
    if (!s.parent_id.empty()) span["parentSpanId"] = s.parent_id;
    out.push_back(std::move(span));
  }
  json::object resource{{"attributes", json::array{StringAttribute("service.name", service_name)}}};
  json::object scope_spans{{"scope", {{"name", "hangar"}}}, {"spans", std::move(out)}};
  json::object resource_spans{{"resource", std::move(resource)},
                              {"scopeSpans", json::array{std::move(scope_spans)}}};
  return json::serialize(json::object{{"resourceSpans", json::array{std::move(resource_spans)}}});
}

void SpanExporter::Run() {
  HttpClient client;
  for (;;) {
    std::vector<Span> batch;
    uint64_t dropped = 0;
    bool last = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(options_.flush_ms),
                   [this] { return stopping_ || queue_.size() >= options_.max_batch; });
      last = stopping_;
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      std::swap(dropped, dropped_);
    }
    if (dropped > 0) {
      Log("trace")->warn("{} spans dropped: the collector at {} does not keep up", dropped,
                         options_.endpoint);
    }
    if (!batch.empty()) {
      HttpRequest req;
      req.method = "POST";
      req.url = options_.endpoint;
      req.headers.emplace_back("Content-Type", "application/json");
      req.body_bytes = Encode(batch, options_.service_name);
      req.timeout =
          std::chrono::milliseconds(last ? options_.last_timeout_ms : options_.timeout_ms);
      auto res = client.Perform(req);
      if (!res) {
        Log("trace")->warn("{} spans not exported to {}: {}", batch.size(), options_.endpoint,
                           res.error().message);
      } else if (res->status / 100 != 2) {
        Log("trace")->warn("{} spans refused by {}: HTTP {}", batch.size(), options_.endpoint,
                           res->status);
      }
    }
    if (last) return;  // one last batch: a down collector must not hold up the exit
  }
}

}  // namespace hangar::net
