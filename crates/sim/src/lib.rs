//! The trace-driven simulator.
