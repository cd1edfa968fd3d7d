//! `redact` over a stream: constant memory, on one thread or on several.
//!
//! The pipeline's `redact` step is a pure function of its request. It is
//! sent `carry + chunk` and commits a prefix: up to the line start before
//! the last 64 KiB of its data ([`usual_commit`]), or past a match that
//! crosses that point. The rest (the carry) is sent again with the next
//! chunk, so a secret across a chunk boundary is seen whole. So step `k`'s
//! data starts where step `k - 1` committed.
//!
//! On several threads, step `k` is run ahead of time on a guess: the data
//! it gets when step `k - 1` (on its own guessed data) commits at its
//! [`usual_commit`], as it does unless a secret crosses that line start.
//! The results are taken in order. A step whose guess proves wrong (a
//! match across the point: a key block, or a key's line and its value's)
//! runs again, here, on its true carry; no step is sent while a stream is
//! still to be sniffed. A step taken is thus always the
//! step a single thread would have run on the same request, and the output
//! is the same byte for byte, whatever the thread count: the guess only
//! decides how much runs in parallel.
//!
//! Cost: every step runs once, plus once more for each wrong guess
//! ([`Streamed::rerun`]); where most guesses are wrong, guessing stops.
//! Memory: at most `2 × threads` steps' data read and not yet written
//! (each a chunk and its carry, up to two chunks on long lines), and one
//! live instance per thread. Limits apply per step as on one thread, but
//! steps share the cores: a wall-clock limit (`Limits::timeout`) set close
//! to one step's time can be reached on several threads and not on one.

use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::sync::{mpsc, Mutex};

use result_sanitizer_rule_engine::usual_commit;

use crate::api::{RedactRequest, RedactResponse};
use crate::engine::{LoadedPack, Sanitizer};
use crate::error::{Error, Result};

/// Bytes the CLI's `redact` sends per step. Each step also rescans the
/// carry from the step before (the 64 KiB overlap, more when the point
/// falls in a long line), so larger chunks rescan less: 1 MiB keeps that
/// under 7 % on lines of a few KiB, at about 3 MiB of guest memory.
pub const REDACT_CHUNK: usize = 1 << 20;

/// Most threads started, whatever is asked: each holds a live instance
/// (and a pack keeps at most 8 idle ones) and two chunks in flight.
const MAX_THREADS: usize = 8;

/// How a stream is redacted.
pub struct StreamOptions<'r> {
    /// Bytes sent per step ([`REDACT_CHUNK`] by default).
    pub chunk: usize,
    /// Content type (e.g. `text/x-python`: source code, where generic rules
    /// look only inside string literals).
    pub content_type: Option<String>,
    /// Content from an untrusted source: inline allow markers are ignored.
    pub untrusted: bool,
    /// Without `content_type`: the pipeline judges the stream from its
    /// first bytes (the `redact-request`'s `sniff`), once for all of it.
    pub sniff: bool,
    /// Where to write a report of every replacement, if anywhere.
    pub report: Option<crate::report::Report<'r>>,
    /// Redact personal data too (the `redact-request`'s `pii`).
    pub pii: bool,
    /// With `pii`: public IP addresses too.
    pub pii_public_ip: bool,
    /// Threads that run steps: 1 (the default) runs them one after another
    /// on the caller's thread; 0 starts one per core; at most 8. The
    /// output is the same whatever the count; on a live pipe, more than
    /// one thread writes a chunk (1 MiB) later.
    pub threads: usize,
}

impl Default for StreamOptions<'_> {
    fn default() -> Self {
        Self {
            chunk: REDACT_CHUNK,
            content_type: None,
            untrusted: false,
            sniff: false,
            report: None,
            pii: false,
            pii_public_ip: false,
            threads: 1,
        }
    }
}

/// What [`redact_stream`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Streamed {
    /// Replacements made.
    pub replacements: u64,
    /// Steps taken (one per chunk, and a last one).
    pub steps: u64,
    /// Steps run twice: run ahead on a guess that proved wrong.
    pub rerun: u64,
}

