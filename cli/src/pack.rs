//! `pack ...` and `keygen`: build, wrap, sign, verify, check and inspect
//! rule packs (`result-sanitizer-pack-build`, `pack-format`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Subcommand;

use result_sanitizer_host::signing::{self, SecretKey, TrustPolicy};
use result_sanitizer_host::{Error, Limits, Sanitizer};
use result_sanitizer_pack_build::RulesFile;

use crate::open::{read_file, read_key};

#[derive(Subcommand)]
pub(crate) enum PackCmd {
    /// Build a pack component from a rules file (no Rust toolchain needed).
    Build {
        /// Rules file (TOML), or a directory of them (joined in name order).
        rules: PathBuf,
        /// Pack name (default: [pack].name).
        #[arg(long)]
        name: Option<String>,
        /// Pack version (default: [pack].version).
        #[arg(long)]
        version: Option<String>,
        /// Tenant scope, `*` for any (default: [pack].tenant).
        #[arg(long)]
        tenant: Option<String>,
        /// Copy the default rules in. The default for a pack for any tenant
        /// (`*`), which can stand as a platform's floor; a pack scoped to
        /// one tenant holds its own rules, and the platform's floor (the
        /// default rules unless the host is given a platform pack) runs
        /// under it.
        #[arg(long, conflicts_with = "no_defaults")]
        with_defaults: bool,
        /// Build from this file alone: no default rules, and none of the
        /// checks against them (a default rule's id, `code_min_*`).
        #[arg(long)]
        no_defaults: bool,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Turn a core module built from the Rust pack template into a pack component.
    Wrap {
        /// Core wasm module (wit-bindgen, world `pack`).
        core: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Sign a pack (Ed25519 over the wasm bytes and its manifest), embedding the signature.
    Sign {
        /// Pack component.
        pack: PathBuf,
        /// Secret key file (PREFIX.key).
        #[arg(long)]
        key: PathBuf,
        /// Expiry, RFC 3339 (e.g. 2027-01-01T00:00:00Z).
        #[arg(long)]
        expires: Option<String>,
        /// Platform rule ids the pack may turn off (its rules file's
        /// `relax`); comma-separated or repeated. Only the platform's key
        /// should sign with this.
        #[arg(long = "may-relax", value_delimiter = ',')]
        may_relax: Vec<String>,
        /// Output file (default: sign in place).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Verify a pack's signature, expiry, WIT version and tenant scope.
    Verify {
        /// Pack component.
        pack: PathBuf,
        /// Trusted public key (PREFIX.pub); repeat for several.
        #[arg(long = "trusted-key", required = true)]
        trusted_keys: Vec<PathBuf>,
        /// Tenant that will use it.
        #[arg(long)]
        tenant: Option<String>,
    },
    /// Check a rules file, or several joined (a directory: its *.toml files
    /// in name order): every regex compiles and every example holds; ids,
    /// regexes and rules that shadow others are reported.
    Check {
        /// Rules files (TOML) or directories of them, joined in this order.
        #[arg(required = true)]
        rules: Vec<PathBuf>,
    },
    /// Print a pack's manifest and sha256.
    Inspect {
        /// Pack component.
        pack: PathBuf,
    },
}

pub(crate) fn pack_cmd(cmd: &PackCmd) -> Result<(), Error> {
    match cmd {
        PackCmd::Build { rules, name, version, tenant, with_defaults, no_defaults, output } => {
            let mut rf = parse_rules(std::slice::from_ref(rules))?;
            let scope = rf.identity(name.as_deref(), version.as_deref(), tenant.as_deref()).map(|id| id.tenant);
            let for_any = scope.as_deref().is_ok_and(|t| t == "*");
            let invalid = |e: result_sanitizer_pack_build::RulesError| Error::InvalidPack(e.to_string());
            if *with_defaults || (for_any && !no_defaults) {
                rf = rf.over_defaults().map_err(invalid)?;
            } else if !no_defaults {
                rf = rf.on_floor().map_err(invalid)?;
            }
            let id = rf
                .identity(name.as_deref(), version.as_deref(), tenant.as_deref())
                .map_err(|e| Error::InvalidPack(e.to_string()))?;
            let wasm =
                result_sanitizer_pack_build::build(&rf, &id).map_err(|e| Error::InvalidPack(format!("{e:#}")))?;
            std::fs::write(output, &wasm)?;
            eprintln!("built {} ({} bytes, {} rules)", output.display(), wasm.len(), rf.rules.len());
            Ok(())
        }
        PackCmd::Wrap { core, output } => {
            let s = Sanitizer::new(Limits::default())?;
            let wasm = s.wrap_pack_core(&read_file(core)?)?;
            std::fs::write(output, &wasm)?;
            eprintln!("wrote {} ({} bytes)", output.display(), wasm.len());
            Ok(())
        }
        PackCmd::Sign { pack, key, expires, may_relax, output } => {
            let kp = if key.exists() { key.clone() } else { PathBuf::from(format!("{}.key", key.display())) };
            let sk = SecretKey::read(&kp)?;
            if let Some(i) = may_relax.iter().position(|id| !result_sanitizer_rule_engine::valid_rule_id(id)) {
                return Err(Error::InvalidPack(format!(
                    "--may-relax {}: {}",
                    i + 1,
                    result_sanitizer_rule_engine::RULE_ID_FORM
                )));
            }
            let signed =
                signing::sign(&read_file(pack)?, &sk, expires.as_deref(), may_relax).map_err(Error::InvalidPack)?;
            std::fs::write(output.as_ref().unwrap_or(pack), signed)?;
            eprintln!("signed with key {}", sk.public().key_id());
            Ok(())
        }
        PackCmd::Verify { pack, trusted_keys, tenant } => {
            let keys = trusted_keys.iter().map(|p| read_key(p)).collect::<Result<Vec<_>, _>>()?;
            let v = signing::verify(
                &read_file(pack)?,
                &TrustPolicy { keys, allow_unsigned: false },
                tenant.as_deref(),
                std::time::SystemTime::now(),
            )?;
            let signed = v.signed.expect("verified packs are signed");
            let relax = if signed.may_relax.is_empty() {
                String::new()
            } else {
                format!(", may relax {}", signed.may_relax.join(","))
            };
            outln!(
                "ok: pack `{}` {} for tenant `{}`, WIT {}, signed by {}, expires {}{relax}",
                v.manifest.name,
                v.manifest.version,
                v.manifest.tenant,
                v.manifest.wit_version,
                signed.key_id,
                signed.expires.as_deref().unwrap_or("never")
            )?;
            Ok(())
        }
        PackCmd::Check { rules } => {
            let rf = parse_rules(rules)?;
            let overlaps = rf.overlaps();
            let names = rules.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ");
            if !overlaps.is_empty() {
                return Err(Error::InvalidPack(overlaps.join("\n")));
            }
            outln!("{names}: {} rules, all examples hold, no duplicate or shadowed rule", rf.rules.len())?;
            Ok(())
        }
        PackCmd::Inspect { pack } => {
            let bytes = read_file(pack)?;
            let m = result_sanitizer_host::manifest::Manifest::read(&bytes)
                .map_err(|e| Error::InvalidPack(format!("{e:#}")))?
                .ok_or_else(|| Error::InvalidPack("no manifest section".into()))?;
            let sha = result_sanitizer_host::digest::sha256_hex(&bytes);
            let mut v = serde_json::to_value(&m).expect("manifest serializes");
            v["sha256"] = sha.into();
            let sig = signing::read_signature(&bytes)?;
            v["signer_key_id"] = sig.as_ref().map(|s| s.key_id.clone()).into();
            v["expires"] = sig.as_ref().and_then(|s| s.expires.clone()).into();
            v["may_relax"] = sig.as_ref().map(|s| s.may_relax.clone()).unwrap_or_default().into();
            v["signed"] = sig.is_some().into();
            outln!("{}", serde_json::to_string_pretty(&v).expect("json"))?;
            Ok(())
        }
    }
}

pub(crate) fn keygen(prefix: &Path) -> Result<(), Error> {
    let sk = SecretKey::generate();
    let key = PathBuf::from(format!("{}.key", prefix.display()));
    let public = PathBuf::from(format!("{}.pub", prefix.display()));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&key)?;
        f.write_all(sk.to_text().as_bytes())?;
    }
    std::fs::write(&public, sk.public().to_text())?;
    outln!("key id {}: wrote {} and {}", sk.public().key_id(), key.display(), public.display())?;
    Ok(())
}

/// Reads rules files and directories (a directory's `*.toml` files in name
/// order, as `rules/default/`) and parses them as one rules file.
pub(crate) fn parse_rules(paths: &[PathBuf]) -> Result<RulesFile, Error> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut names = std::fs::read_dir(path)
                .map_err(|e| Error::Io(io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect::<Vec<_>>();
            names.sort();
            if names.is_empty() {
                return Err(Error::InvalidPack(format!("{}: no .toml files", path.display())));
            }
            files.extend(names);
        } else {
            files.push(path.clone());
        }
    }
    let mut texts = Vec::new();
    for f in &files {
        let text =
            String::from_utf8(read_file(f)?).map_err(|_| Error::InvalidPack(format!("{}: not UTF-8", f.display())))?;
        texts.push((f.display().to_string(), text));
    }
    let pairs: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    RulesFile::parse_files(&pairs).map_err(|e| Error::InvalidPack(e.to_string()))
}
