//! Helpers shared by the CLI's integration tests: run the `ullsim` binary and check how it ended.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Finished `ullsim` process with its output as text.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn describe(&self) -> String {
        format!("exit code {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}", self.code, self.stdout, self.stderr)
    }

    /// Asserts a clean success and returns self for chaining.
    pub fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "expected success, got {}", self.describe());
        assert!(!self.stderr.contains("panicked"), "a successful run panicked? {}", self.describe());
        self
    }

    /// Asserts a clean failure: exit code 1 (not a panic's 101 or clap's 2), nothing on stdout, one message on
    /// stderr that starts with "error: ", no panic, and every `needle` present in the message.
    pub fn fails_with(self, needles: &[&str]) -> Run {
        assert_eq!(self.code, Some(1), "expected exit code 1, got {}", self.describe());
        assert!(!self.stderr.contains("panicked"), "bad input made ullsim panic: {}", self.describe());
        assert!(self.stdout.is_empty(), "a failed command printed results on stdout: {}", self.describe());
        assert!(self.stderr.starts_with("error: "), "stderr should start with \"error: \": {}", self.describe());
        let error_lines = self.stderr.lines().filter(|l| l.starts_with("error")).count();
        assert_eq!(error_lines, 1, "expected a single error message: {}", self.describe());
        for needle in needles {
            assert!(self.stderr.contains(needle), "stderr should mention {needle:?}: {}", self.describe());
        }
        self
    }
}

impl Run {
    /// Asserts that the command line itself was rejected: clap's exit code 2 for a usage error, nothing on
    /// stdout, one message on stderr that starts with "error: ", no panic, and every `needle` in it.
    pub fn rejects_arguments_with(self, needles: &[&str]) -> Run {
        assert_eq!(self.code, Some(2), "expected exit code 2, got {}", self.describe());
        assert!(!self.stderr.contains("panicked") && self.stdout.is_empty(), "{}", self.describe());
        assert!(self.stderr.starts_with("error: "), "stderr should start with \"error: \": {}", self.describe());
        for needle in needles {
            assert!(self.stderr.contains(needle), "stderr should mention {needle:?}: {}", self.describe());
        }
        self
    }
}

pub fn ullsim<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let output: Output = Command::new(env!("CARGO_BIN_EXE_ullsim"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("cannot start the ullsim binary");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// The repository's example scenarios (scenarios/examples/).
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples")
}

/// The example scenario `name`, which must exist.
pub fn example(name: &str) -> PathBuf {
    let path = examples_dir().join(name);
    assert!(path.is_file(), "missing example scenario {}", path.display());
    path
}
