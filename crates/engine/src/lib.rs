//! The storage engine: page file, buffer manager, B+-tree and the CFDC workload (to come).
