//! Statistics: pure functions (issue: statistics and reports).
