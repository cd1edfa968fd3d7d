//! Newline-delimited messages (the MCP stdio transport), read under a cap.

use std::io::{BufRead, ErrorKind, IoSlice, Write};

/// Bytes of an oversized message's start and end kept to find its id.
const EDGE: usize = 4096;

/// One message read.
pub enum Line {
    /// A whole message, without its newline.
    Message(Vec<u8>),
    /// A message over the cap, dropped as it was read: its first and last
    /// bytes (up to 4 KiB each) and its size.
    Oversized { head: Vec<u8>, tail: Vec<u8>, size: u64 },
    /// The stream ended.
    Eof,
}

/// Reads the next non-empty line of `r`, holding at most `cap` bytes of
/// it: a longer line is consumed to its end and reported as
/// [`Line::Oversized`]. A last line without a newline counts.
pub fn read_line_capped(r: &mut impl BufRead, cap: usize) -> std::io::Result<Line> {
    loop {
        let mut msg = Vec::new();
        let mut over: Option<(Vec<u8>, Vec<u8>, u64)> = None;
        let mut ended = false;
        loop {
            let buf = match r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                ended = true;
                break;
            }
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], i + 1),
                None => (buf, buf.len()),
            };
            let newline = done > chunk.len();
            match over.as_mut() {
                None if msg.len() + chunk.len() <= cap => msg.extend_from_slice(chunk),
                None => {
                    let head = msg.iter().chain(chunk).take(EDGE).copied().collect();
                    let size = (msg.len() + chunk.len()) as u64;
                    msg.extend_from_slice(chunk);
                    let tail = msg[msg.len().saturating_sub(EDGE)..].to_vec();
                    msg = Vec::new();
                    over = Some((head, tail, size));
                }
                Some((_, tail, size)) => {
                    *size += chunk.len() as u64;
                    tail.extend_from_slice(chunk);
                    if tail.len() > EDGE {
                        tail.drain(..tail.len() - EDGE);
                    }
                }
            }
            r.consume(done);
            if newline {
                break;
            }
        }
        if let Some((head, tail, size)) = over {
            return Ok(Line::Oversized { head, tail, size });
        }
        // A CR before the newline is framing too.
        if msg.last() == Some(&b'\r') {
            msg.pop();
        }
        if !msg.iter().all(u8::is_ascii_whitespace) {
            return Ok(Line::Message(msg));
        }
        if ended {
            return Ok(Line::Eof);
        }
    }
}

/// Writes `msg` and a newline in one `writev` where the writer can: a
/// reader woken by the message then finds it whole.
pub fn write_line(w: &mut impl Write, msg: &[u8]) -> std::io::Result<()> {
    let mut bufs = [IoSlice::new(msg), IoSlice::new(b"\n")];
    let mut bufs = &mut bufs[..];
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], cap: usize) -> Vec<String> {
        let mut r = std::io::BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            match read_line_capped(&mut r, cap).unwrap() {
                Line::Message(m) => out.push(String::from_utf8(m).unwrap()),
                Line::Oversized { head, tail, size } => out.push(format!(
                    "over {size} {}..{}",
                    String::from_utf8_lossy(&head),
                    String::from_utf8_lossy(&tail)
                )),
                Line::Eof => return out,
            }
        }
    }

    #[test]
    fn lines_under_and_over_the_cap() {
        assert_eq!(all(b"{\"a\":1}\n\n{\"b\":2}\r\n{\"c\"", 10), ["{\"a\":1}", "{\"b\":2}", "{\"c\""]);
        assert_eq!(all(b"0123456789\nabcdefghijk\nx\n", 10), ["0123456789", "over 11 abcdefghijk..abcdefghijk", "x"]);
    }
}
