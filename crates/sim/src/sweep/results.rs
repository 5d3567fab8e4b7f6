//! Result files of a sweep: `results.csv` and `results.jsonl`, streamed one line per finished
//! run, resumable.
//!
//! * A row is appended to both files as soon as its run finishes, each file flushed to the
//!   operating system after every line, so a sweep that is killed keeps every run it finished
//!   (at most the line being written is cut short).
//! * [`OpenMode::New`] refuses to touch existing files, [`OpenMode::Overwrite`] truncates them,
//!   [`OpenMode::Resume`] keeps them and reports the runs they hold ([`ResultFiles::done`]).
//!   Resuming reconciles the two files first: a last line without its newline (cut by an
//!   interruption) is dropped, as is a run present in only one of the files (interrupted
//!   between the two writes) and any repeated run; such runs are not done and will run again.
//!   The CSV header must be the one this version writes.
//! * [`ResultFiles::finish`] rewrites both files in plan order, atomically (a temporary file
//!   renamed over the old one).
//! * Two sweeps writing into one directory at the same time would interleave their lines, so
//!   the files are opened under an exclusive advisory lock (`flock` on `.results.lock` in the
//!   directory, on Unix; the operating system releases it when the process ends, even when it
//!   is killed). A second sweep fails at once with [`SweepError::Busy`].

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use flashbuf_flash::DeviceStats;
use flashbuf_policy::PolicyConfig;
use flashbuf_trace::output::{AtomicFile, check_destination};

use super::{RunKey, SweepError};
use crate::buffer::Counters;
use crate::job::RunSpec;
use crate::run::{ResultRow, RunOutput};

/// What to do with result files that already exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Fail with [`SweepError::Exists`] if either file exists.
    New,
    /// Replace existing files.
    Overwrite,
    /// Keep existing files, skip the runs they hold, append the others.
    Resume,
}

/// The two streaming result files of a sweep.
#[derive(Debug)]
pub struct ResultFiles {
    /// Held for the lifetime of the files (see the module documentation).
    _lock: File,
    dir: PathBuf,
    csv_path: PathBuf,
    jsonl_path: PathBuf,
    csv: File,
    jsonl: File,
    done: HashSet<RunKey>,
    dropped: usize,
}

/// The CSV header of result rows: every field of [`ResultRow`], in order.
pub fn csv_header() -> Vec<String> {
    let policy = PolicyConfig::with_defaults("lru").expect("lru is registered");
    let out = RunOutput {
        counters: Counters::default(),
        device: DeviceStats::default(),
        position: 0,
        warmup: 0,
        intervals: Vec::new(),
        elapsed_s: 0.0,
        cpu_s: 0.0,
    };
    let trace = flashbuf_trace::TraceSpec::parse("gen:uniform").expect("a generator");
    let spec = RunSpec::new(trace, 1, policy, 1, flashbuf_flash::DeviceConfig::default());
    let row = ResultRow::of_run(&spec, &out);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(&row).expect("a result row serialises");
    let bytes = w.into_inner().expect("writing to memory");
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(bytes.as_slice());
    let header = r.records().next().expect("a header line").expect("valid CSV");
    header.iter().map(str::to_string).collect()
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SweepError + '_ {
    move |source| SweepError::Io { path: path.to_path_buf(), source }
}

fn csv_line(record: &csv::StringRecord) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    w.write_record(record).expect("writing to memory");
    w.into_inner().expect("writing to memory")
}

fn row_csv_line(row: &ResultRow) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    w.serialize(row).expect("a result row serialises");
    w.into_inner().expect("writing to memory")
}

/// The complete lines of a file (a last line without newline is cut off); `None` if the file
/// does not exist. The flag says whether something was cut.
fn complete_lines(path: &Path) -> Result<Option<(Vec<u8>, bool)>, SweepError> {
    let mut bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path)(e)),
    };
    let cut = !bytes.is_empty() && bytes.last() != Some(&b'\n');
    if cut {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(keep);
    }
    Ok(Some((bytes, cut)))
}

struct CsvRows {
    rows: Vec<(RunKey, csv::StringRecord)>,
    cut: bool,
}

