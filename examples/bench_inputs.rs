//! Inputs shared by `bench` and `profile`: generated, so that both measure
//! the same bytes, and deterministic (a fixed xorshift seed).

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn s(&mut self, n: usize, a: &str) -> String {
        (0..n).map(|_| a.as_bytes()[(self.next() % a.len() as u64) as usize] as char).collect()
    }
}
pub const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const HEX: &str = "0123456789abcdef";

/// A clean Java-style service log of about `bytes` bytes.
pub fn service_log(bytes: usize) -> Vec<u8> {
    let mut r = Rng(7);
    let mut out = String::with_capacity(bytes + 256);
    let paths = ["/api/v1/orders", "/api/v1/users", "/health", "/api/v1/cart/items", "/metrics"];
    let mut i = 0u64;
    while out.len() < bytes {
        i += 1;
        let uuid = format!("{}-{}-{}-{}-{}", r.s(8, HEX), r.s(4, HEX), r.s(4, HEX), r.s(4, HEX), r.s(12, HEX));
        let p = paths[(r.next() % 5) as usize];
        out.push_str(&format!(
            "2026-11-30T14:{:02}:{:02}.{:03}Z INFO  [http-nio-8080-exec-{}] c.acme.api.Controller - GET {p}/{} status=200 dur={}ms req_id={uuid} user=u_{}\n",
            (i / 60) % 60, i % 60, i % 1000, i % 16, r.next() % 100000, r.next() % 900, r.next() % 100000
        ));
        if i.is_multiple_of(50) {
            out.push_str(&format!("2026-11-30T14:00:00.000Z DEBUG [pool-2] c.acme.db.Pool - connection {} returned, active=3 idle=7 commit {}\n", r.s(8, HEX), r.s(40, HEX)));
        }
    }
    out.into_bytes()
}

/// A file where every line holds a credential.
pub fn dense(bytes: usize) -> Vec<u8> {
    let mut r = Rng(11);
    let mut out = String::new();
    while out.len() < bytes {
        let line = match r.next() % 8 {
            0 => format!("AWS_ACCESS_KEY_ID=AKIA{}\n", r.s(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
            1 => format!("export GITHUB_TOKEN=ghp_{}\n", r.s(36, AN)),
            2 => format!("DATABASE_URL=postgres://app:{}@db:5432/app\n", r.s(16, AN)),
            3 => format!("> Authorization: Bearer {}\n", r.s(40, AN)),
            4 => format!("STRIPE_KEY=sk_live_{}\n", r.s(40, AN)),
            5 => format!("slack: xoxb-{}-{}-{}\n", r.s(11, "0123456789"), r.s(13, "0123456789"), r.s(24, AN)),
            6 => format!("{{\"password\": \"{}\"}}\n", r.s(14, AN)),
            _ => format!("OPENAI_API_KEY=sk-proj-{}\n", r.s(80, AN)),
        };
        out.push_str(&line);
    }
    out.into_bytes()
}
