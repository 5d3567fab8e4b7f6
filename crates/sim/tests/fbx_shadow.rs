//! FBX's shadows against the simulator: a shadow that samples every block (rate 1) is a full
//! simulation of its expert, so its device time must be the simulator's, exactly, on every
//! device class (no final flush: a shadow never flushes). This checks the shadow's buffer
//! (fetch on every miss, write-back of dirty victims, whole-block padding, bypass) and its
//! device against `flashbuf run`'s. The trace covers whole flash blocks (2,048 pages): the
//! simulator pads only pages inside its device, a shadow whole blocks of its compact space.

use flashbuf_flash::{DeviceConfig, DeviceKind};
use flashbuf_policy::fbp::FbpConfig;
use flashbuf_policy::shadow::{Compactor, ExpertKind, Shadow};
use flashbuf_policy::{Access, PolicyParams};
use flashbuf_sim::{RunSpec, device_profile, execute};
use flashbuf_trace::{Request, TraceSpec};

const TRACE: &str = "gen:zipf,requests=20000,pages=2048,write-ratio=0.5,seed=7";

fn requests() -> Vec<Request> {
    let spec = TraceSpec::parse(TRACE).unwrap();
    let mut src = spec.open(&Default::default()).unwrap().source;
    let (mut all, mut batch) = (Vec::new(), Vec::new());
    while src.next_batch(&mut batch, 4096).unwrap() > 0 {
        all.extend_from_slice(&batch);
    }
    all
}

#[test]
fn a_full_shadow_costs_what_the_simulator_measures() {
    let reqs = requests();
    assert_eq!(reqs.len(), 20_000);
    for kind in [DeviceKind::Ideal, DeviceKind::Page, DeviceKind::Bast, DeviceKind::Fast] {
        let device = DeviceConfig { kind, ..Default::default() };
        let profile = device_profile(&device);
        let mut fbp = FbpConfig::default();
        fbp.fill_device(&profile);
        for expert in ExpertKind::ALL {
            let mut s = Shadow::new(expert, 256, &profile, device.log_blocks, &fbp, Some(32));
            let mut c = Compactor::new(32, u64::from(profile.pages_per_block));
            for (t, r) in reqs.iter().enumerate() {
                s.access(&Access::new(c.compact(r.page), r.kind, t as u64));
            }
            s.check_invariants().unwrap();
            assert!(!s.failed());
            let policy = expert.name().parse().unwrap();
            let mut spec = RunSpec::new(TraceSpec::parse(TRACE).unwrap(), 2048, policy, 256, device.clone());
            spec.final_flush = false;
            let row = execute(&spec, &mut |_| {}).unwrap();
            let sim_ns = row.device_time_us * 1e3;
            // The shadow's device has the run's 32 blocks: the same device, so the same time.
            assert_eq!(s.misses, row.misses, "{} on {kind}", expert.name());
            assert!(
                (s.cost_ns() - sim_ns).abs() <= 1e-6 * sim_ns,
                "{} on {kind}: shadow {} ns, simulator {sim_ns} ns",
                expert.name(),
                s.cost_ns()
            );
        }
    }
}
