//! Small shared helpers with no model knowledge.
pub mod chunks;
pub mod keyword;
pub mod perm;
pub mod quote;
pub mod set_assoc;
pub mod slab;
pub mod sparse;
