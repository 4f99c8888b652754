//! Test support shared by the JobMaster's test modules: a slot table of registered
//! TaskManagers and the deployments among a decision's actions.

use super::Action;
use crate::resource_manager::slot_table::{SlotTable, TaskManagerRegistration};
use weir_rpc::{Hardware, MemoryConfiguration, TaskDeploymentDescriptor};

/// `tms` TaskManagers `tm<i>` of `slots` slots each.
pub(super) fn cluster(tms: u32, slots: u32) -> SlotTable {
    let mut t = SlotTable::new();
    for i in 0..tms {
        t.register(
            TaskManagerRegistration {
                resource_id: format!("tm{i}"),
                rpc_address: format!("rpc{i}"),
                data_address: format!("data{i}"),
                num_slots: slots,
                memory: MemoryConfiguration::default(),
                hardware: Hardware::default(),
            },
            0,
        );
    }
    t
}

/// The deployment descriptors among `actions`.
pub(super) fn deployments(actions: &[Action]) -> Vec<TaskDeploymentDescriptor> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Deploy { tdd, .. } => Some((**tdd).clone()),
            _ => None,
        })
        .collect()
}
