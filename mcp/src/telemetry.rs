//! Telemetry: what the proxy did to each tool's results, as Prometheus
//! metrics (`GET /metrics` on the HTTP listener) and, when an OTLP
//! endpoint is configured, as OpenTelemetry traces and metrics over
//! OTLP/HTTP (protobuf).
//!
//! # Model
//!
//! One call per answered `tools/call` ([`Telemetry::call`]) with its
//! [`Call`] facts, one per recall ([`Telemetry::recall`]). Both exports are
//! fed from there:
//!
//! | Prometheus series | OTLP instrument | labels / attributes |
//! |---|---|---|
//! | `result_sanitizer_tool_calls_total` | `result_sanitizer.tool.calls` | `tool`, `outcome` (`ok`, `error`) |
//! | `result_sanitizer_tool_bytes_in_total` | `result_sanitizer.tool.bytes_in` | `tool` |
//! | `result_sanitizer_tool_bytes_out_total` | `result_sanitizer.tool.bytes_out` | `tool` |
//! | `result_sanitizer_tool_tokens_shown_total` | `result_sanitizer.tool.tokens_shown` | `tool` |
//! | `result_sanitizer_tool_truncations_total` | `result_sanitizer.tool.truncations` | `tool` |
//! | `result_sanitizer_tool_recalls_total` | `result_sanitizer.tool.recalls` | `tool` |
//! | `result_sanitizer_tool_redactions_total` | `result_sanitizer.tool.redactions` | `tool`, `rule` |
//! | `result_sanitizer_pipeline_seconds` | `result_sanitizer.pipeline.duration` (s) | `tool` |
//! | `result_sanitizer_proxy_seconds` | `result_sanitizer.proxy.duration` (s) | `tool` |
//!
//! and one span per call, `tools/call`, with the same facts as attributes
//! (`mcp.tool.name`, `result_sanitizer.bytes_in`, ...) and the proxy's
//! time as its duration.
//!
//! Pipeline time is the sanitizer's call (a schema check and its second
//! call included); proxy time is all the proxy added to the answer, from
//! the server's line read to the client's line written out (parsing, the
//! pipeline, writing the new line).
//!
//! # What never goes out
//!
//! Counts, durations and identifiers only: a tool's name (the server's),
//! a rule id, an outcome. Never a value of a result or an argument, never
//! an error's text. Tool names come from the server, so how many there
//! are is bounded: past [`MAX_TOOLS`] distinct names, calls count under
//! `tool="_other"`.
//!
//! # OTLP transport
//!
//! The official `opentelemetry-otlp` exporter over HTTP with protobuf
//! bodies, its HTTP client the `ureq` agent the proxy already uses (no
//! async runtime): spans in batches, metrics every
//! `OTEL_METRIC_EXPORT_INTERVAL` milliseconds (default 60 000), both
//! flushed when the proxy exits. The endpoint is `--otlp-endpoint URL`
//! or `OTEL_EXPORTER_OTLP_ENDPOINT`; signals go to `URL/v1/traces` and
//! `URL/v1/metrics`.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use opentelemetry::metrics::{Counter as OtelCounter, Histogram as OtelHistogram, MeterProvider as _};
use opentelemetry::trace::{Span as _, Tracer as _, TracerProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Most distinct tool names labelled; later ones count as `_other`.
pub const MAX_TOOLS: usize = 256;

/// The label of tools past [`MAX_TOOLS`].
const OTHER: &str = "_other";

/// What one answered `tools/call` was, for the exports.
#[derive(Debug, Default)]
pub struct Call<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// Bytes of the server's result.
    pub bytes_in: u64,
    /// Bytes of the result sent on.
    pub bytes_out: u64,
    /// Tokens the model is shown (the record's `output_tokens`, or its
    /// bound when it was not counted).
    pub tokens: u64,
    /// Whether it was cut.
    pub truncated: bool,
    /// Redactions by rule id.
    pub redactions: Vec<(String, u64)>,
    /// Whether the pipeline refused it (an `isError` result said so).
    pub error: bool,
    /// The sanitizer's time.
    pub pipeline: Duration,
    /// All the proxy added.
    pub proxy: Duration,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    tool: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabels {
    tool: String,
    rule: String,
}

/// From 100 µs to about 13 s, doubling.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 18))
}

