//! `run -- CMD`: the command's output read as head + tail, a non-zero exit,
//! a signal or a timeout made a tool error.

use std::io::{self, Write};
use std::process::Command;

use result_sanitizer_host::api::{InputKind, OutputSource, ToolError};
use result_sanitizer_host::io::run_head_tail;
use result_sanitizer_host::Error;

use crate::flags::SanitizeOpts;
use crate::open::open;

/// Seconds, or a humantime duration.
pub(crate) fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    match s.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => Ok(std::time::Duration::from_secs_f64(secs)),
        Ok(_) => Err("the timeout must be above 0".into()),
        Err(_) => humantime::parse_duration(s).map_err(|e| e.to_string()),
    }
}

pub(crate) fn run(so: &SanitizeOpts, timeout: Option<std::time::Duration>, command: &[String]) -> Result<(), Error> {
    let (s, loaded) = open(so.limits.limits(), &so.packs)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut opts = so.options();
    opts.input = InputKind::Raw;
    // A command's output is not kept: nothing of it can be read back.
    opts.source = OutputSource::Pipe;
    let b = s.effective_budget(pack, &opts)?;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    let (head, tail) = if b.head_bytes > 0 { (b.head_bytes, b.tail_bytes) } else { (b.read_bytes, 0) };
    let out = run_head_tail(&s, pack, &mut cmd, (head, tail), so.drain_limit, timeout)?;
    if b.head_bytes > 0 {
        opts.gap = out.output.gap;
    } else {
        // A document read whole (HTML): its head, cut by the cap as before.
        opts.total_bytes = (!out.output.stopped).then_some(out.output.total);
    }
    if out.timed_out {
        let t = humantime::format_duration(timeout.unwrap_or_default());
        let message = format!("command did not finish within {t}; its process group was killed; the output it printed until then is below");
        opts.tool_error = Some(ToolError { code: "timeout".into(), message });
    } else if out.output.stopped {
        let message = format!(
            "command was stopped after printing {} bytes (the drain limit); its process group was killed; \
             the start and the last part of its output are below",
            out.output.total
        );
        opts.tool_error = Some(ToolError { code: "drain-limit".into(), message });
    }
    if let Some(status) = out.status {
        if !status.success() {
            use std::os::unix::process::ExitStatusExt;
            let (code, message) = match (status.code(), status.signal()) {
                (Some(c), _) => (format!("exit-status-{c}"), format!("command exited with status {c}")),
                (None, Some(sig)) => {
                    let name = signal_name(sig);
                    (format!("signal-{name}"), format!("command was killed by signal {sig} ({name})"))
                }
                _ => ("failed".into(), "command failed".into()),
            };
            opts.tool_error = Some(ToolError { code, message });
        }
    }
    let msg = s.sanitize_with(pack, &out.output.bytes, &opts)?;
    outln!("{}", msg.message)?;
    Ok(())
}

/// A signal's name, as `kill -l` prints it, for the tool-error code.
pub(crate) fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return sig.to_string(),
    };
    name.into()
}
