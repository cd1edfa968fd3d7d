//! Host I/O: reading under the byte cap, running commands, streaming.
//!
//! Raw output is read as head + tail ([`read_head_tail`]): the first
//! `head-bytes` are kept, then a ring buffer of the last `tail-bytes`;
//! every byte that falls out of the ring is drained through the pipeline's
//! `drain` step (counted, scanned for error lines, redacted) and dropped.
//! Memory stays at the cap plus one drain chunk, whatever the length, and
//! a command runs to its end. Documents read whole (MCP, HTML) are read
//! under `read-bytes` ([`read_capped`]): at most `cap + 1` bytes, the extra
//! byte telling the pipeline there was more.

use std::io::Read;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::api::Gap;
use crate::engine::{LoadedPack, Sanitizer};
use crate::error::{Error, Result};

mod stream;
pub use stream::{redact_stream, StreamOptions, Streamed, REDACT_CHUNK};

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

/// Bytes of the middle sent per `drain` step (as for `redact`, each step
/// rescans the pipeline's 64 KiB overlap).
pub(crate) const DRAIN_CHUNK: usize = 1 << 20;

/// Default for how much of an output is read before reading stops: a
/// producer that never ends (`yes`) is stopped there.
pub const DEFAULT_DRAIN_LIMIT: u64 = 1 << 30;

/// A long output as a host keeps it: head and tail, and the middle drained.
pub struct HeadTail {
    /// The head, then the tail: the input to sanitize.
    pub bytes: Vec<u8>,
    /// The drained middle when there was one: the options' `gap`.
    pub gap: Option<Gap>,
    /// Bytes read in all.
    pub total: u64,
    /// Reading stopped at the drain limit; the output went on.
    pub stopped: bool,
}

/// Reads `r` (a pipe, a socket, an HTTP body, a file) to its end, or to
/// `drain_limit` bytes, keeping the first `head` bytes and the last `tail`
/// (the budget's `head-bytes` and `tail-bytes`). The bytes between them go
/// through the pipeline's `drain` step, once, and are not kept. An output
/// of at most `head + tail` bytes is kept whole, with no gap.
pub fn read_head_tail(
    s: &Sanitizer,
    pack: &LoadedPack,
    mut r: impl Read,
    head: u64,
    tail: u64,
    drain_limit: u64,
) -> Result<HeadTail> {
    let (head, tail) = (head as usize, tail as usize);
    let mut bytes = Vec::with_capacity(head.min(1 << 20));
    let mut ring: Vec<u8> = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut gap: Option<Gap> = None;
    let mut buf = vec![0u8; 64 * 1024];
    let (mut total, mut stopped) = (0u64, false);
    loop {
        let room = drain_limit.saturating_sub(total).min(buf.len() as u64) as usize;
        if room == 0 {
            // At the limit: stopped only if the output goes on.
            stopped = loop {
                match r.read(&mut buf[..1]) {
                    Ok(n) => break n > 0,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e.into()),
                }
            };
            break;
        }
        let n = match r.read(&mut buf[..room]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        total += n as u64;
        let mut data = &buf[..n];
        if bytes.len() < head {
            let k = (head - bytes.len()).min(data.len());
            bytes.extend_from_slice(&data[..k]);
            data = &data[k..];
        }
        ring.extend_from_slice(data);
        // The ring keeps the last `tail` bytes; what falls out is drained
        // (moved out a chunk at a time, so the shifting stays cheap).
        if ring.len() > tail + buf.len() {
            let out = ring.len() - tail;
            pending.extend(ring.drain(..out));
            let g = gap.get_or_insert_with(|| empty_gap(bytes.len() as u64));
            if pending.len() >= DRAIN_CHUNK {
                drain(s, pack, g, &mut pending, false)?;
            }
        }
    }
    if ring.len() > tail {
        let out = ring.len() - tail;
        pending.extend(ring.drain(..out));
        gap.get_or_insert_with(|| empty_gap(bytes.len() as u64));
    }
    if let Some(g) = gap.as_mut() {
        drain(s, pack, g, &mut pending, true)?;
    }
    if stopped {
        // Even with nothing drained (a limit below the cap), the pipeline
        // must know the output went on.
        gap.get_or_insert_with(|| empty_gap(bytes.len() as u64)).unfinished = true;
    }
    bytes.extend_from_slice(&ring);
    Ok(HeadTail { bytes, gap, total, stopped })
}