fn read_csv(path: &Path, header: &[String]) -> Result<Option<CsvRows>, SweepError> {
    let Some((bytes, cut)) = complete_lines(path)? else { return Ok(None) };
    let bad = |line: u64, message: String| SweepError::Results { path: path.to_path_buf(), line, message };
    let mut r = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(bytes.as_slice());
    let mut rows = Vec::new();
    let mut records = r.records();
    match records.next() {
        None => return Ok(Some(CsvRows { rows, cut })),
        Some(first) => {
            let first = first.map_err(|e| bad(1, e.to_string()))?;
            if first.iter().ne(header.iter().map(String::as_str)) {
                return Err(bad(
                    1,
                    "the columns differ from the result rows of this version of flashbuf, so the sweep cannot \
                     be resumed into this file; use --force to start afresh or another output directory"
                        .to_string(),
                ));
            }
        }
    }
    let col = |name: &str| header.iter().position(|h| h == name).expect("a key column of result rows");
    let (t, p, b, d, w) = (col("trace"), col("policy"), col("buffer_pages"), col("device"), col("write_miss"));
    let id = col("run_id");
    for rec in records {
        let rec = rec.map_err(|e| bad(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = rec.position().map_or(0, |p| p.line());
        if rec.len() != header.len() {
            return Err(bad(line, format!("{} fields, expected {}", rec.len(), header.len())));
        }
        let buffer_pages =
            rec[b].parse::<u64>().map_err(|_| bad(line, format!("buffer_pages '{}' is not a number", &rec[b])))?;
        let key = RunKey {
            trace: rec[t].to_string(),
            policy: rec[p].to_string(),
            buffer_pages,
            device: rec[d].to_string(),
            write_miss: rec[w].to_string(),
            run_id: rec[id].to_string(),
        };
        rows.push((key, rec));
    }
    Ok(Some(CsvRows { rows, cut }))
}

struct JsonRows {
    rows: Vec<(RunKey, String)>,
    cut: bool,
}

fn read_jsonl(path: &Path) -> Result<Option<JsonRows>, SweepError> {
    let Some((bytes, cut)) = complete_lines(path)? else { return Ok(None) };
    let text = String::from_utf8(bytes).map_err(|_| SweepError::Results {
        path: path.to_path_buf(),
        line: 0,
        message: "not UTF-8 text".into(),
    })?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| SweepError::Results { path: path.to_path_buf(), line: i as u64 + 1, message };
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let s = |k: &str| {
            v.get(k).and_then(|x| x.as_str()).map(str::to_string).ok_or_else(|| bad(format!("no '{k}' string")))
        };
        let key = RunKey {
            trace: s("trace")?,
            policy: s("policy")?,
            buffer_pages: v
                .get("buffer_pages")
                .and_then(|x| x.as_u64())
                .ok_or_else(|| bad("no 'buffer_pages' number".into()))?,
            device: s("device")?,
            write_miss: s("write_miss")?,
            run_id: s("run_id")?,
        };
        rows.push((key, line.to_string()));
    }
    Ok(Some(JsonRows { rows, cut }))
}

/// Takes the exclusive lock of the result directory, or fails with [`SweepError::Busy`].
fn lock_dir(dir: &Path) -> Result<File, SweepError> {
    let path = dir.join(".results.lock");
    regular_or_absent(&path)?;
    let mut o = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NOFOLLOW);
    let file = o.create(true).truncate(false).write(true).open(&path).map_err(io(&path))?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a file descriptor this function owns; no memory is involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EWOULDBLOCK) => SweepError::Busy { dir: dir.to_path_buf() },
                _ => io(&path)(e),
            });
        }
    }
    Ok(file)
}

/// Writes `bytes` to `dest` through a temporary file in the same directory, renamed over it
/// (only a regular file is replaced: [`flashbuf_trace::output`]).
fn write_atomic(dest: &Path, bytes: &[u8]) -> Result<(), SweepError> {
    let refused = |m: String| io(dest)(std::io::Error::other(m));
    let mut tmp = AtomicFile::create(dest, true).map_err(refused)?;
    tmp.file().write_all(bytes).map_err(io(dest))?;
    tmp.commit().map_err(refused)
}

