#!/usr/bin/env python3
"""Writes examples/build-log.txt: a ~1 MB CI shell log full of secrets.

The secrets are synthetic (random bodies in each provider's real format) and
are listed, one per line, in examples/build-log.secrets.txt so that tests can
check that none of them survives sanitizing. Deterministic (fixed seed).
"""
import os
import random
import string

random.seed(20261130)
HERE = os.path.dirname(os.path.abspath(__file__))
AL = string.ascii_letters + string.digits


def r(n, alphabet=AL):
    return "".join(random.choice(alphabet) for _ in range(n))


secrets = []


def s(value):
    secrets.append(value)
    return value


aws_id = s("AKIA" + r(16, string.ascii_uppercase + "234567"))
aws_secret = s(r(40, AL + "+/"))
gh = s("ghp_" + r(36))
glpat = s("glpat-" + r(20))
slack = s("xoxb-" + r(10, string.digits) + "-" + r(13, string.digits) + "-" + r(24))
stripe = s("sk_live_" + r(40))
openai = s("sk-proj-" + r(64, AL + "_-"))
anthropic = s("sk-ant-api03-" + r(93, AL + "_-"))
db_pw = s(r(18))
jwt = s("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaS1ib3QiLCJleHAiOjE3OTk5OTk5OTl9." + r(43, AL + "_-"))
bearer = s(r(48, AL + "._-"))
env_pw = s(r(14) + "!" + r(4))
google = s("AIza" + r(35, AL + "_-"))
pem_body = [r(64, AL + "+/") for _ in range(25)]
for line in pem_body:
    secrets.append(line)

lines = []
add = lines.append
add("$ export CI=true BUILD_ID=8812")
add("$ env | sort")
add(f"AWS_ACCESS_KEY_ID={aws_id}")
add(f"AWS_SECRET_ACCESS_KEY={aws_secret}")
add(f"GITHUB_TOKEN={gh}")
add(f"GITLAB_TOKEN={glpat}")
add("HOME=/home/ci-runner-7")
add(f"DB_PASSWORD={env_pw}")
add(f"DATABASE_URL=postgres://app:{db_pw}@db.internal:5432/app")
add("PATH=/home/ci-runner-7/.cargo/bin:/usr/local/bin:/usr/bin")
add(f"SLACK_BOT_TOKEN={slack}")
add(f"STRIPE_SECRET_KEY={stripe}")
add(f"OPENAI_API_KEY={openai}")
add(f"ANTHROPIC_API_KEY={anthropic}")
add("$ cargo build --release")
crates = ["serde", "tokio", "hyper", "regex", "clap", "anyhow", "rand", "bytes", "futures", "tracing"]
n = 0
while sum(len(x) + 1 for x in lines) < 480_000:
    c = random.choice(crates)
    n += 1
    add(f"   Compiling {c}-{n % 97} v1.{n % 13}.{n % 7} (/home/ci-runner-7/.cargo/registry/src/{c})")
    if n % 400 == 0:
        add(f"warning: unused variable `x{n}` in /home/ci-runner-7/work/app/src/lib.rs:{n % 900}:9")
add("$ curl -v https://api.internal.example/v1/deploy")
add("> POST /v1/deploy HTTP/1.1")
add(f"> Authorization: Bearer {bearer}")
add("< HTTP/1.1 200 OK")
add(f'< set-cookie: session={jwt}; HttpOnly')
add("$ cat deploy/key.pem")
add("-----BEGIN RSA PRIVATE KEY-----")
lines.extend(pem_body)
add("-----END RSA PRIVATE KEY-----")
add(f"maps: using key={google}")
add("$ cargo test --release")
t = 0
while sum(len(x) + 1 for x in lines) < 1_000_000:
    t += 1
    add(f"test module_{t % 50}::case_{t} ... ok")
    if t == 4000:
        add("test module_7::case_4000 ... FAILED")
        add("thread 'module_7::case_4000' panicked at /home/ci-runner-7/work/app/src/db.rs:212:5:")
        add(f"connection refused: postgres://app:{db_pw}@db.internal:5432/app")
add("failures:")
add("    module_7::case_4000")
add(f"test result: FAILED. {t - 1} passed; 1 failed; 0 ignored")
add("error: test failed, to rerun pass `--lib`")
add("Process exited with code 101")

with open(os.path.join(HERE, "build-log.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(HERE, "build-log.secrets.txt"), "w") as f:
    f.write("\n".join(secrets) + "\n")
print(f"wrote {len(lines)} lines, {len(secrets)} secrets")
