//! What no input or option may do to what a user has: replace special files, follow symbolic
//! links, leave temporary files, panic on a closed pipe or a full disk.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn cache_dir() -> PathBuf {
    std::env::temp_dir().join(format!("flashbuf-test-cache-{}", std::process::id()))
}

fn flashbuf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .env("FLASHBUF_CACHE_DIR", cache_dir())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run flashbuf")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

const RUN: [&str; 8] = ["run", "-q", "-t", "gen:uniform,requests=2000,pages=100", "-p", "lru", "-b", "10"];

#[test]
fn force_never_replaces_a_device_a_fifo_or_a_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    // A device node (the machine's /dev/null) is refused, --force or not, and stays a device.
    for force in [&[][..], &["--force"][..]] {
        let o = flashbuf(&[&RUN[..], &["--device", "ideal", "--output", "csv", "-o", "/dev/null"], force].concat());
        assert!(!o.status.success() && stderr(&o).contains("/dev/null: is a device"), "{}", stderr(&o));
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    // A FIFO.
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = flashbuf(&[&RUN[..], &["--device", "ideal", "-o", fifo.to_str().unwrap(), "--force"]].concat());
    assert!(!o.status.success() && stderr(&o).contains("is a FIFO"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // A symbolic link to a file of the user's: refused, the file untouched.
    let precious = dir.path().join("precious.txt");
    std::fs::write(&precious, "mine").unwrap();
    let link = dir.path().join("out.csv");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    for cmd in [
        [&RUN[..], &["--device", "ideal", "-o", link.to_str().unwrap(), "--force"]].concat(),
        vec!["gen", "zipf", "--requests", "10", "-o", link.to_str().unwrap(), "--force"],
        vec!["convert", "gen:zipf,requests=10", link.to_str().unwrap(), "--force"],
    ] {
        let o = flashbuf(&cmd);
        assert!(!o.status.success() && stderr(&o).contains("symbolic link"), "{cmd:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "mine");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    // Sweep result files that are links are refused too.
    let res = dir.path().join("res");
    std::fs::create_dir(&res).unwrap();
    std::os::unix::fs::symlink(&precious, res.join("results.csv")).unwrap();
    let conf = dir.path().join("s.toml");
    std::fs::write(
        &conf,
        "traces = ['gen:uniform,requests=100,pages=10']\npolicies = ['lru']\nbuffers = [2]\ndevices = ['ideal']\n",
    )
    .unwrap();
    let o = flashbuf(&["sweep", "-q", conf.to_str().unwrap(), "--out", res.to_str().unwrap(), "--force"]);
    assert!(!o.status.success() && stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "mine");
}

#[test]
fn outputs_follow_the_umask_and_failures_leave_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.csv");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 027 && exec {} run -q -t gen:uniform,requests=100,pages=10 -p lru -b 2 --device ideal -o {}",
            env!("CARGO_BIN_EXE_flashbuf"),
            out.display()
        ))
        .env("FLASHBUF_CACHE_DIR", cache_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o640);
    // A run that fails after its output was prepared: no file, no temporary left.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "# flashbuf-trace v1\nR 1\nQ 2\n").unwrap();
    let out2 = dir.path().join("r2.csv");
    let o = flashbuf(&[
        "run",
        "-q",
        "-t",
        bad.to_str().unwrap(),
        "-p",
        "lru",
        "-b",
        "2",
        "--device",
        "ideal",
        "-o",
        out2.to_str().unwrap(),
    ]);
    assert!(!o.status.success() && stderr(&o).contains("bad.txt:3"), "{}", stderr(&o));
    assert_eq!(names(dir.path()), ["bad.txt", "r.csv"]);
}

#[test]
fn a_closed_pipe_ends_quietly_and_a_full_disk_is_one_line() {
    for args in [vec!["list"], RUN.to_vec(), vec!["stats", "-q", "gen:uniform,requests=100,pages=10"]] {
        // `| head -c 1`: the reader goes away after one byte.
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
            .env("FLASHBUF_CACHE_DIR", cache_dir())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut one = [0u8; 1];
        std::io::Read::read_exact(&mut stdout, &mut one).unwrap();
        drop(stdout);
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{args:?}: {:?} {}", o.status, stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
        // > /dev/full: an error of one line naming standard output, exit status 1.
        let o = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
            .env("FLASHBUF_CACHE_DIR", cache_dir())
            .args(&args)
            .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains("standard output") && e.trim().lines().count() == 1 && !e.contains("panicked"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn sizes_beyond_the_machine_are_refused_before_any_work_saying_how_much_they_need() {
    for extra in [
        &["-b", "4294967296"][..],
        &["-b", "4294967294"][..],
        &["-b", "10", "--capacity", "2147483648", "--device", "page"][..],
        &["-b", "10", "--capacity", "18446744073709551615", "--device", "page"][..],
        &["-p", "lru-2:history=64", "-b", "100000000"][..],
        &["-b", "18446744073709551615"][..],
    ] {
        let o = flashbuf(&[&["run", "-q", "-t", "gen:uniform,requests=100,pages=10", "-p", "lru"][..], extra].concat());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {e}");
        assert!(!e.contains("panicked") && e.trim().lines().count() == 1, "{extra:?}: {e}");
        assert!(
            e.contains("GiB of memory") || e.contains("more than flashbuf supports") || e.contains("2^32"),
            "{extra:?}: {e}"
        );
    }
}

#[test]
fn gather_never_fills_the_disk_nor_prints_infinities() {
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("p.img");
    let o = flashbuf(&["gather", "probe", "--file", probe.to_str().unwrap(), "--size", "100TiB"]);
    assert!(!o.status.success() && stderr(&o).contains("choose a smaller --size"), "{}", stderr(&o));
    assert!(!probe.exists(), "nothing created");
    // A measured cost curve of zeros would predict infinitely many writes per second.
    let costs = dir.path().join("c.csv");
    std::fs::write(&costs, "distance,mean_us\n0,0\n1,0\nrandom,0\n").unwrap();
    let o = flashbuf(&["gather", "model", "--cost", costs.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && stderr(&o).contains("not a positive number"), "{}", stderr(&o));
    assert!(!out.contains("inf") && !out.contains("NaN"), "{out}");
}