/// Fails unless `path` is absent or a regular file (a result file that is a symbolic link, a
/// FIFO or a device is never written through).
fn regular_or_absent(path: &Path) -> Result<(), SweepError> {
    match check_destination(path, true) {
        Ok(()) => Ok(()),
        Err(m) => Err(io(path)(std::io::Error::other(m))),
    }
}

impl ResultFiles {
    /// File name of the CSV results.
    pub const CSV: &'static str = "results.csv";
    /// File name of the JSON Lines results.
    pub const JSONL: &'static str = "results.jsonl";

    /// The result files of directory `dir` that exist.
    pub fn existing(dir: &Path) -> Vec<PathBuf> {
        [Self::CSV, Self::JSONL].iter().map(|n| dir.join(n)).filter(|p| p.exists()).collect()
    }

    /// Fails as [`ResultFiles::open`] would for existing files in [`OpenMode::New`], without
    /// creating anything (to refuse before any work is done).
    pub fn check(dir: &Path, mode: OpenMode) -> Result<(), SweepError> {
        for name in [Self::CSV, Self::JSONL, ".results.lock"] {
            regular_or_absent(&dir.join(name))?;
        }
        match (mode, Self::existing(dir).into_iter().next()) {
            (OpenMode::New, Some(path)) => Err(SweepError::Exists { path }),
            _ => Ok(()),
        }
    }

