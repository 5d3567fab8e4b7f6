//! The short, bounded fuzz run of CI: every target, its seed corpus and then mutations of it, a
//! few seconds each; any panic fails with the input that caused it. Longer runs:
//! `cargo run --release -p flashbuf-fuzz -- all --seconds 600`, or coverage-guided with
//! cargo-fuzz (`fuzz/`).

#[test]
fn every_target_survives_its_corpus_and_mutations_of_it() {
    for t in flashbuf_fuzz::TARGETS {
        let r = flashbuf_fuzz::fuzz(t, 4.0, 20_000, 7, None);
        assert!(r.executions > 50, "{}: only {} executions", t.name, r.executions);
        assert!(
            r.crashes.is_empty(),
            "{}: {} input(s) panicked, e.g. {:?}",
            t.name,
            r.crashes.len(),
            String::from_utf8_lossy(&r.crashes[0])
        );
    }
}

#[test]
fn every_target_has_seeds_that_reach_past_the_first_check() {
    let seeds = flashbuf_fuzz::seeds();
    for t in flashbuf_fuzz::TARGETS {
        let n = seeds.iter().filter(|(target, _, bytes)| *target == t.name && !bytes.is_empty()).count();
        assert!(n >= 1, "{} has no seed", t.name);
    }
    // The engine seed is a database that opens.
    let db = &seeds.iter().find(|(t, _, _)| *t == "engine-file").unwrap().2;
    assert!(db.len() >= 4 * flashbuf_fuzz::ENGINE_PAGE_SIZE);
}
