//! The run's processes: loopback ports, redis-server and the proxy replicas,
//! every one killed when the `Fleet` is dropped.

use super::*;

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub(crate) fn wait_listening(port: u16, what: &str) {
    let end = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "{what} does not listen on {port}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The processes of the run; every one is killed when this is dropped
/// (at the end, or while a panic unwinds).
pub(crate) struct Fleet {
    pub(crate) dir: PathBuf,
    pub(crate) bin: PathBuf,
    pub(crate) redis_port: u16,
    pub(crate) upstream_url: String,
    pub(crate) redis: Option<Child>,
    pub(crate) replicas: Vec<(u16, Option<Child>)>,
    pub(crate) others: Vec<Child>,
    /// Keeps `dir` (the proxies' logs) after a failed run.
    pub(crate) keep: bool,
}

impl Fleet {
    pub(crate) fn redis_url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.redis_port)
    }

    pub(crate) fn start_redis(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.redis_port.to_string(), "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server ({e}): run `make redis-deps`"));
        self.redis = Some(child);
        wait_listening(self.redis_port, "redis-server");
    }

    /// Stops Redis as a service manager would (SIGTERM, then waits).
    pub(crate) fn stop_redis(&mut self) {
        if let Some(mut c) = self.redis.take() {
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let _ = c.wait();
        }
    }

    pub(crate) fn proxy(&self, port: u16, key_env: Option<&str>, log: &str) -> Child {
        let mut c = Command::new(&self.bin);
        c.args(["mcp", "--listen", &format!("127.0.0.1:{port}"), "--recall-store", &self.redis_url()]);
        c.args(["--max-sessions", "512", "--upstream", &self.upstream_url]);
        match key_env {
            Some(k) => {
                c.env("RESULT_SANITIZER_RECALL_KEY", k);
            }
            None => {
                c.arg("--recall-key-file").arg(self.dir.join("recall.key"));
                c.env_remove("RESULT_SANITIZER_RECALL_KEY");
            }
        }
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join(log)).unwrap();
        let child = c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log).spawn().expect("the proxy starts");
        wait_listening(port, "the proxy");
        child
    }

    pub(crate) fn start_replica(&mut self, i: usize) {
        let port = self.replicas[i].0;
        let child = self.proxy(port, None, &format!("replica-{i}.log"));
        self.replicas[i].1 = Some(child);
    }

    pub(crate) fn kill_replica(&mut self, i: usize) {
        if let Some(mut c) = self.replicas[i].1.take() {
            let _ = c.kill(); // SIGKILL
            let _ = c.wait();
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for i in 0..self.replicas.len() {
            self.kill_replica(i);
        }
        for c in &mut self.others {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(mut c) = self.redis.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
