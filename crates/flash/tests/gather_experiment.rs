//! The experiment of §6 on the simulated BAST device (REF paper timings, 8 log blocks): uniform
//! random 4 KiB writes through the layer with a pool of 50% of the logical space must cost at
//! least 5 times less device time than the same writes made directly (the paper measured ×10
//! on its USB key at 50% overhead). The test prints the rows (`-- --nocapture`).

use flashbuf_flash::gather::experiment::{
    ExperimentConfig, ExperimentRow, Mode, cost_curve, default_devices, fill_speedups, simulate_direct, simulate_gather,
};
use flashbuf_flash::{DeviceConfig, DeviceKind};

fn small() -> ExperimentConfig {
    ExperimentConfig { logical_sectors: 16_384, measure_writes: 16_384, ..Default::default() }
}

fn bast() -> DeviceConfig {
    default_devices().into_iter().find(|d| d.kind == DeviceKind::Bast).unwrap()
}

#[test]
fn gathering_over_bast_with_a_half_pool_is_at_least_five_times_faster() {
    let cfg = small();
    let dev = bast();
    assert_eq!(dev.label(), "bast/ref/log8");
    let (curve, probe) = cost_curve(&cfg, &dev).unwrap();
    let mut rows =
        vec![simulate_direct(&cfg, &dev, &curve).unwrap(), simulate_gather(&cfg, &dev, 50.0, &curve).unwrap()];
    fill_speedups(&mut rows);
    eprintln!("{}", ExperimentRow::CSV_HEADER);
    for r in &rows {
        eprintln!("{}", r.csv());
    }
    for r in &probe {
        eprintln!("{}", r.csv());
    }
    let (direct, gather) = (&rows[0], &rows[1]);
    assert_eq!((direct.mode, gather.mode), (Mode::Direct, Mode::Gather));
    assert_eq!(gather.pool_sectors, 8192);
    let ratio = direct.time_per_write_ns / gather.time_per_write_ns;
    assert!(ratio >= 5.0, "gathering is only {ratio:.2}× faster than direct random writes");
    assert!((gather.speedup - ratio).abs() < 1e-9);
    // Direct random sector writes on BAST: nearly every one ends in a full merge.
    assert!(direct.merges_full as f64 > 0.9 * direct.writes as f64, "{direct:?}");
    // Through the layer, merges are rarer than writes by about the sectors per block written
    // in one sweep (32 sectors per 64-page block, a fraction ρ of them free).
    assert!((gather.merges_full + gather.merges_partial + gather.merges_switch) * 5 < gather.writes, "{gather:?}");
    assert!(gather.mean_distance > 1.0 && gather.mean_distance < gather.model_mean_distance);
    assert!(gather.model_writes_per_s > direct.model_writes_per_s);
}

#[test]
fn the_pool_size_sweep_improves_monotonically_on_bast() {
    let cfg = ExperimentConfig { logical_sectors: 8192, measure_writes: 8192, ..Default::default() };
    let dev = bast();
    let (curve, _) = cost_curve(&cfg, &dev).unwrap();
    let rows: Vec<_> =
        [5.0, 25.0, 100.0, 300.0].iter().map(|&pc| simulate_gather(&cfg, &dev, pc, &curve).unwrap()).collect();
    for w in rows.windows(2) {
        assert!(w[1].writes_per_s > w[0].writes_per_s, "{} → {}", w[0].pool_percent, w[1].pool_percent);
        assert!(w[1].mean_distance < w[0].mean_distance);
    }
}
