//! placeholder replaced by generated bindings