/// The Prometheus side.
struct Prom {
    registry: Registry,
    calls: Family<OutcomeLabels, Counter>,
    bytes_in: Family<ToolLabel, Counter>,
    bytes_out: Family<ToolLabel, Counter>,
    tokens: Family<ToolLabel, Counter>,
    truncations: Family<ToolLabel, Counter>,
    recalls: Family<ToolLabel, Counter>,
    redactions: Family<RuleLabels, Counter>,
    pipeline: Family<ToolLabel, Histogram, fn() -> Histogram>,
    proxy: Family<ToolLabel, Histogram, fn() -> Histogram>,
}

impl Prom {
    fn new() -> Self {
        let mut registry = Registry::with_prefix("result_sanitizer");
        let p = Self {
            registry: Registry::default(),
            calls: Family::default(),
            bytes_in: Family::default(),
            bytes_out: Family::default(),
            tokens: Family::default(),
            truncations: Family::default(),
            recalls: Family::default(),
            redactions: Family::default(),
            pipeline: Family::new_with_constructor(seconds),
            proxy: Family::new_with_constructor(seconds),
        };
        registry.register("tool_calls", "Answered tools/call requests, by outcome", p.calls.clone());
        registry.register("tool_bytes_in", "Bytes of the servers' tool results", p.bytes_in.clone());
        registry.register("tool_bytes_out", "Bytes of the tool results sent on", p.bytes_out.clone());
        registry.register("tool_tokens_shown", "Tokens of tool results shown to the model", p.tokens.clone());
        registry.register("tool_truncations", "Tool results cut to their budget", p.truncations.clone());
        registry.register("tool_recalls", "Recalls of kept tool results", p.recalls.clone());
        registry.register("tool_redactions", "Redactions in tool results, by rule id", p.redactions.clone());
        registry.register("pipeline_seconds", "Time in the sanitizer per tool result", p.pipeline.clone());
        registry.register("proxy_seconds", "Time the proxy added per tool result", p.proxy.clone());
        Self { registry, ..p }
    }
}

/// The OpenTelemetry side, when an endpoint is configured.
struct Otel {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    calls: OtelCounter<u64>,
    bytes_in: OtelCounter<u64>,
    bytes_out: OtelCounter<u64>,
    tokens: OtelCounter<u64>,
    truncations: OtelCounter<u64>,
    recalls: OtelCounter<u64>,
    redactions: OtelCounter<u64>,
    pipeline: OtelHistogram<f64>,
    proxy: OtelHistogram<f64>,
}

/// The `ureq` agent as the OTLP exporter's HTTP client (blocking, called
/// from the exporter's own threads).
#[derive(Debug)]
struct Ureq(ureq::Agent);

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Ureq {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let request = http::Request::from_parts(parts, body.to_vec());
        let mut response = self.0.run(request)?;
        let status = response.status();
        // A collector's answer is small; more is not read.
        let body = response.body_mut().with_config().limit(1 << 20).read_to_vec()?;
        Ok(http::Response::builder().status(status).body(bytes::Bytes::from(body))?)
    }
}

