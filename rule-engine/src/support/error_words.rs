//! The words that mark a line as an error line. The redaction scan's
//! keyword pass finds them in the same pass as the rules' keywords
//! (`stages/redact/rules.rs`), and the error-line strategy
//! (`strategies/error_lines.rs`) shows the lines that hold them; one list
//! serves both.

/// Words that mark a line as an error line.
pub const WORDS: &[&str] = &[
    "error",
    "panic",
    "fatal",
    "exception",
    "traceback",
    "failed",
    "failure",
    "exit status",
    "exit code",
    "segmentation fault",
    "killed",
    "assertion",
    "denied",
    "undefined reference",
    "cannot find",
    "could not",
    "timed out",
];
