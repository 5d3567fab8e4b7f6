//! The model of §5 against simulation:
//!
//! * p(d), restored from the garbled print, against a Monte-Carlo placement of |P| pool sectors
//!   uniformly among the |F| − 1 sectors other than f (the model's own assumption);
//! * the forward-sweep model against the distances the layer actually produces under uniform
//!   random writes — and the paper's uniform model is shown to overestimate them, as §6 says.

use flashbuf_flash::gather::model::{CostCurve, distance_distribution, predict, sweep_density};
use flashbuf_flash::{Device, Gather, GatherConfig, IdealConfig, IdealDevice, PoolSize};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn p_of_d_matches_a_monte_carlo_placement() {
    for (l, pool, samples) in [(90u64, 30u64, 400_000u32), (40, 4, 300_000), (12, 60, 200_000)] {
        let f = l + pool;
        let p = distance_distribution(l, pool).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(f);
        let mut hist = vec![0u64; l as usize + 2];
        // Positions 1..f−1 after f (0 is f itself); a partial Fisher–Yates shuffle picks |P|.
        let mut slots: Vec<u64> = (1..f).collect();
        for _ in 0..samples {
            let mut nearest = u64::MAX;
            for i in 0..pool as usize {
                let j = rng.random_range(i..slots.len());
                slots.swap(i, j);
                nearest = nearest.min(slots[i]);
            }
            hist[nearest as usize] += 1;
        }
        let n = samples as f64;
        let mut mean_mc = 0.0;
        for d in 1..=l as usize {
            let emp = hist[d] as f64 / n;
            mean_mc += d as f64 * emp;
            let sd = (p[d] * (1.0 - p[d]) / n).sqrt();
            assert!(
                (emp - p[d]).abs() <= 5.0 * sd + 1e-9,
                "L={l} P={pool} d={d}: simulated {emp:.5}, model {:.5} (sd {sd:.5})",
                p[d]
            );
        }
        assert_eq!(hist[l as usize + 1], 0, "the distance never exceeds |L|");
        let mean = f as f64 / (pool + 1) as f64;
        assert!((mean_mc - mean).abs() < 0.01 * mean, "L={l} P={pool}: mean {mean_mc} vs {mean}");
    }
}

/// Mean distance and the share of sequential writes (d = 1) produced by the layer, after a
/// warm-up of four passes over the device.
fn layer_distances(l: u64, pc: f64, seed: u64) -> (f64, f64) {
    let cfg = GatherConfig::new(l, PoolSize::Percent(pc));
    let f = cfg.physical_sectors().unwrap();
    let dev = IdealDevice::new(IdealConfig { logical_pages: f, ..Default::default() }).unwrap();
    let mut g = Gather::new(dev, &cfg).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..4 * f {
        g.write(rng.random_range(0..l)).unwrap();
    }
    g.reset_gather_stats();
    for _ in 0..8 * f {
        g.write(rng.random_range(0..l)).unwrap();
    }
    let s = g.gather_stats();
    (s.mean_distance(), s.distance_hist[1] as f64 / s.writes as f64)
}

#[test]
fn the_forward_sweep_model_predicts_the_layer_and_the_uniform_model_does_not() {
    let l = 20_000;
    let flat = CostCurve::parametric(1, 1.0).unwrap();
    for pc in [5.0, 25.0, 50.0, 100.0, 300.0] {
        let (mean, seq_share) = layer_distances(l, pc, pc as u64);
        let pool = PoolSize::Percent(pc).sectors(l).unwrap();
        let pred = predict(l, pool, &flat).unwrap();
        let rho = sweep_density(l, pool).unwrap();
        assert!(
            (mean - pred.sweep_mean_distance).abs() < 0.02 * pred.sweep_mean_distance,
            "{pc}%: layer {mean:.4}, sweep model {:.4}",
            pred.sweep_mean_distance
        );
        assert!((seq_share - rho).abs() < 0.03 * rho, "{pc}%: P(d = 1) = {seq_share:.4}, ρ = {rho:.4}");
        // The paper's uniform model: the layer does better than it predicts (§6).
        assert!(pred.mean_distance > 1.25 * mean, "{pc}%: uniform model {:.4} vs layer {mean:.4}", pred.mean_distance);
    }
}