/// Streams `input` to `output` through the pipeline's `redact` step.
/// Memory stays at about two chunks per thread (a step's data is its
/// carry, at most a chunk and the overlap on long lines, and a chunk).
pub fn redact_stream(
    s: &Sanitizer,
    pack: &LoadedPack,
    mut input: impl Read,
    mut output: impl Write,
    opts: &mut StreamOptions<'_>,
) -> Result<Streamed> {
    let chunk = opts.chunk.max(1);
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(MAX_THREADS);
    let mut taker = Taker::new(opts, chunk);
    if threads <= 1 {
        let mut buf = vec![0u8; chunk];
        loop {
            let filled = fill(&mut input, &mut buf)?;
            let last = filled < chunk;
            taker.run_here(s, pack, &buf[..filled], last, &mut output)?;
            if last {
                break;
            }
        }
    } else {
        parallel(s, pack, input, &mut output, &mut taker, threads)?;
    }
    output.flush()?;
    Ok(taker.done)
}

/// Reads until `buf` is full or the input ends (short reads are common on
/// pipes); the bytes read.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(filled)
}

/// Takes steps in order, as one thread runs them: the carry, the stream's
/// judgment, the output and the report.
struct Taker<'o, 'r> {
    opts: &'o mut StreamOptions<'r>,
    chunk: usize,
    /// The next step's request; its data starts with the carry.
    req: RedactRequest,
    /// Stream offset of `req.data[0]`.
    at: u64,
    done: Streamed,
}

impl<'o, 'r> Taker<'o, 'r> {
    fn new(opts: &'o mut StreamOptions<'r>, chunk: usize) -> Self {
        let req = RedactRequest {
            data: Vec::with_capacity(chunk * 2),
            last: false,
            content_type: opts.content_type.clone(),
            sniff: opts.sniff && opts.content_type.is_none(),
            untrusted: opts.untrusted,
            report: opts.report.is_some(),
            pii: opts.pii,
            pii_public_ip: opts.pii_public_ip,
        };
        Self { opts, chunk, req, at: 0, done: Streamed::default() }
    }

    /// Runs the next step here, on the carry and `chunk`.
    fn run_here(
        &mut self,
        s: &Sanitizer,
        pack: &LoadedPack,
        chunk: &[u8],
        last: bool,
        output: &mut impl Write,
    ) -> Result<()> {
        self.req.data.extend_from_slice(chunk);
        self.req.last = last;
        let resp = s.redact_request(pack, &self.req)?;
        let data = std::mem::take(&mut self.req.data);
        self.take(data, resp, output)
    }

    /// Takes the step that ran on `data` (the carry and a chunk): writes
    /// its output and report, and keeps what it did not consume.
    fn take(&mut self, mut data: Vec<u8>, resp: RedactResponse, output: &mut impl Write) -> Result<()> {
        self.done.replacements += resp.redactions.iter().map(|r| u64::from(r.count)).sum::<u64>();
        self.done.steps += 1;
        output.write_all(&resp.output)?;
        if let Some(report) = self.opts.report.as_mut() {
            report.step(&data, resp.consumed as usize, &resp.spans)?;
        }
        data.drain(..resp.consumed as usize);
        self.req.data = data;
        self.at += u64::from(resp.consumed);
        // The stream's judgment, sent with every later step instead.
        if let Some(t) = resp.content_type {
            self.req.sniff = false;
            self.req.content_type = (!t.is_empty()).then_some(t);
        }
        if !self.req.last && self.req.data.len() > self.chunk + (1 << 20) {
            return Err(Error::InvalidOutput("redact step made no progress".into()));
        }
        Ok(())
    }
}

/// A chunk read and not yet taken.
struct Slot {
    /// Stream offset where `window` starts: the guessed start of the
    /// step's data.
    guess: u64,
    /// The guessed data: the guessed carry, then the chunk.
    window: Vec<u8>,
    /// Where the chunk starts in `window`.
    head: usize,
    last: bool,
    /// Sent to a worker; its window comes back with the result.
    sent: bool,
}

type Done = (usize, RedactRequest, Result<RedactResponse>);

