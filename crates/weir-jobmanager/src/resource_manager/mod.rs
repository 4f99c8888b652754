//! The ResourceManager: registered TaskManagers, their slots and heartbeats.

pub mod slot_table;
pub mod peer_validation;
