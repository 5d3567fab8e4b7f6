//! Summary statistics of a trace, computed in one streaming pass in memory bounded by its
//! footprint (a [`FootprintIndex`]), never by its length.

use std::fmt;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::footprint::FootprintIndex;
use crate::formats::VOLUME_SHIFT;
use crate::{TraceError, TraceSource};

/// Extent sizes whose counts a [`TraceSummary`] keeps: `2^0 ..= 2^EXTENT_LEVELS` pages.
pub const EXTENT_LEVELS: u32 = 20;

/// What a trace contains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStats {
    /// Number of requests.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Distinct page numbers.
    pub distinct_pages: u64,
    /// Distinct pages that were written at least once.
    pub distinct_written_pages: u64,
    /// Smallest page number (`None` for an empty trace).
    pub min_page: Option<u64>,
    /// Largest page number (`None` for an empty trace).
    pub max_page: Option<u64>,
    /// `distinct_pages × page size`: the data the trace touches.
    pub footprint_bytes: u64,
}

impl TraceStats {
    /// Reads as a fraction of the requests (0 for an empty trace).
    pub fn read_fraction(&self) -> f64 {
        if self.requests == 0 { 0.0 } else { self.reads as f64 / self.requests as f64 }
    }

    /// Largest page number + 1 (0 for an empty trace): the page range.
    pub fn page_range(&self) -> u64 {
        self.max_page.map_or(0, |m| m.saturating_add(1))
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests ({} reads, {} writes), {} distinct pages ({} written), pages {}..={}, footprint {} bytes",
            self.requests,
            self.reads,
            self.writes,
            self.distinct_pages,
            self.distinct_written_pages,
            self.min_page.map_or("-".to_string(), |p| p.to_string()),
            self.max_page.map_or("-".to_string(), |p| p.to_string()),
            self.footprint_bytes
        )
    }
}

/// One volume of a multi-volume trace (page numbers `volume << 40 | page`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeStats {
    /// The volume (disk, ASU, volume id) number.
    pub volume: u64,
    /// Requests (pages accessed) on it.
    pub requests: u64,
    /// Of which writes.
    pub writes: u64,
    /// Distinct pages.
    pub distinct_pages: u64,
    /// Distinct pages written.
    pub distinct_written_pages: u64,
    /// Smallest page number inside the volume.
    pub min_page: u64,
    /// Largest page number inside the volume.
    pub max_page: u64,
}

/// Everything one pass over a trace learns: the statistics, the volumes, and the number of
/// touched extents of every power-of-two size (what sizing a remapped device needs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// The totals.
    pub stats: TraceStats,
    /// The volumes, by number, when the trace combines several (`volume << 40 | page`); empty
    /// otherwise.
    pub volumes: Vec<VolumeStats>,
    /// `extents[k]`: aligned extents of `2^k` pages holding a touched page, `k = 0 ..=`
    /// [`EXTENT_LEVELS`].
    pub extents: Vec<u64>,
    /// Extent counts for other sizes, computed on request: `(extent pages, extents)`.
    pub other_extents: Vec<(u64, u64)>,
    /// Memory the pass used for its footprint index, in bytes.
    pub index_bytes: u64,
}

impl TraceSummary {
    /// Touched extents of `extent_pages` pages, when this summary knows the count.
    pub fn extents_of(&self, extent_pages: u64) -> Option<u64> {
        if extent_pages.is_power_of_two() {
            return self.extents.get(extent_pages.trailing_zeros() as usize).copied();
        }
        self.other_extents.iter().find(|&&(e, _)| e == extent_pages).map(|&(_, n)| n)
    }
}

/// Reads `source` to the end and summarises it; `page_size_bytes` sizes the footprint. Memory
/// grows with the number of distinct pages, not with the trace.
pub fn stats(source: &mut dyn TraceSource, page_size_bytes: u64) -> Result<TraceStats, TraceError> {
    Ok(summarize(source, page_size_bytes, false, &[])?.stats)
}

#[derive(Default)]
struct VolumeCounts {
    requests: u64,
    writes: u64,
    min: u64,
    max: u64,
}