/// Reads, sends guessed steps to `threads` workers, and takes the results
/// in order (see the module docs).
fn parallel(
    s: &Sanitizer,
    pack: &LoadedPack,
    mut input: impl Read,
    output: &mut impl Write,
    taker: &mut Taker<'_, '_>,
    threads: usize,
) -> Result<()> {
    let chunk = taker.chunk;
    let (job_tx, job_rx) = mpsc::channel::<(usize, RedactRequest)>();
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        for _ in 0..threads {
            let (job_rx, done_tx) = (&job_rx, done_tx.clone());
            scope.spawn(move || loop {
                let next = job_rx.lock().map_err(|_| ()).and_then(|rx| rx.recv().map_err(|_| ()));
                let Ok((k, req)) = next else { break };
                // A panic is sent as an error: the taker waits for this
                // step's result and would otherwise wait forever.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.redact_request(pack, &req)))
                    .unwrap_or_else(|_| Err(Error::InvalidOutput("a redact worker panicked".into())));
                if done_tx.send((k, req, r)).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        // Slots `taken..` (at most 2 × threads).
        let mut slots: VecDeque<Slot> = VecDeque::new();
        let mut done: BTreeMap<usize, (RedactRequest, Result<RedactResponse>)> = BTreeMap::new();
        let (mut taken, mut eof) = (0usize, false);
        // Guesses taken: where most are wrong (`taker.done.rerun`; a
        // secret across nearly every commit point), guessing stops.
        let mut guesses = 0u64;
        // A read that failed: the chunks read before it are taken first,
        // as on one thread.
        let mut failed = None;
        // The guessed carry of the next step: its stream offset and bytes.
        let mut carry: (u64, Vec<u8>) = (0, Vec::new());
        let mut buf = vec![0u8; chunk];
        let send = |k: usize, slot: &mut Slot, taker: &Taker<'_, '_>| {
            let req =
                RedactRequest { data: std::mem::take(&mut slot.window), last: slot.last, ..fields_of(&taker.req) };
            slot.sent = job_tx.send((k, req)).is_ok();
        };
        loop {
            // Read ahead while there is room, but not while the next step
            // to take is ready: a slow pipe's output is not held back for
            // chunks still to come.
            while !eof && slots.len() < 2 * threads {
                while let Ok((j, req, r)) = done_rx.try_recv() {
                    done.insert(j, (req, r));
                }
                if slots.front().is_some_and(|f| !f.sent || done.contains_key(&taken)) {
                    break;
                }
                let filled = match fill(&mut input, &mut buf) {
                    Ok(n) => n,
                    Err(e) => {
                        (failed, eof) = (Some(e), true);
                        break;
                    }
                };
                eof = filled < chunk;
                let mut slot = guessed(&mut carry, &buf[..filled], eof);
                // A stream still to be judged is not guessed ahead.
                if !taker.req.sniff && !hopeless(guesses, taker.done.rerun) {
                    send(taken + slots.len(), &mut slot, taker);
                }
                slots.push_back(slot);
            }
            let Some(mut slot) = slots.pop_front() else { break };
            let k = taken;
            taken += 1;
            if slot.sent {
                let (req, r) = loop {
                    if let Some(d) = done.remove(&k) {
                        break d;
                    }
                    let (j, req, r) =
                        done_rx.recv().map_err(|_| Error::InvalidOutput("a redact worker stopped".into()))?;
                    done.insert(j, (req, r));
                };
                slot.window = req.data;
                guesses += 1;
                if slot.guess == taker.at {
                    // The guess held: this is the step one thread runs.
                    taker.req.last = slot.last;
                    taker.take(slot.window, r?, output)?;
                    continue;
                }
                taker.done.rerun += 1;
            }
            // A wrong guess (or none sent): run the step on its true carry.
            taker.run_here(s, pack, &slot.window[slot.head..], slot.last, output)?;
        }
        drop(job_tx);
        failed.map_or(Ok(()), Err)
    })
}

/// Whether guessing has failed too often to go on: each wrong guess costs
/// a step run twice.
fn hopeless(guesses: u64, misses: u64) -> bool {
    misses >= 2 && 2 * misses > guesses
}

/// `req`'s fields other than its data and `last`.
fn fields_of(req: &RedactRequest) -> RedactRequest {
    RedactRequest {
        data: Vec::new(),
        last: false,
        content_type: req.content_type.clone(),
        sniff: req.sniff,
        untrusted: req.untrusted,
        report: req.report,
        pii: req.pii,
        pii_public_ip: req.pii_public_ip,
    }
}

/// The slot of `chunk`, its window the guessed `carry` and the chunk; the
/// carry becomes the one guessed for the step after it.
fn guessed(carry: &mut (u64, Vec<u8>), chunk: &[u8], last: bool) -> Slot {
    let (guess, head) = (carry.0, carry.1.len());
    let mut window = Vec::with_capacity(head + chunk.len());
    window.extend_from_slice(&carry.1);
    window.extend_from_slice(chunk);
    let at = usual_commit(&window);
    *carry = (guess + at as u64, window[at..].to_vec());
    Slot { guess, window, head, last, sent: false }
}
