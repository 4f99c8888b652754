//! The ResourceManager: registered TaskManagers, their slots and heartbeats.

pub mod peer_validation;
pub mod slot_table;
