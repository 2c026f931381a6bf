//! The vector cache: sentence vectors of texts already embedded, so a scheduled rerun embeds
//! only the documents it has not seen.
//!
//! Why a file of our own: the transformer is the slowest stage by far, and a weekly report
//! re-reads mostly the same papers. One file per model (named by its weights' SHA-256) sits
//! in the pipeline's output folder (`output/<name>/cache/`). Each entry is a text's 128-bit
//! XXH3 hash and its vector; a run writes its own documents first and keeps older entries
//! after them only while the file stays under the cap. The file ends with an XXH3-64 of all
//! that precedes it: a file that is truncated, of another model or another length, or whose
//! checksum does not match is ignored with a warning, never trusted. It is written to a
//! temporary file and renamed, so a stopped run leaves the old cache or the new one.

use ndarray::ArrayView2;
use rustc_hash::FxHashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

/// The file's format, and the encoder's arithmetic: the number goes up when either changes, so
/// that vectors of an older build are not mixed with this one's.
const MAGIC: &[u8; 8] = b"TMEMBED3";
/// Magic, the model's SHA-256 (hex), dims (u32) and count (u64).
const HEADER: usize = 8 + 64 + 4 + 8;

/// The cached vectors of one model.
#[derive(Debug)]
pub struct VectorCache {
    path: PathBuf,
    model: String,
    dims: usize,
    index: FxHashMap<u128, usize>,
    vectors: Vec<f32>,
}

/// A text's key in the cache.
pub fn key(text: &str) -> u128 {
    xxh3_128(text.as_bytes())
}

impl VectorCache {
    /// The cache of `model` (its weights' SHA-256) in `dir`, empty when there is no file yet;
    /// a file that cannot be trusted is ignored, and the second value says why.
    pub fn open(dir: &Path, model: &str, dims: usize) -> (VectorCache, Option<String>) {
        let path = dir.join(format!("embeddings-{}.bin", &model[..model.len().min(16)]));
        let mut cache = VectorCache {
            path,
            model: model.to_string(),
            dims,
            index: FxHashMap::default(),
            vectors: Vec::new(),
        };
        let bytes = match std::fs::read(&cache.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (cache, None),
            Err(e) => {
                let why = format!("embedding cache {} ignored: {e}", cache.path.display());
                return (cache, Some(why));
            }
        };
        match cache.read(&bytes) {
            Ok(()) => (cache, None),
            Err(why) => {
                cache.index.clear();
                cache.vectors.clear();
                let why = format!("embedding cache {} ignored: {why}", cache.path.display());
                (cache, Some(why))
            }
        }
    }

    fn read(&mut self, bytes: &[u8]) -> Result<(), String> {
        if bytes.len() < HEADER + 8 || bytes[..7] != MAGIC[..7] {
            return Err("not a topicmap embedding cache".into());
        }
        if bytes[..8] != MAGIC[..] {
            return Err("an older topicmap wrote it".into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        if xxh3_64(body) != u64::from_le_bytes(sum.try_into().expect("8 bytes")) {
            return Err("its checksum does not match (damaged or cut short)".into());
        }
        if &body[8..72] != self.model.as_bytes() {
            return Err("it was written for another model".into());
        }
        let dims = u32::from_le_bytes(body[72..76].try_into().expect("4 bytes")) as usize;
        let count = u64::from_le_bytes(body[76..84].try_into().expect("8 bytes")) as usize;
        let entry = 16 + 4 * dims;
        if dims != self.dims || body.len() != HEADER + count * entry {
            return Err("its vectors are not this model's length".into());
        }
        self.vectors.reserve(count * dims);
        for (i, e) in body[HEADER..].chunks_exact(entry).enumerate() {
            let k = u128::from_le_bytes(e[..16].try_into().expect("16 bytes"));
            self.index.insert(k, i);
            self.vectors.extend(
                e[16..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))),
            );
        }
        Ok(())
    }

    /// How many vectors the cache holds.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The vector cached for the text with key `k`.
    pub fn get(&self, k: u128) -> Option<&[f32]> {
        self.index
            .get(&k)
            .map(|&i| &self.vectors[i * self.dims..(i + 1) * self.dims])
    }

