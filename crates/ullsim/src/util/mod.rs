//! Small shared helpers with no model knowledge.
pub mod lru;
pub mod perm;
pub mod slab;
