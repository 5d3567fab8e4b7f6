//! Spatial sampling of traces by flash block: the sampler behind SHARDS
//! ([`crate::curve::LruCurveBuilder::shards`]) and miniature simulation ([`crate::curve::minisim`]).
//!
//! A request is kept when the hash of its *block* — `page / block_pages`, where `block_pages` is
//! the extent of the compact address space, a multiple of every flash block, FAB/BPLRU/REF block
//! and CFDC cluster in use (`docs/address-space.md`) — is at most a threshold `T`. The sampling
//! rate is `R = (T + 1) / 2^64`. Every request to a kept block is kept, so a sampled trace holds
//! whole blocks: block-level policies, CFDC's clusters and the FTLs see the same blocks, with
//! the same pages in the same order, as in the full trace (Waldspurger et al., *Efficient MRC
//! construction with SHARDS*, FAST 2015, hash single objects; sampling blocks instead is our
//! choice for flash, documented in `docs/curves.md`).
//!
//! The sampler itself ([`BlockSampler`], MurmurHash3's finaliser of the block number and a
//! salt) lives in `flashbuf_trace::sample`, so that a reader can apply it while decoding; it is
//! re-exported here.

pub use flashbuf_trace::sample::{BlockSampler, DEFAULT_SALT, block_hash};
use flashbuf_trace::{Remapper, Request, TraceError, TraceSource};

/// A trace of the requests of the sampled blocks only, renumbered into a compact space of
/// extents of the sampler's block size (so that a device sized to it is the full one scaled by
/// the sampling rate).
pub struct Sampled<S> {
    inner: S,
    sampler: BlockSampler,
    remap: Remapper,
    buf: Vec<Request>,
    /// Requests read from `inner`.
    pub seen: u64,
}

impl<S: TraceSource> Sampled<S> {
    /// Samples `inner` with `sampler`.
    pub fn new(inner: S, sampler: BlockSampler) -> Self {
        let remap = Remapper::new(sampler.block_pages());
        Sampled { inner, sampler, remap, buf: Vec::new(), seen: 0 }
    }

    /// Pages of the compact space so far (every sampled page number is below it).
    pub fn pages(&self) -> u64 {
        self.remap.pages()
    }
}

impl<S: TraceSource> TraceSource for Sampled<S> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.is_empty() {
            if self.inner.next_batch(&mut self.buf, max)? == 0 {
                return Ok(0);
            }
            self.seen += self.buf.len() as u64;
            for r in &self.buf {
                if self.sampler.keeps(r.page) {
                    out.push(Request { page: self.remap.map(r.page), ..*r });
                }
            }
        }
        Ok(out.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_trace::{VecSource, collect};

    #[test]
    fn sampled_trace_is_compact_and_keeps_offsets() {
        let reqs: Vec<Request> = (0..20_000u64).map(|i| Request::read((i * 7919) % 50_000)).collect();
        let sampler = BlockSampler::with_rate(0.2, 16, 3).unwrap();
        let want: Vec<u64> = reqs.iter().filter(|r| sampler.keeps(r.page)).map(|r| r.page).collect();
        let mut src = Sampled::new(VecSource::new(reqs), sampler);
        let got = collect(&mut src).unwrap();
        assert_eq!(got.len(), want.len());
        assert_eq!(src.seen, 20_000);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.page % 16, w % 16);
            assert!(g.page < src.pages());
        }
        assert!(src.pages() <= 50_000 / 4, "{}", src.pages());
    }
}
