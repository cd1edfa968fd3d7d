//! One client session's calls and their checks (`Tally`), the timed
//! samples, and what all sessions share (`Run`).

use super::*;

#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) ok: usize,
    pub(crate) lost: usize,
    pub(crate) duplicated: usize,
    pub(crate) misrouted: usize,
    pub(crate) wrong_content: usize,
    pub(crate) http_errors: usize,
    /// Answers (or errors) that took over `STALL`.
    pub(crate) stalled: usize,
    pub(crate) failed_in_flight: usize,
    pub(crate) failed_while_down: usize,
    pub(crate) retried_ok: usize,
    pub(crate) recall_ok: usize,
    /// Right recalls answered by replica A after its restart, and after
    /// Redis came back.
    pub(crate) recall_ok_a_back: usize,
    pub(crate) recall_ok_redis_back: usize,
    pub(crate) recall_wrong: usize,
    pub(crate) not_kept: usize,
    pub(crate) recall_unavailable: usize,
    pub(crate) recall_lost: usize,
    pub(crate) foreign_refused: usize,
    pub(crate) foreign_leaked: usize,
    pub(crate) examples: Vec<String>,
}

impl Tally {
    pub(crate) fn add(&mut self, o: &Tally) {
        self.ok += o.ok;
        self.lost += o.lost;
        self.duplicated += o.duplicated;
        self.misrouted += o.misrouted;
        self.wrong_content += o.wrong_content;
        self.http_errors += o.http_errors;
        self.stalled += o.stalled;
        self.failed_in_flight += o.failed_in_flight;
        self.failed_while_down += o.failed_while_down;
        self.retried_ok += o.retried_ok;
        self.recall_ok += o.recall_ok;
        self.recall_ok_a_back += o.recall_ok_a_back;
        self.recall_ok_redis_back += o.recall_ok_redis_back;
        self.recall_wrong += o.recall_wrong;
        self.not_kept += o.not_kept;
        self.recall_unavailable += o.recall_unavailable;
        self.recall_lost += o.recall_lost;
        self.foreign_refused += o.foreign_refused;
        self.foreign_leaked += o.foreign_leaked;
        for e in &o.examples {
            self.note(e.clone());
        }
    }

    pub(crate) fn note(&mut self, what: String) {
        if self.examples.len() < 5 {
            self.examples.push(what);
        }
    }
}

/// One timed call: size, proxied or direct, round trip, when it ended
/// (since the run's start), and the replica that answered.
pub(crate) struct Sample {
    pub(crate) size: usize,
    pub(crate) proxied: bool,
    pub(crate) took: Duration,
    pub(crate) ended: Duration,
    pub(crate) replica: usize,
}

/// What all sessions share.
pub(crate) struct Run {
    pub(crate) replicas: [String; 2],
    pub(crate) upstream: String,
    pub(crate) calls: usize,
    /// One call in this many is of 1 MiB; one in `direct_every` (and every
    /// 1 MiB one) is also made directly to the upstream.
    pub(crate) big_every: usize,
    pub(crate) direct_every: usize,
    /// Starts every nonce of the phase.
    pub(crate) prefix: &'static str,
    pub(crate) next: AtomicUsize,
    pub(crate) done: AtomicUsize,
    pub(crate) start: Instant,
    /// When replica A was killed (since `start`).
    pub(crate) killed_at: Mutex<Option<Duration>>,
    /// When replica A listened again, and when Redis was back.
    pub(crate) a_back_at: Mutex<Option<Duration>>,
    pub(crate) redis_back_at: Mutex<Option<Duration>>,
    pub(crate) lines: Arc<Vec<&'static str>>,
    /// Kept results: (session id, call id, nonce), for the cross checks.
    pub(crate) kept: Mutex<Vec<(String, String, String)>>,
}

impl Run {
    pub(crate) fn new(replicas: [String; 2], upstream: &str, lines: &Arc<Vec<&'static str>>, calls: usize) -> Self {
        Run {
            replicas,
            upstream: upstream.into(),
            calls,
            big_every: 50,
            direct_every: 4,
            prefix: "s",
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            start: Instant::now(),
            killed_at: Mutex::new(None),
            a_back_at: Mutex::new(None),
            redis_back_at: Mutex::new(None),
            lines: lines.clone(),
            kept: Mutex::new(Vec::new()),
        }
    }
}

