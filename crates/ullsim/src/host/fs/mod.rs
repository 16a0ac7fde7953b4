//! The file-system layer above the block layer (issue 17, in progress): the page cache so far. The file
//! system, its journal and the system calls that use them come next; until then the host's direct I/O path
//! pays a flat `host.cpu.fs_submit_ns`.

pub mod page_cache;
