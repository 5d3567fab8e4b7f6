//! Tables, CSV/JSON rows and plots of simulation results (to come).
