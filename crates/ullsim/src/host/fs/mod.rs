//! The file-system layer above the block layer (issue 17, in progress). So far three tested models of
//! state and plans: the page cache, the journal's decisions (ext4's JBD2 and FastResponse's fjournaling) and
//! the writeback policy. The system calls that use them come next; until then the host's direct I/O path
//! pays a flat `host.cpu.fs_submit_ns`.

pub mod journal;
pub mod page_cache;
pub mod writeback;