    /// Opens (creating `dir` if needed) the result files of `dir`.
    pub fn open(dir: &Path, mode: OpenMode) -> Result<Self, SweepError> {
        Self::check(dir, mode)?;
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let lock = lock_dir(dir)?;
        let csv_path = dir.join(Self::CSV);
        let jsonl_path = dir.join(Self::JSONL);
        let header = csv_header();
        let mut done = HashSet::new();
        let mut dropped = 0;
        let mut csv_has_header = false;
        if mode == OpenMode::Resume {
            let csv_rows = read_csv(&csv_path, &header)?;
            let json_rows = read_jsonl(&jsonl_path)?;
            csv_has_header = csv_rows.is_some() && std::fs::metadata(&csv_path).map(|m| m.len() > 0).unwrap_or(false);
            let csv_rows = csv_rows.unwrap_or(CsvRows { rows: Vec::new(), cut: false });
            let json_rows = json_rows.unwrap_or(JsonRows { rows: Vec::new(), cut: false });
            let in_json: HashSet<&RunKey> = json_rows.rows.iter().map(|(k, _)| k).collect();
            let in_csv: HashSet<&RunKey> = csv_rows.rows.iter().map(|(k, _)| k).collect();
            let both: HashSet<RunKey> = in_csv.intersection(&in_json).map(|k| (*k).clone()).collect();
            dropped =
                in_csv.symmetric_difference(&in_json).count() + usize::from(csv_rows.cut) + usize::from(json_rows.cut);

            let mut seen = HashSet::new();
            let keep_csv: Vec<&csv::StringRecord> = csv_rows
                .rows
                .iter()
                .filter(|(k, _)| both.contains(k) && seen.insert(k.clone()))
                .map(|(_, r)| r)
                .collect();
            if keep_csv.len() != csv_rows.rows.len() || csv_rows.cut {
                let mut bytes = csv_line(&csv::StringRecord::from(header.clone()));
                for r in keep_csv {
                    bytes.extend(csv_line(r));
                }
                write_atomic(&csv_path, &bytes)?;
                csv_has_header = true;
            }
            let mut seen = HashSet::new();
            let keep_json: Vec<&String> = json_rows
                .rows
                .iter()
                .filter(|(k, _)| both.contains(k) && seen.insert(k.clone()))
                .map(|(_, l)| l)
                .collect();
            if keep_json.len() != json_rows.rows.len() || json_rows.cut {
                let mut bytes = Vec::new();
                for l in keep_json {
                    bytes.extend_from_slice(l.as_bytes());
                    bytes.push(b'\n');
                }
                write_atomic(&jsonl_path, &bytes)?;
            }
            done = both;
        }
        let open = |path: &Path| -> Result<File, SweepError> {
            regular_or_absent(path)?;
            let mut o = OpenOptions::new();
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NOFOLLOW);
            match mode {
                OpenMode::New => o.write(true).create_new(true),
                OpenMode::Overwrite => o.write(true).create(true).truncate(true),
                OpenMode::Resume => o.append(true).create(true),
            };
            o.open(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => SweepError::Exists { path: path.to_path_buf() },
                _ => io(path)(e),
            })
        };
        let mut csv = open(&csv_path)?;
        let jsonl = open(&jsonl_path)?;
        if !csv_has_header {
            csv.write_all(&csv_line(&csv::StringRecord::from(header))).map_err(io(&csv_path))?;
        }
        Ok(ResultFiles { _lock: lock, dir: dir.to_path_buf(), csv_path, jsonl_path, csv, jsonl, done, dropped })
    }

    /// The runs the files held when opened (complete in both files).
    pub fn done(&self) -> &HashSet<RunKey> {
        &self.done
    }

    /// Rows removed when resuming because they were found in only one of the files or cut short
    /// (their runs were not done and run again).
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The CSV file.
    pub fn csv_path(&self) -> &Path {
        &self.csv_path
    }

    /// The JSON Lines file.
    pub fn jsonl_path(&self) -> &Path {
        &self.jsonl_path
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one row to both files (CSV first) and hands each line to the operating system.
    pub fn append(&mut self, row: &ResultRow) -> Result<(), SweepError> {
        self.csv.write_all(&row_csv_line(row)).map_err(io(&self.csv_path))?;
        let mut line = serde_json::to_string(row).expect("a result row serialises");
        line.push('\n');
        self.jsonl.write_all(line.as_bytes()).map_err(io(&self.jsonl_path))?;
        self.done.insert(RunKey::of_row(row));
        Ok(())
    }

    /// Rewrites both files with their rows in the order of `order` (rows not in it follow, in
    /// their current order), atomically.
    pub fn finish(self, order: &[RunKey]) -> Result<(), SweepError> {
        let header = csv_header();
        let rank: HashMap<&RunKey, usize> = order.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let sort_key = |k: &RunKey, i: usize| rank.get(k).map_or((1, i), |&r| (0, r));
        // A row whose readable columns name a planned run but whose fingerprint differs was made
        // with other options: the planned run superseded it.
        let readable = |k: &RunKey| RunKey { run_id: String::new(), ..k.clone() };
        let planned: HashSet<RunKey> = order.iter().map(readable).collect();
        let superseded = |k: &RunKey| !rank.contains_key(k) && planned.contains(&readable(k));
        self.csv.sync_all().map_err(io(&self.csv_path))?;
        self.jsonl.sync_all().map_err(io(&self.jsonl_path))?;

        let mut csv_rows = read_csv(&self.csv_path, &header)?.map(|c| c.rows).unwrap_or_default();
        let mut idx: Vec<usize> = (0..csv_rows.len()).filter(|&i| !superseded(&csv_rows[i].0)).collect();
        idx.sort_by_key(|&i| sort_key(&csv_rows[i].0, i));
        let mut bytes = csv_line(&csv::StringRecord::from(header));
        for i in idx {
            bytes.extend(csv_line(&std::mem::take(&mut csv_rows[i].1)));
        }
        write_atomic(&self.csv_path, &bytes)?;

        let json_rows = read_jsonl(&self.jsonl_path)?.map(|j| j.rows).unwrap_or_default();
        let mut idx: Vec<usize> = (0..json_rows.len()).filter(|&i| !superseded(&json_rows[i].0)).collect();
        idx.sort_by_key(|&i| sort_key(&json_rows[i].0, i));
        let mut bytes = Vec::new();
        for i in idx {
            bytes.extend_from_slice(json_rows[i].1.as_bytes());
            bytes.push(b'\n');
        }
        write_atomic(&self.jsonl_path, &bytes)
    }
}