    /// Writes this run's vectors (`keys[i]`'s is row `i`), then older entries while the file
    /// stays within `cap_bytes`. The file is written as it goes (through a buffer, with the
    /// checksum kept as it goes), never held whole in memory; it is not synced to disk: a file
    /// cut short by a crash fails its checksum and is rebuilt, as any damaged cache is.
    pub fn save(
        &self,
        keys: &[u128],
        vectors: ArrayView2<f32>,
        cap_bytes: usize,
    ) -> std::io::Result<()> {
        let entry = 16 + 4 * self.dims;
        let room = cap_bytes.saturating_sub(HEADER + 8) / entry;
        let mut seen = rustc_hash::FxHashSet::default();
        let mut old: Vec<(&u128, &usize)> = self.index.iter().collect();
        old.sort_by_key(|(_, &i)| i);
        let entries: Vec<(u128, &[f32])> = keys
            .iter()
            .zip(vectors.rows())
            .map(|(k, row)| (*k, row.to_slice().expect("a row's values side by side")))
            .chain(
                old.into_iter()
                    .map(|(k, &i)| (*k, &self.vectors[i * self.dims..(i + 1) * self.dims])),
            )
            .filter(|(k, _)| seen.insert(*k))
            .take(room)
            .collect();
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let tmp = self.path.with_extension("bin.tmp");
        let mut out = Summed {
            file: std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?),
            sum: xxhash_rust::xxh3::Xxh3::new(),
        };
        out.put(MAGIC)?;
        out.put(self.model.as_bytes())?;
        out.put(&(self.dims as u32).to_le_bytes())?;
        out.put(&(entries.len() as u64).to_le_bytes())?;
        let mut bytes = Vec::with_capacity(entry);
        for (k, v) in entries {
            bytes.clear();
            bytes.extend_from_slice(&k.to_le_bytes());
            v.iter()
                .for_each(|x| bytes.extend_from_slice(&x.to_le_bytes()));
            out.put(&bytes)?;
        }
        let sum = out.sum.digest();
        out.file.write_all(&sum.to_le_bytes())?;
        out.file.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&tmp, &self.path)
    }
}

/// A file being written, with the XXH3-64 of what went into it.
struct Summed {
    file: std::io::BufWriter<std::fs::File>,
    sum: xxhash_rust::xxh3::Xxh3,
}

impl Summed {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.sum.update(bytes);
        self.file.write_all(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    const MODEL: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

    #[test]
    fn vectors_come_back_and_a_damaged_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, warning) = VectorCache::open(dir.path(), MODEL, 2);
        assert!(cache.is_empty() && warning.is_none());
        let keys = [key("a"), key("b")];
        cache
            .save(&keys, array![[1.0f32, 2.0], [3.0, 4.0]].view(), 1 << 20)
            .unwrap();
        let (cache, warning) = VectorCache::open(dir.path(), MODEL, 2);
        assert!(warning.is_none());
        assert_eq!(cache.get(key("b")), Some(&[3.0f32, 4.0][..]));
        assert_eq!(cache.get(key("c")), None);
        // Another model's cache is another file; another length is refused.
        let (other, warning) = VectorCache::open(dir.path(), MODEL, 3);
        assert!(other.is_empty());
        assert!(warning.unwrap().contains("length"));
        // A flipped byte is caught by the checksum.
        let path = dir.path().join(format!("embeddings-{}.bin", &MODEL[..16]));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER + 20] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let (cache, warning) = VectorCache::open(dir.path(), MODEL, 2);
        assert!(cache.is_empty());
        assert!(warning.unwrap().contains("checksum"), "damage is named");
    }

    #[test]
    fn the_cap_keeps_this_runs_vectors_first() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, _) = VectorCache::open(dir.path(), MODEL, 1);
        cache
            .save(&[key("old")], array![[9.0f32]].view(), 1 << 20)
            .unwrap();
        let (cache, _) = VectorCache::open(dir.path(), MODEL, 1);
        // Room for exactly one entry of 16 + 4 bytes.
        cache
            .save(&[key("new")], array![[1.0f32]].view(), HEADER + 8 + 20)
            .unwrap();
        let (cache, _) = VectorCache::open(dir.path(), MODEL, 1);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get(key("new")), Some(&[1.0f32][..]));
    }
}