impl Otel {
    fn new(endpoint: &str) -> Result<Self, String> {
        let base = endpoint.trim_end_matches('/');
        let agent = || {
            let config = ureq::Agent::config_builder()
                .timeout_global(Some(Duration::from_secs(10)))
                .http_status_as_error(false)
                .build();
            Ureq(ureq::Agent::new_with_config(config))
        };
        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(agent())
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/traces"))
            .build()
            .map_err(|e| format!("the OTLP span exporter: {e}"))?;
        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(agent())
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/metrics"))
            .build()
            .map_err(|e| format!("the OTLP metric exporter: {e}"))?;
        let resource = Resource::builder().with_service_name("result-sanitizer").build();
        let tracer = SdkTracerProvider::builder().with_batch_exporter(spans).with_resource(resource.clone()).build();
        let meter = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics).build())
            .with_resource(resource)
            .build();
        let m = meter.meter("result-sanitizer");
        let counter =
            |name: &'static str, description: &'static str| m.u64_counter(name).with_description(description).build();
        let seconds = |name: &'static str, description: &'static str| {
            m.f64_histogram(name).with_unit("s").with_description(description).build()
        };
        Ok(Self {
            calls: counter("result_sanitizer.tool.calls", "Answered tools/call requests, by outcome"),
            bytes_in: counter("result_sanitizer.tool.bytes_in", "Bytes of the servers' tool results"),
            bytes_out: counter("result_sanitizer.tool.bytes_out", "Bytes of the tool results sent on"),
            tokens: counter("result_sanitizer.tool.tokens_shown", "Tokens of tool results shown to the model"),
            truncations: counter("result_sanitizer.tool.truncations", "Tool results cut to their budget"),
            recalls: counter("result_sanitizer.tool.recalls", "Recalls of kept tool results"),
            redactions: counter("result_sanitizer.tool.redactions", "Redactions in tool results, by rule id"),
            pipeline: seconds("result_sanitizer.pipeline.duration", "Time in the sanitizer per tool result"),
            proxy: seconds("result_sanitizer.proxy.duration", "Time the proxy added per tool result"),
            tracer,
            meter,
        })
    }
}

/// The proxy's telemetry: Prometheus always, OTLP when configured.
pub struct Telemetry {
    prom: Prom,
    otel: Option<Otel>,
    tools: Mutex<HashSet<String>>,
}

impl Telemetry {
    /// Telemetry exporting over OTLP to `otlp` (a base URL) when given.
    pub fn new(otlp: Option<&str>) -> Result<Self, String> {
        Ok(Self { prom: Prom::new(), otel: otlp.map(Otel::new).transpose()?, tools: Mutex::default() })
    }

    /// `tool` as labelled: itself, or `_other` past [`MAX_TOOLS`] names.
    fn label(&self, tool: &str) -> String {
        let mut tools = self.tools.lock().expect("telemetry lock");
        if tools.contains(tool) {
            return tool.to_string();
        }
        if tools.len() < MAX_TOOLS {
            tools.insert(tool.to_string());
            return tool.to_string();
        }
        OTHER.to_string()
    }

    /// One answered `tools/call`.
    pub fn call(&self, c: &Call) {
        let tool = self.label(c.tool);
        let outcome = if c.error { "error" } else { "ok" };
        let t = ToolLabel { tool: tool.clone() };
        let p = &self.prom;
        p.calls.get_or_create(&OutcomeLabels { tool: tool.clone(), outcome }).inc();
        p.bytes_in.get_or_create(&t).inc_by(c.bytes_in);
        p.bytes_out.get_or_create(&t).inc_by(c.bytes_out);
        p.tokens.get_or_create(&t).inc_by(c.tokens);
        if c.truncated {
            p.truncations.get_or_create(&t).inc();
        }
        for (rule, n) in &c.redactions {
            p.redactions.get_or_create(&RuleLabels { tool: tool.clone(), rule: rule.clone() }).inc_by(*n);
        }
        p.pipeline.get_or_create(&t).observe(c.pipeline.as_secs_f64());
        p.proxy.get_or_create(&t).observe(c.proxy.as_secs_f64());
        let Some(o) = &self.otel else { return };
        let attrs = [KeyValue::new("tool", tool.clone())];
        o.calls.add(1, &[KeyValue::new("tool", tool.clone()), KeyValue::new("outcome", outcome)]);
        o.bytes_in.add(c.bytes_in, &attrs);
        o.bytes_out.add(c.bytes_out, &attrs);
        o.tokens.add(c.tokens, &attrs);
        if c.truncated {
            o.truncations.add(1, &attrs);
        }
        for (rule, n) in &c.redactions {
            o.redactions.add(*n, &[KeyValue::new("tool", tool.clone()), KeyValue::new("rule", rule.clone())]);
        }
        o.pipeline.record(c.pipeline.as_secs_f64(), &attrs);
        o.proxy.record(c.proxy.as_secs_f64(), &attrs);
        let end = SystemTime::now();
        let tracer = o.tracer.tracer("result-sanitizer");
        let redactions: u64 = c.redactions.iter().map(|(_, n)| n).sum();
        let mut span = tracer
            .span_builder("tools/call")
            .with_start_time(end - c.proxy)
            .with_attributes([
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("mcp.tool.name", tool),
                KeyValue::new("result_sanitizer.outcome", outcome),
                KeyValue::new("result_sanitizer.bytes_in", c.bytes_in as i64),
                KeyValue::new("result_sanitizer.bytes_out", c.bytes_out as i64),
                KeyValue::new("result_sanitizer.tokens_shown", c.tokens as i64),
                KeyValue::new("result_sanitizer.truncated", c.truncated),
                KeyValue::new("result_sanitizer.redactions", redactions as i64),
                KeyValue::new("result_sanitizer.pipeline_seconds", c.pipeline.as_secs_f64()),
            ])
            .start(&tracer);
        span.end_with_timestamp(end);
    }

