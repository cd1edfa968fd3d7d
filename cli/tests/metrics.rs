//! Metrics and their `tracing` events, in a test process of their own:
//! tracing caches each call site's interest process-wide, and a test
//! running beside this one on another thread (with no subscriber) could
//! register a call site as uninteresting mid-test and drop its events.

mod common;

use common::opts;
use result_sanitizer_host::{Limits, Sanitizer};

const GH: &str = "ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M";

#[test]
fn metrics_count_results_cuts_and_redactions_and_emit_events() {
    use std::sync::{Arc, Mutex};
    let s = Sanitizer::new(Limits::default()).unwrap();
    let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
    let sink = buf.clone();
    let subscriber = tracing_subscriber::fmt().with_writer(move || Writer(sink.clone())).with_ansi(false).finish();
    let mut fuel = Vec::new();
    tracing::subscriber::with_default(subscriber, || {
        s.sanitize(format!("token {GH}").as_bytes(), &opts("a")).unwrap();
        fuel.push(s.metrics().fuel);
        let mut o = opts("b");
        o.max_tokens = Some(300);
        s.sanitize("word ".repeat(5000).as_bytes(), &o).unwrap();
        fuel.push(s.metrics().fuel);
        o.max_tokens = Some(1);
        assert!(s.sanitize(b"x", &o).is_err());
    });
    let m = s.metrics();
    assert_eq!((m.results, m.truncated, m.redacted, m.errors), (2, 1, 1, 1), "{m:?}");
    assert_eq!(m.redactions_by_rule.get("github-token"), Some(&1));
    // Every call's fuel is counted, the failed one's too.
    assert!(0 < fuel[0] && fuel[0] < fuel[1] && fuel[1] < m.fuel, "{fuel:?} {}", m.fuel);
    let log = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
    assert_eq!(log.matches("sanitized").count(), 2, "{log}");
    assert!(log.contains("sanitize failed"));
    assert!(!log.contains(GH), "events carry no content");
}

struct Writer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Writer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
