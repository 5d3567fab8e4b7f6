//! Progress bars on stderr: shown only on a terminal and without `--quiet`.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over `total` units (requests, runs, ...), hidden when stderr is not a
/// terminal or `quiet` is set. Appears only after the work has run for a second.
pub fn bar(total: u64, unit: &str, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{per_sec}}, eta {{eta}})"
    );
    pb.set_style(ProgressStyle::with_template(&template).expect("valid template").progress_chars("=> "));
    let shown = pb.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        if !shown.is_finished() {
            shown.set_draw_target(ProgressDrawTarget::stderr());
            shown.enable_steady_tick(Duration::from_millis(200));
        }
    });
    pb
}