/// Reads `source` to the end and summarises it (see [`TraceSummary`]). `volumes`: the page
/// numbers combine volumes as `volume << 40 | page` (list them). `extra_extents`: extent sizes
/// other than powers of two whose counts to keep.
pub fn summarize(
    source: &mut dyn TraceSource,
    page_size_bytes: u64,
    volumes: bool,
    extra_extents: &[u64],
) -> Result<TraceSummary, TraceError> {
    let mut s = TraceStats::default();
    let mut index = FootprintIndex::new();
    let mut per_volume: FxHashMap<u64, usize> = FxHashMap::default();
    let mut counts: Vec<(u64, VolumeCounts)> = Vec::new();
    let mut last_volume: Option<(u64, usize)> = None;
    let mut min = u64::MAX;
    let mut max = 0u64;
    let mut batch = Vec::with_capacity(1 << 16);
    while source.next_batch(&mut batch, 1 << 16)? > 0 {
        for r in &batch {
            s.requests += 1;
            let write = r.kind.is_write();
            s.writes += u64::from(write);
            index.touch(r.page, write);
            min = min.min(r.page);
            max = max.max(r.page);
        }
        if volumes {
            for r in &batch {
                let v = r.page >> VOLUME_SHIFT;
                let inner = r.page & ((1 << VOLUME_SHIFT) - 1);
                let i = match last_volume {
                    Some((lv, i)) if lv == v => i,
                    _ => {
                        let next = counts.len();
                        let i = *per_volume.entry(v).or_insert(next);
                        if i == next {
                            counts.push((v, VolumeCounts { min: u64::MAX, ..Default::default() }));
                        }
                        last_volume = Some((v, i));
                        i
                    }
                };
                let c = &mut counts[i].1;
                c.requests += 1;
                c.writes += u64::from(r.kind.is_write());
                c.min = c.min.min(inner);
                c.max = c.max.max(inner);
            }
        }
    }
    s.reads = s.requests - s.writes;
    s.distinct_pages = index.distinct_pages();
    s.distinct_written_pages = index.distinct_written_pages();
    if s.requests > 0 {
        s.min_page = Some(min);
        s.max_page = Some(max);
    }
    s.footprint_bytes = s.distinct_pages.saturating_mul(page_size_bytes);
    let footprints = if volumes { index.volume_footprints() } else { FxHashMap::default() };
    let mut vols: Vec<VolumeStats> = counts
        .into_iter()
        .map(|(volume, c)| {
            let (distinct_pages, distinct_written_pages) = footprints.get(&volume).copied().unwrap_or_default();
            VolumeStats {
                volume,
                requests: c.requests,
                writes: c.writes,
                distinct_pages,
                distinct_written_pages,
                min_page: c.min,
                max_page: c.max,
            }
        })
        .collect();
    vols.sort_by_key(|v| v.volume);
    let extents = (0..=EXTENT_LEVELS).map(|k| index.extents(1 << k)).collect();
    let mut other: Vec<u64> = extra_extents.iter().copied().filter(|e| *e > 0 && !e.is_power_of_two()).collect();
    other.sort_unstable();
    other.dedup();
    let other_extents = other.into_iter().map(|e| (e, index.extents(e))).collect();
    Ok(TraceSummary { stats: s, volumes: vols, extents, other_extents, index_bytes: index.memory_bytes() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Request, VecSource};

    #[test]
    fn counts_a_small_trace() {
        let reqs = vec![Request::read(5), Request::write(3), Request::write(5), Request::read(9), Request::read(5)];
        let s = stats(&mut VecSource::new(reqs), 4096).unwrap();
        assert_eq!(
            s,
            TraceStats {
                requests: 5,
                reads: 3,
                writes: 2,
                distinct_pages: 3,
                distinct_written_pages: 2,
                min_page: Some(3),
                max_page: Some(9),
                footprint_bytes: 3 * 4096,
            }
        );
        assert_eq!(s.read_fraction(), 0.6);
        assert_eq!(s.page_range(), 10);
    }

    #[test]
    fn empty_trace() {
        let s = stats(&mut VecSource::new(Vec::new()), 4096).unwrap();
        assert_eq!(s, TraceStats::default());
        assert_eq!(s.read_fraction(), 0.0);
        assert_eq!(s.page_range(), 0);
    }

    #[test]
    fn volumes_and_extents() {
        let v = |vol: u64, p: u64| (vol << VOLUME_SHIFT) | p;
        let reqs = vec![
            Request::read(v(3, 100)),
            Request::write(v(3, 101)),
            Request::read(v(3, 100)),
            Request::write(v(7, 5)),
            Request::read(v(7, 70_000)),
        ];
        let s = summarize(&mut VecSource::new(reqs), 4096, true, &[48]).unwrap();
        assert_eq!(s.stats.distinct_pages, 4);
        assert_eq!(
            s.volumes,
            vec![
                VolumeStats {
                    volume: 3,
                    requests: 3,
                    writes: 1,
                    distinct_pages: 2,
                    distinct_written_pages: 1,
                    min_page: 100,
                    max_page: 101
                },
                VolumeStats {
                    volume: 7,
                    requests: 2,
                    writes: 1,
                    distinct_pages: 2,
                    distinct_written_pages: 1,
                    min_page: 5,
                    max_page: 70_000
                },
            ]
        );
        assert_eq!(s.extents_of(1), Some(4));
        assert_eq!(s.extents_of(64), Some(3));
        assert_eq!(s.extents_of(1 << 20), Some(2));
        assert_eq!(s.extents_of(48), Some(3));
        assert_eq!(s.extents_of(96), None);
    }
}
