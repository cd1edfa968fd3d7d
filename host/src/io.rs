//! Host I/O: reading under the byte cap, running commands, streaming.
//!
//! The cap is enforced while reading: at most `cap + 1` bytes are read (the
//! extra byte tells the pipeline there was more), then reading stops; a
//! child process is killed at that point.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::api::{Options, RedactRequest};
use crate::engine::{LoadedPack, Sanitizer};
use crate::error::{Error, Result};

/// Bytes read under a cap.
pub struct Capped {
    /// At most `cap + 1` bytes.
    pub bytes: Vec<u8>,
    /// Whether the source had more than `cap` bytes.
    pub over: bool,
}

/// Reads at most `cap + 1` bytes from `r`.
pub fn read_capped(r: impl Read, cap: u64) -> Result<Capped> {
    let mut bytes = Vec::new();
    r.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    let over = bytes.len() as u64 > cap;
    Ok(Capped { bytes, over })
}

/// How many bytes of a result to read for `opts`, less the one extra byte
/// [`read_capped`] reads: the pipeline's `read-bytes` (the byte cap, the
/// markup budget for a declared HTML document, or the MCP input bound),
/// so every host reads the same amount for the same options.
pub fn input_cap(s: &Sanitizer, pack: &LoadedPack, opts: &Options) -> Result<u64> {
    Ok(s.effective_budget(pack, opts)?.read_bytes.saturating_sub(1))
}

/// Output of a command run under the cap.
pub struct RunOutput {
    /// stdout and stderr interleaved as written (one pipe), capped.
    pub output: Capped,
    /// Exit status; `None` when the host killed the command (at the cap, or
    /// at its time limit).
    pub status: Option<ExitStatus>,
    /// The command ran past its time limit and its process group was killed.
    pub timed_out: bool,
}

/// Runs `cmd` with stdout and stderr on one pipe, reading under `cap`; the
/// child is killed as soon as the cap is passed. With a `timeout`, the
/// command runs in a process group of its own, and the whole group is
/// killed when the time is up (a shell's children too); what it printed
/// until then is kept.
pub fn run_capped(cmd: &mut Command, cap: u64, timeout: Option<Duration>) -> Result<RunOutput> {
    use std::os::unix::process::CommandExt;
    let (reader, writer) = std::io::pipe()?;
    let writer2 = writer.try_clone()?;
    cmd.stdin(std::process::Stdio::null()).stdout(writer).stderr(writer2);
    if timeout.is_some() {
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    // Our copies of the write end must go, or the read never ends.
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let group = child.id() as libc::pid_t;
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = timeout.map(|t| {
        let flag = timed_out.clone();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(t) {
                flag.store(true, Ordering::SeqCst);
                // SAFETY: kill(2) on our child's own process group.
                unsafe { libc::kill(-group, libc::SIGKILL) };
            }
        })
    });
    let output = read_capped(reader, cap);
    let status = match &output {
        Ok(o) if o.over => {
            if timeout.is_some() {
                // SAFETY: as above; the cap stops the whole group.
                unsafe { libc::kill(-group, libc::SIGKILL) };
            } else {
                let _ = child.kill();
            }
            let _ = child.wait();
            None
        }
        _ => Some(child.wait()?),
    };
    drop(done);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let timed_out = timed_out.load(Ordering::SeqCst);
    Ok(RunOutput { output: output?, status: if timed_out { None } else { status }, timed_out })
}

/// Bytes the CLI's `redact` sends per step. Each step also rescans the
/// pipeline's overlap (64 KiB) from the step before, so larger chunks
/// rescan less: 1 MiB keeps that under 7 % at about 3 MiB of guest memory.
pub const REDACT_CHUNK: usize = 1 << 20;

/// How a stream is redacted.
pub struct StreamOptions<'r> {
    /// Bytes sent per step ([`REDACT_CHUNK`] by default).
    pub chunk: usize,
    /// Content type (e.g. `text/x-python`: source code, where generic rules
    /// look only inside string literals).
    pub content_type: Option<String>,
    /// Content from an untrusted source: inline allow markers are ignored.
    pub untrusted: bool,
    /// Where to write a report of every replacement, if anywhere.
    pub report: Option<crate::report::Report<'r>>,
}

impl Default for StreamOptions<'_> {
    fn default() -> Self {
        Self { chunk: REDACT_CHUNK, content_type: None, untrusted: false, report: None }
    }
}

/// Streams `input` to `output` through the pipeline's `redact` step and
/// returns the number of replacements. Memory stays at about one chunk
/// plus the pipeline's overlap.
pub fn redact_stream(
    s: &Sanitizer,
    pack: &LoadedPack,
    mut input: impl Read,
    mut output: impl Write,
    opts: &mut StreamOptions<'_>,
) -> Result<u64> {
    let chunk = opts.chunk.max(1);
    // The request holds the carry (bytes sent again with the next chunk)
    // and is reused: no copy of the data per step.
    let mut req = RedactRequest {
        data: Vec::with_capacity(chunk * 2),
        last: false,
        content_type: opts.content_type.clone(),
        untrusted: opts.untrusted,
        report: opts.report.is_some(),
    };
    let mut buf = vec![0u8; chunk];
    let mut total = 0u64;
    let mut eof = false;
    while !eof {
        // Fill a whole chunk (short reads are common on pipes).
        let mut filled = 0;
        while filled < chunk {
            let n = input.read(&mut buf[filled..])?;
            if n == 0 {
                eof = true;
                break;
            }
            filled += n;
        }
        req.data.extend_from_slice(&buf[..filled]);
        req.last = eof;
        let resp = s.redact_request(pack, &req)?;
        for r in &resp.redactions {
            total += u64::from(r.count);
        }
        output.write_all(&resp.output)?;
        if let Some(report) = opts.report.as_mut() {
            report.step(&req.data, resp.consumed as usize, &resp.spans)?;
        }
        req.data.drain(..resp.consumed as usize);
        if !eof && req.data.len() > chunk + (1 << 20) {
            return Err(Error::InvalidOutput("redact step made no progress".into()));
        }
    }
    output.flush()?;
    Ok(total)
}