/// A gap after a head of `start` bytes, nothing drained yet.
pub(crate) fn empty_gap(start: u64) -> Gap {
    Gap {
        start_byte: start,
        bytes: 0,
        newlines: 0,
        ends_line: false,
        error_lines: Vec::new(),
        error_lines_seen: 0,
        redactions: Vec::new(),
        unfinished: false,
        json: Vec::new(),
        unscanned: 0,
    }
}

/// One `drain` step over `pending`, keeping what it did not consume.
fn drain(s: &Sanitizer, pack: &LoadedPack, gap: &mut Gap, pending: &mut Vec<u8>, last: bool) -> Result<()> {
    let step = s.drain_step(pack, gap, pending, last)?;
    pending.drain(..step.consumed as usize);
    *gap = step.gap;
    if !last && pending.len() > 2 * DRAIN_CHUNK + (1 << 20) {
        return Err(Error::InvalidOutput("drain step made no progress".into()));
    }
    Ok(())
}

/// Output of a command, read as head + tail.
pub struct RunOutput {
    /// stdout and stderr interleaved as written (one pipe).
    pub output: HeadTail,
    /// Exit status; `None` when the host killed the command (at its time
    /// limit, or at the drain limit).
    pub status: Option<ExitStatus>,
    /// The command ran past its time limit and its process group was killed.
    pub timed_out: bool,
}

/// Runs `cmd` in a process group of its own with stdout and stderr on one
/// pipe (their order kept), reading it as head + tail
/// ([`read_head_tail`]) to its end: the command runs to completion and its
/// status is kept. With a `timeout`, the whole group is killed when the
/// time is up (a shell's children too), and so it is when the output
/// reaches `drain_limit`; what it printed until then is kept.
pub fn run_head_tail(
    s: &Sanitizer,
    pack: &LoadedPack,
    cmd: &mut Command,
    head_tail: (u64, u64),
    drain_limit: u64,
    timeout: Option<Duration>,
) -> Result<RunOutput> {
    use std::os::unix::process::CommandExt;
    let (reader, writer) = std::io::pipe()?;
    let writer2 = writer.try_clone()?;
    cmd.stdin(std::process::Stdio::null()).stdout(writer).stderr(writer2);
    cmd.process_group(0);
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
    let output = read_head_tail(s, pack, reader, head_tail.0, head_tail.1, drain_limit);
    let status = match &output {
        Ok(o) if !o.stopped => Some(child.wait()?),
        _ => {
            // The drain limit (or a failed read): stop the whole group.
            // SAFETY: kill(2) on our child's own process group.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            let _ = child.wait();
            None
        }
    };
    drop(done);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let timed_out = timed_out.load(Ordering::SeqCst);
    Ok(RunOutput { output: output?, status: if timed_out { None } else { status }, timed_out })
}

/// How much of a file's middle a host scans (drains) at most: the first
/// 64 MiB after the head. Past it, a seekable file's middle is only
/// counted (its bytes and newlines, natively, skipping a sparse file's
/// holes): its error lines and secrets are not looked for, and the marker
/// says which bytes were not scanned.
const SCAN_BOUND: u64 = 64 << 20;