/// Merges the result files of a sweep's shards (directories written by
/// [`Sweep::shard`](super::Sweep::shard) runs) into `out`: exactly the files the unsharded sweep
/// would have written, every planned run once, in plan order. Rows of the shards that the plan
/// does not hold are left out; a planned run missing from every shard, or present in two with
/// different results, is an error naming it. `out`'s files are replaced only with `force`.
/// Returns the number of runs merged.
pub fn merge_results(order: &[RunKey], shards: &[PathBuf], out: &Path, force: bool) -> Result<usize, SweepError> {
    let header = csv_header();
    let planned: HashMap<&RunKey, usize> = order.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut csv_rows: Vec<Option<csv::StringRecord>> = vec![None; order.len()];
    let mut json_rows: Vec<Option<String>> = vec![None; order.len()];
    let timing = ["elapsed_s", "cpu_s", "runtime_s", "requests_per_s"];
    let timing_cols: Vec<usize> =
        header.iter().enumerate().filter(|(_, h)| timing.contains(&h.as_str())).map(|(i, _)| i).collect();
    let same = |a: &csv::StringRecord, b: &csv::StringRecord| {
        a.iter().zip(b.iter()).enumerate().all(|(i, (x, y))| x == y || timing_cols.contains(&i))
    };
    for dir in shards {
        let files = ResultFiles::existing(dir);
        if files.len() != 2 {
            return Err(SweepError::Shard(format!(
                "{}: not a shard's result directory (results.csv and results.jsonl expected)",
                dir.display()
            )));
        }
        let csv_path = dir.join(ResultFiles::CSV);
        let rows = read_csv(&csv_path, &header)?.map(|c| c.rows).unwrap_or_default();
        for (key, rec) in rows {
            let Some(&i) = planned.get(&key) else { continue };
            match &csv_rows[i] {
                Some(prev) if !same(prev, &rec) => {
                    return Err(SweepError::Shard(format!(
                        "{key}: two shards hold different results for this run ({} among them)",
                        csv_path.display()
                    )));
                }
                _ => csv_rows[i] = Some(rec),
            }
        }
        let rows = read_jsonl(&dir.join(ResultFiles::JSONL))?.map(|j| j.rows).unwrap_or_default();
        for (key, line) in rows {
            if let Some(&i) = planned.get(&key) {
                json_rows[i].get_or_insert(line);
            }
        }
    }
    let missing: Vec<String> = order
        .iter()
        .zip(csv_rows.iter().zip(&json_rows))
        .filter(|(_, (c, j))| c.is_none() || j.is_none())
        .map(|(k, _)| k.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(SweepError::Shard(format!(
            "{} planned run(s) are in no shard's results (an unfinished shard?), e.g. {}",
            missing.len(),
            missing[0]
        )));
    }
    std::fs::create_dir_all(out).map_err(io(out))?;
    let _lock = lock_dir(out)?;
    let (csv_path, jsonl_path) = (out.join(ResultFiles::CSV), out.join(ResultFiles::JSONL));
    for p in [&csv_path, &jsonl_path] {
        check_destination(p, force).map_err(|m| io(p)(std::io::Error::other(m)))?;
    }
    let mut bytes = csv_line(&csv::StringRecord::from(header));
    for r in csv_rows.into_iter().flatten() {
        bytes.extend(csv_line(&r));
    }
    write_atomic(&csv_path, &bytes)?;
    let mut bytes = Vec::new();
    for l in json_rows.into_iter().flatten() {
        bytes.extend_from_slice(l.as_bytes());
        bytes.push(b'\n');
    }
    write_atomic(&jsonl_path, &bytes)?;
    Ok(order.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_every_result_column() {
        let h = csv_header();
        assert_eq!(
            &h[..12],
            [
                "trace",
                "policy",
                "policy_name",
                "buffer_pages",
                "buffer_share",
                "footprint_pages",
                "device",
                "logical_pages",
                "remap_extent_pages",
                "write_miss",
                "warmup_requests",
                "interval"
            ]
        );
        assert!(h.iter().any(|c| c == "page_writes") && h.iter().any(|c| c == "requests_per_s"));
        assert_eq!(&h[h.len() - 4..], ["write_bound", "writes_over_bound", "time_bound_us", "time_over_bound"]);
    }
}
