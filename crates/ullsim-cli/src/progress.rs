//! The progress bar of long commands (`run`, `compare`), on standard error: shown only when standard error is a
//! terminal, so pipes, files and tests see nothing, and only once the work has taken a second, so short runs
//! print nothing either. `ULLSIM_PROGRESS_DELAY_MS` sets that delay (0: at once), for a test to see the bar
//! without a long run.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};

/// The environment variable that sets the delay before the bar shows, in milliseconds.
const DELAY_VARIABLE: &str = "ULLSIM_PROGRESS_DELAY_MS";

pub struct Progress {
    template: &'static str,
    started: Instant,
    /// How long the work runs before the bar shows; `None` when standard error is not a terminal.
    delay: Option<Duration>,
    state: Mutex<State>,
}

struct State {
    position: u64,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar drawn with indicatif's `template` (e.g. `{bar:40} {pos}/{len}`), once it shows.
    pub fn new(template: &'static str) -> Result<Progress> {
        let delay = match std::env::var(DELAY_VARIABLE) {
            Err(std::env::VarError::NotPresent) => Duration::from_secs(1),
            Ok(text) => match text.trim().parse() {
                Ok(ms) => Duration::from_millis(ms),
                Err(_) => bail!("{DELAY_VARIABLE}={text}: expected a whole number of milliseconds"),
            },
            Err(_) => bail!("{DELAY_VARIABLE}: expected a whole number of milliseconds, found text that is not UTF-8"),
        };
        Ok(Progress {
            template,
            started: Instant::now(),
            delay: std::io::stderr().is_terminal().then_some(delay),
            state: Mutex::new(State { position: 0, bar: None }),
        })
    }

    /// `position` of `len` is done.
    pub fn set(&self, position: u64, len: u64) {
        if let Ok(mut state) = self.state.lock() {
            state.position = position;
            self.draw(&mut state, len);
        }
    }

    /// One more of `len` is done (from any thread).
    pub fn advance(&self, len: u64) {
        if let Ok(mut state) = self.state.lock() {
            state.position += 1;
            self.draw(&mut state, len);
        }
    }

    fn draw(&self, state: &mut State, len: u64) {
        let Some(delay) = self.delay else { return };
        if state.bar.is_none() && self.started.elapsed() >= delay {
            let style = ProgressStyle::with_template(self.template).expect("valid template");
            // Its clock starts with the work, not with the bar, so that `elapsed` and `eta` are right.
            state.bar = Some(ProgressBar::new(len).with_style(style).with_elapsed(self.started.elapsed()));
        }
        if let Some(bar) = &state.bar {
            bar.set_position(state.position.min(len));
        }
    }

    /// Take the bar off the terminal.
    pub fn finish(&self) {
        if let Ok(state) = self.state.lock() {
            if let Some(bar) = &state.bar {
                bar.finish_and_clear();
            }
        }
    }
}