/// A regular file of `len` bytes, read as [`read_head_tail`] reads a
/// stream, but by offset: the head from 0, the tail from `len - tail`, and
/// of the middle only its first [`SCAN_BOUND`] bytes go through the `drain`
/// step; the rest is counted, not read into the pipeline. So a 10 GB log
/// answers in the time its head, its tail and the bound take.
pub fn read_file_head_tail(
    s: &Sanitizer,
    pack: &LoadedPack,
    f: &std::fs::File,
    len: u64,
    (head, tail): (u64, u64),
) -> Result<HeadTail> {
    use std::os::unix::fs::FileExt;
    if len <= head + tail {
        let mut bytes = vec![0u8; len as usize];
        f.read_exact_at(&mut bytes, 0)?;
        return Ok(HeadTail { bytes, gap: None, total: len, stopped: false });
    }
    let mut bytes = vec![0u8; head as usize];
    f.read_exact_at(&mut bytes, 0)?;
    let (mid_end, scan_end) = (len - tail, (len - tail).min(head.saturating_add(SCAN_BOUND)));
    let mut gap = empty_gap(head);
    let mut pending: Vec<u8> = Vec::with_capacity(2 * DRAIN_CHUNK);
    // Only the data is drained: a sparse file's holes (zeros: no line,
    // no secret) are counted.
    let mut off = head;
    let mut holes = false;
    for (start, end) in DataRegions::new(f, head, scan_end) {
        if start > off {
            drain(s, pack, &mut gap, &mut pending, true)?;
            gap.bytes += start - off;
            gap.ends_line = false;
            holes = true;
        }
        off = start;
        while off < end {
            let n = (end - off).min(DRAIN_CHUNK as u64) as usize;
            let at = pending.len();
            pending.resize(at + n, 0);
            f.read_exact_at(&mut pending[at..], off)?;
            off += n as u64;
            if pending.len() >= DRAIN_CHUNK && off < end {
                drain(s, pack, &mut gap, &mut pending, false)?;
            }
        }
    }
    drain(s, pack, &mut gap, &mut pending, true)?;
    if off < scan_end {
        gap.bytes += scan_end - off;
        gap.ends_line = false;
        holes = true;
    }
    if scan_end < mid_end {
        let (newlines, last) = count_newlines(f, scan_end, mid_end)?;
        gap.bytes += mid_end - scan_end;
        gap.newlines += newlines;
        gap.ends_line = last == b'\n';
        gap.unscanned = mid_end - scan_end;
    }
    if scan_end < mid_end || holes {
        // Its JSON nesting is not known past the bound (nor across a hole).
        if gap.json.is_empty() {
            gap.json = vec![dead_scan(); 3];
        }
        gap.json.iter_mut().for_each(|j| j.dead = true);
    }
    let mut t = vec![0u8; tail as usize];
    f.read_exact_at(&mut t, mid_end)?;
    bytes.extend_from_slice(&t);
    Ok(HeadTail { bytes, gap: Some(gap), total: len, stopped: false })
}

fn dead_scan() -> crate::api::JsonScan {
    crate::api::JsonScan { in_str: false, esc: false, dead: true, depth: 0, min_depth: 0, commas: 0 }
}

/// The data regions of bytes `from..to` of `f`, in order (SEEK_DATA,
/// SEEK_HOLE); the whole range when the file system cannot tell.
struct DataRegions<'f> {
    f: &'f std::fs::File,
    at: u64,
    to: u64,
}

impl<'f> DataRegions<'f> {
    fn new(f: &'f std::fs::File, from: u64, to: u64) -> Self {
        Self { f, at: from, to }
    }
}

impl Iterator for DataRegions<'_> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        use std::os::fd::AsRawFd;
        if self.at >= self.to {
            return None;
        }
        let fd = self.f.as_raw_fd();
        // SAFETY: lseek on an open descriptor; the result is checked.
        let data = unsafe { libc::lseek(fd, self.at as libc::off_t, libc::SEEK_DATA) };
        let start = if data < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
                self.at = self.to; // a hole to the end
                return None;
            }
            self.at // no SEEK_DATA here: all of it is data
        } else {
            (data as u64).max(self.at)
        };
        if start >= self.to {
            self.at = self.to;
            return None;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, start as libc::off_t, libc::SEEK_HOLE) };
        let end = if hole < 0 { self.to } else { (hole as u64).clamp(start + 1, self.to) };
        self.at = end;
        Some((start, end))
    }
}

/// Newlines in bytes `from..to` of `f`, and the last byte: only its data
/// is read (a sparse file's holes are zeros, so they hold none).
fn count_newlines(f: &std::fs::File, from: u64, to: u64) -> Result<(u64, u8)> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; DRAIN_CHUNK];
    let mut n = 0u64;
    for (start, end) in DataRegions::new(f, from, to) {
        let mut p = start;
        while p < end {
            let k = (end - p).min(buf.len() as u64) as usize;
            f.read_exact_at(&mut buf[..k], p)?;
            n += memchr::memchr_iter(b'\n', &buf[..k]).count() as u64;
            p += k as u64;
        }
    }
    let mut last = [0u8; 1];
    f.read_exact_at(&mut last, to - 1)?;
    Ok((n, last[0]))
}