pub(crate) fn session(run: &Run, s: usize) -> (Tally, Vec<Sample>) {
    let agent = agent();
    let mut t = Tally::default();
    let mut samples = Vec::new();
    // Initialize at replica s % 2; its later requests alternate.
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bench-gateway", "version": "1" } } });
    let mut turn = s;
    let mut sid = None;
    for _ in 0..20 {
        if let Posted::Ok { status: 200, sid: Some(id), .. } =
            post(&agent, &run.replicas[turn % 2], None, &serde_json::to_vec(&init).unwrap())
        {
            sid = Some(id);
            break;
        }
        turn += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    let sid = sid.expect("a session id");
    let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let _ = post(&agent, &run.replicas[turn % 2], Some(&sid), note);
    turn += 1;
    let mut id: u64 = 0;
    let mut answered: HashSet<u64> = HashSet::new();

    // Sends one request through the replicas (the next in turn; once
    // more on the other after a transport error); the answer, checked
    // for its id, and the replica that gave it.
    let through = |t: &mut Tally, turn: &mut usize, body: &[u8], timed: Option<usize>| {
        let mut samples = Vec::new();
        let first = *turn % 2;
        *turn += 1;
        for (attempt, r) in [first, 1 - first].into_iter().enumerate() {
            let sent = run.start.elapsed();
            let t0 = Instant::now();
            let p = post(&agent, &run.replicas[r], Some(&sid), body);
            let took = t0.elapsed();
            if took > STALL {
                t.stalled += 1;
                t.note(format!(
                    "a request to replica {r} sent at t={:.2} s was answered {:.1} s later",
                    sent.as_secs_f64(),
                    took.as_secs_f64()
                ));
            }
            match p {
                Posted::Ok { status: 200, body: b, .. } => {
                    let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
                    if attempt == 1 {
                        t.retried_ok += 1;
                    }
                    if let Some(size) = timed {
                        let ended = run.start.elapsed();
                        samples.push(Sample { size, proxied: true, took, ended, replica: r });
                    }
                    return (Some((v, r)), samples);
                }
                Posted::Ok { status, body: b, .. } => {
                    t.http_errors += 1;
                    t.note(format!(
                        "HTTP {status} from replica {r} at t={:.2} s (sent at {:.2} s, session {s}, turn {}): {}",
                        run.start.elapsed().as_secs_f64(),
                        sent.as_secs_f64(),
                        *turn,
                        String::from_utf8_lossy(&b[..b.len().min(200)])
                    ));
                    return (None, samples);
                }
                Posted::Transport(e) => {
                    if attempt == 1 {
                        t.lost += 1;
                        t.note(format!("retry failed on replica {r}: {e}"));
                        return (None, samples);
                    }
                    let killed = *run.killed_at.lock().unwrap();
                    if killed.is_some_and(|k| k > sent) {
                        t.failed_in_flight += 1;
                    } else {
                        t.failed_while_down += 1;
                    }
                }
            }
        }
        (None, samples)
    };

    loop {
        let c = run.next.fetch_add(1, Ordering::Relaxed);
        if c >= run.calls {
            break;
        }
        let size = if c % run.big_every == run.big_every - 1 { BIG } else { SMALL };
        let nonce = format!("{}{s:02}c{c:05}", run.prefix);
        let expected = payload(&run.lines, &nonce, size);
        id += 1;
        let body = call(id, "payload", json!({ "nonce": nonce, "size": size }));
        // The same call, directly, for the added time.
        if size == BIG || c.is_multiple_of(run.direct_every) {
            let t0 = Instant::now();
            if let Posted::Ok { status: 200, body: b, .. } = post(&agent, &run.upstream, None, &body) {
                let took = t0.elapsed();
                let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
                assert_eq!(text_of(&v), expected, "the upstream answers directly");
                samples.push(Sample { size, proxied: false, took, ended: run.start.elapsed(), replica: 2 });
            }
        }
        let (got, mut timed) = through(&mut t, &mut turn, &body, Some(size));
        samples.append(&mut timed);
        run.done.fetch_add(1, Ordering::Relaxed);
        let Some((v, kept_by)) = got else { continue };
        // The answer is this request's, once, with this call's content.
        let got_id = v["id"].as_u64();
        if got_id != Some(id) {
            if got_id.is_some_and(|g| answered.contains(&g)) {
                t.duplicated += 1;
            } else {
                t.misrouted += 1;
            }
            t.note(format!("id {id} answered with {:?}", v["id"]));
            continue;
        }
        answered.insert(id);
        let text = text_of(&v);
        let seen = nonces(&text);
        if seen.len() != 1 || !seen.contains(nonce.as_str()) {
            t.misrouted += 1;
            t.note(format!("call {nonce}: nonces {seen:?}"));
            continue;
        }
        if size == SMALL {
            if text != expected {
                t.wrong_content += 1;
                t.note(format!("call {nonce}: 8 KiB text differs ({} bytes)", text.len()));
                continue;
            }
            t.ok += 1;
            continue;
        }
        // 1 MiB: cut, its head shown, a route to the rest.
        let head = expected.lines().next().unwrap();
        if !text.contains(&format!("{head}\n")) || !text.contains("[truncated:") {
            t.wrong_content += 1;
            t.note(format!("call {nonce}: 1 MiB head or marker missing: {}", &text[..text.len().min(300)]));
            continue;
        }
        t.ok += 1;
        if !text.contains("recallable") {
            t.not_kept += 1; // cut while Redis was away: the marker says so
            continue;
        }
        let Some((call_id, offset)) = route(&text) else {
            t.wrong_content += 1;
            t.note(format!("call {nonce}: no recall route"));
            continue;
        };
        // Recalled through the replica that did not keep it.
        id += 1;
        let body =
            call(id, "read_truncated_output", json!({ "call_id": call_id, "offset": offset, "limit": RECALL_LIMIT }));
        turn = kept_by + 1; // the other replica next
        let (got, _) = through(&mut t, &mut turn, &body, None);
        let Some((v, recalled_by)) = got else { continue };
        let now = run.start.elapsed();
        let after = |at: &Mutex<Option<Duration>>| at.lock().unwrap().is_some_and(|t| now > t);
        if v["id"].as_u64() != Some(id) {
            t.misrouted += 1;
            t.note(format!("recall {id} answered with {:?}", v["id"]));
            continue;
        }
        answered.insert(id);
        let rt = text_of(&v);
        if v["result"]["isError"] == true {
            if rt.contains("reach") {
                t.recall_unavailable += 1;
            } else {
                t.recall_lost += 1; // kept before Redis restarted
            }
        } else {
            let want = &expected[offset..offset + RECALL_LIMIT];
            // The slice's whole lines, as the upstream wrote them.
            let inner = want.split('\n').skip(1).take(3).collect::<Vec<_>>().join("\n");
            let seen = nonces(&rt);
            if seen.len() == 1 && seen.contains(nonce.as_str()) && rt.contains(&inner) {
                t.recall_ok += 1;
                if recalled_by == 0 && after(&run.a_back_at) {
                    t.recall_ok_a_back += 1;
                }
                if after(&run.redis_back_at) {
                    t.recall_ok_redis_back += 1;
                }
            } else {
                t.recall_wrong += 1;
                t.note(format!("recall of {nonce} at {offset}: {}", &rt[..rt.len().min(300)]));
            }
        }
        // Another session's kept result, from this session: refused.
        let foreign = run.kept.lock().unwrap().iter().rev().find(|k| k.0 != sid).cloned();
        run.kept.lock().unwrap().push((sid.clone(), call_id, nonce.clone()));
        if let Some((_, other_call, other_nonce)) = foreign {
            id += 1;
            let body = call(id, "read_truncated_output", json!({ "call_id": other_call, "offset": 0, "limit": 4096 }));
            if let (Some((v, _)), _) = through(&mut t, &mut turn, &body, None) {
                let ft = text_of(&v);
                if v["result"]["isError"] == true && !ft.contains(&format!("@@{other_nonce}@@")) {
                    t.foreign_refused += 1;
                } else {
                    t.foreign_leaked += 1;
                    t.note(format!("{other_call} of another session read: {}", &ft[..ft.len().min(200)]));
                }
            }
        }
    }
    let _ = agent.delete(&run.replicas[turn % 2]).header("Mcp-Session-Id", &sid).call();
    (t, samples)
}

pub(crate) fn pct(v: &mut [Duration], p: usize) -> Duration {
    v.sort();
    v[((v.len() * p) / 100).min(v.len() - 1)]
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}