    /// One recall of a result kept for `tool`.
    pub fn recall(&self, tool: &str) {
        let tool = self.label(tool);
        self.prom.recalls.get_or_create(&ToolLabel { tool: tool.clone() }).inc();
        if let Some(o) = &self.otel {
            o.recalls.add(1, &[KeyValue::new("tool", tool)]);
        }
    }

    /// The Prometheus exposition (OpenMetrics text) of the counters now.
    pub fn exposition(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.prom.registry).expect("writing to a String");
        out
    }

    /// The content type of [`Self::exposition`].
    pub const CONTENT_TYPE: &'static str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

    /// Sends what is batched over OTLP and stops the exporters (at exit).
    pub fn shutdown(&self) {
        if let Some(o) = &self.otel {
            if let Err(e) = o.tracer.shutdown() {
                tracing::warn!(target: "result_sanitizer::mcp", "OTLP spans at exit: {e}");
            }
            if let Err(e) = o.meter.shutdown() {
                tracing::warn!(target: "result_sanitizer::mcp", "OTLP metrics at exit: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_counts_by_tool_and_rule_and_bounds_tool_names() {
        let t = Telemetry::new(None).unwrap();
        let call = |tool| Call {
            tool,
            bytes_in: 1000,
            bytes_out: 300,
            tokens: 80,
            truncated: true,
            redactions: vec![("aws-access-key-id".into(), 2)],
            pipeline: Duration::from_millis(3),
            proxy: Duration::from_millis(4),
            ..Call::default()
        };
        t.call(&call("read_file"));
        t.call(&call("read_file"));
        t.recall("read_file");
        let x = t.exposition();
        assert!(x.contains("result_sanitizer_tool_calls_total{tool=\"read_file\",outcome=\"ok\"} 2\n"), "{x}");
        assert!(x.contains("result_sanitizer_tool_bytes_in_total{tool=\"read_file\"} 2000\n"));
        assert!(x.contains("result_sanitizer_tool_redactions_total{tool=\"read_file\",rule=\"aws-access-key-id\"} 4\n"));
        assert!(x.contains("result_sanitizer_tool_recalls_total{tool=\"read_file\"} 1\n"));
        assert!(x.contains("result_sanitizer_proxy_seconds_count{tool=\"read_file\"} 2\n"));
        assert!(x.ends_with("# EOF\n"));
        for i in 0..MAX_TOOLS + 5 {
            t.call(&Call { tool: &format!("t{i}"), ..Call::default() });
        }
        let x = t.exposition();
        assert!(x.contains("result_sanitizer_tool_calls_total{tool=\"_other\",outcome=\"ok\"} 6\n"), "{x}");
    }
}
