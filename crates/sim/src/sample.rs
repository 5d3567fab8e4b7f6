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
//! The hash is MurmurHash3's 64-bit finaliser of the block number mixed with a salt: fast, and
//! a good enough avalanche that the kept blocks form a uniform random subset. Same salt, same
//! sample, on every machine.

use flashbuf_trace::{Remapper, Request, TraceError, TraceSource};

/// Default salt of the block hash.
pub const DEFAULT_SALT: u64 = 0x5eed_f1a5_b0f0_0001;

/// MurmurHash3's `fmix64` of `block` mixed with `salt`.
#[inline]
pub fn block_hash(block: u64, salt: u64) -> u64 {
    let mut k = block ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// Keeps the requests whose block hashes at or below a threshold (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSampler {
    block_pages: u64,
    shift: Option<u32>,
    salt: u64,
    /// Keep a block when its hash is at most this.
    limit: u64,
}

impl BlockSampler {
    /// A sampler of rate `rate` (in (0, 1]) over blocks of `block_pages` pages.
    pub fn with_rate(rate: f64, block_pages: u64, salt: u64) -> Result<Self, String> {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(format!("sampling rate {rate}: must be in (0, 1] (e.g. 0.01 or 1%)"));
        }
        let limit = if rate >= 1.0 { u64::MAX } else { ((rate * 2f64.powi(64)) as u64).saturating_sub(1) };
        Ok(Self::with_limit(limit, block_pages, salt))
    }

    /// A sampler keeping every block whose hash is at most `limit`.
    pub fn with_limit(limit: u64, block_pages: u64, salt: u64) -> Self {
        let block_pages = block_pages.max(1);
        BlockSampler {
            block_pages,
            shift: block_pages.is_power_of_two().then(|| block_pages.trailing_zeros()),
            salt,
            limit,
        }
    }

    /// The sampling rate `(T + 1) / 2^64`.
    pub fn rate(&self) -> f64 {
        (self.limit as f64 + 1.0) / 2f64.powi(64)
    }

    /// Pages per sampling unit.
    pub fn block_pages(&self) -> u64 {
        self.block_pages
    }

    /// The salt.
    pub fn salt(&self) -> u64 {
        self.salt
    }

    /// The threshold: blocks hashing at most this are kept.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The block of `page`.
    #[inline]
    pub fn block(&self, page: u64) -> u64 {
        match self.shift {
            Some(s) => page >> s,
            None => page / self.block_pages,
        }
    }

    /// The hash of `block`.
    #[inline]
    pub fn hash(&self, block: u64) -> u64 {
        block_hash(block, self.salt)
    }

    /// `true` when `page`'s block is in the sample.
    #[inline]
    pub fn keeps(&self, page: u64) -> bool {
        self.hash(self.block(page)) <= self.limit
    }

    /// Lowers the threshold below `hash`: that block and every block hashing above it leave the
    /// sample (fixed-size SHARDS).
    pub fn exclude_from(&mut self, hash: u64) {
        self.limit = self.limit.min(hash.saturating_sub(1));
    }
}

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
    fn rate_and_threshold_agree() {
        let s = BlockSampler::with_rate(0.01, 64, 1).unwrap();
        assert!((s.rate() - 0.01).abs() < 1e-12);
        assert_eq!(BlockSampler::with_rate(1.0, 64, 1).unwrap().limit(), u64::MAX);
        assert!(BlockSampler::with_rate(0.0, 64, 1).is_err());
        assert!(BlockSampler::with_rate(1.5, 64, 1).is_err());
        assert!(BlockSampler::with_rate(f64::NAN, 64, 1).is_err());
    }

    #[test]
    fn keeps_whole_blocks_at_about_the_rate() {
        let s = BlockSampler::with_rate(0.1, 64, DEFAULT_SALT).unwrap();
        let blocks = 100_000u64;
        let kept = (0..blocks).filter(|&b| s.keeps(b * 64)).count() as f64;
        // Binomial(100000, 0.1): standard deviation ~95.
        assert!((kept - 10_000.0).abs() < 500.0, "{kept}");
        for b in 0..1000u64 {
            let k = s.keeps(b * 64);
            assert!((0..64).all(|o| s.keeps(b * 64 + o) == k));
        }
    }

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
