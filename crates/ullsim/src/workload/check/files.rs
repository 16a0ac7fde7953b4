//! Checks of a flow's files: buffered I/O, `nrfiles`, `filesize`, `fsync` and `fdatasync`, `aios`.

use crate::config::scenario::FlowSpec;

/// `direct = 0`, `nrfiles` and `filesize`: files need a blocking engine for buffered I/O (a buffered
/// libaio or io_uring call blocks or goes to worker threads the model does not have) and must fit the
/// flow's region.
pub(super) fn check_files(spec: &FlowSpec, capacity: u64) -> Result<(), (String, String)> {
    let err = |key: &str, what: String| Err((key.to_string(), what));
    let engine = spec.ioengine.unwrap_or_default();
    if !spec.is_direct() {
        if !engine.is_blocking() {
            return err(
                "direct",
                "buffered I/O (direct = 0) needs ioengine = \"psync\" or \"pvsync2\": a buffered libaio or \
                 io_uring call blocks in the kernel (or goes to worker threads the model does not have)"
                    .into(),
            );
        }
        if spec.hipri == Some(true) {
            return err("hipri", "polled I/O needs direct I/O (direct = 1); Linux ignores it on buffered I/O".into());
        }
        if spec.trace.is_some() {
            return err("direct", "buffered I/O applies to synthetic and app flows, not to traces".into());
        }
    }
    for (key, set) in [("fsync", spec.fsync.is_some()), ("fdatasync", spec.fdatasync.is_some())] {
        if set && !engine.is_blocking() {
            return err(
                key,
                "needs ioengine = \"psync\" or \"pvsync2\": the model's fsync is the blocking system call \
                 (io_uring's IORING_OP_FSYNC and libaio's aio_fsync are not modeled; flush_every sends an NVMe \
                 Flush from any engine)"
                    .into(),
            );
        }
    }
    if !spec.uses_files() {
        if spec.aios == Some(true) {
            return err(
                "aios",
                "AIOS (O_AIOS) works through the file system: it needs direct = 0, fsync or fdatasync".into(),
            );
        }
        for (key, set) in [("nrfiles", spec.nrfiles.is_some()), ("filesize", spec.filesize.is_some())] {
            if set {
                return err(key, "applies only to a flow that uses files: direct = 0, fsync or fdatasync".into());
            }
        }
        return Ok(());
    }
    let files = u64::from(spec.nrfiles.unwrap_or(1));
    if files == 0 || files > u64::from(super::MAX_NRFILES) {
        return err("nrfiles", format!("expected 1 to {} files, found {files}", super::MAX_NRFILES));
    }
    let (_, region_len) = spec.region(capacity);
    if let Some(size) = spec.filesize {
        if size.0 < 4096 || size.0.saturating_mul(files) > region_len {
            return err(
                "filesize",
                format!(
                    "expected at least 4 KiB, with nrfiles x filesize within the flow's region of {region_len} bytes \
                     (size and offset set it), found {} x {files}",
                    size.0
                ),
            );
        }
    } else if region_len / files < 4096 {
        return err(
            "nrfiles",
            format!("{files} files leave less than 4 KiB each of the flow's {region_len}-byte region"),
        );
    }
    Ok(())
}
