//! What every subcommand opens: the sanitizer and the pack the flags
//! choose, the input (stdin or a file), key and rules files.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use result_sanitizer_host::registry::{Registry, RegistryConfig};
use result_sanitizer_host::signing::{PublicKey, TrustPolicy};
use result_sanitizer_host::{Error, Limits, LoadedPack, Sanitizer};

use crate::flags::PackOpts;

/// The input: a reader, a regular file's size, and the file itself (read
/// by offset when long).
pub(crate) type Opened = (Box<dyn Read>, Option<u64>, Option<File>);

pub(crate) fn open_input(file: &Option<PathBuf>) -> io::Result<Opened> {
    match file {
        None => Ok((Box::new(io::stdin().lock()), None, None)),
        Some(p) if p.as_os_str() == "-" => Ok((Box::new(io::stdin().lock()), None, None)),
        Some(p) => {
            let f = File::open(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
            let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
            let seekable = len.map(|_| f.try_clone()).transpose()?;
            Ok((Box::new(f), len, seekable))
        }
    }
}

/// The content type a source file's name stands for (`.py`, `.rs`, ...).
pub(crate) fn content_type_of(file: &Option<PathBuf>) -> Option<String> {
    let name = file.as_ref()?.to_str()?;
    result_sanitizer_rule_engine::content_type_for_path(name).map(str::to_string)
}

pub(crate) fn read_key(path: &Path) -> Result<PublicKey, Error> {
    let p = if path.exists() { path.to_path_buf() } else { PathBuf::from(format!("{}.pub", path.display())) };
    Ok(PublicKey::read(&p)?)
}

pub(crate) fn policy(po: &PackOpts) -> Result<TrustPolicy, Error> {
    let keys = po.trusted_keys.iter().map(|p| read_key(p)).collect::<Result<Vec<_>, _>>()?;
    Ok(TrustPolicy { keys, allow_unsigned: po.allow_unsigned })
}

pub(crate) fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("result-sanitizer"))
}

/// A sanitizer serving the flags' platform pack, and the tenant pack they
/// choose (`None`: the embedded default pack).
pub(crate) fn open(limits: Limits, po: &PackOpts) -> Result<(Arc<Sanitizer>, Option<Arc<LoadedPack>>), Error> {
    let mut s = Sanitizer::new(limits)?;
    if let Some(p) = &po.platform_pack {
        let platform = s.load_pack_unverified(&read_file(p)?)?;
        s.set_platform_pack(Arc::new(platform));
    }
    let s = Arc::new(s);
    let loaded = select_pack(&s, po)?;
    Ok((s, loaded))
}

/// The pack chosen by the flags; `None` is the embedded default pack.
pub(crate) fn select_pack(s: &Arc<Sanitizer>, po: &PackOpts) -> Result<Option<Arc<LoadedPack>>, Error> {
    if let Some(dir) = &po.packs {
        let tenant = po.tenant.as_deref().expect("clap requires --tenant");
        let cfg = RegistryConfig { dir: dir.clone(), policy: policy(po)?, cache_dir: cache_dir(), capacity: 16 };
        return Ok(Some(Registry::open(s.clone(), cfg)?.pack_for(tenant)?));
    }
    match &po.pack {
        None => Ok(None),
        Some(p) => {
            let bytes = read_file(p)?;
            Ok(Some(Arc::new(s.load_pack(&bytes, &policy(po)?, po.tenant.as_deref(), cache_dir().as_deref())?)))
        }
    }
}

pub(crate) fn read_file(p: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(p).map_err(|e| Error::Io(io::Error::new(e.kind(), format!("{}: {e}", p.display()))))
}
