//! A per-file time budget, checked cooperatively: the engine looks at the
//! clock between rules (and the pipeline between stages), so a file that
//! takes too long is abandoned at the next check instead of stalling the
//! scan. Threads cannot be killed: one rule or one front end call that
//! never returns is not covered by it (the fuzz targets look for those).

use std::time::{Duration, Instant};

/// When a file's analysis must stop. `Copy` and cheap to test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Deadline {
    at: Option<Instant>,
}

/// The analysis of a file ran past its [`Deadline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut;

impl Deadline {
    /// No deadline: never expires.
    pub const NONE: Deadline = Deadline { at: None };

    /// Expires `budget` from now (`None`: never).
    pub fn after(budget: Option<Duration>) -> Deadline {
        Deadline {
            at: budget.map(|b| Instant::now().checked_add(b).unwrap_or_else(far_future)),
        }
    }

    pub fn at(instant: Instant) -> Deadline {
        Deadline { at: Some(instant) }
    }

    pub fn instant(&self) -> Option<Instant> {
        self.at
    }

    pub fn expired(&self) -> bool {
        self.at.is_some_and(|t| Instant::now() >= t)
    }

    /// `Err(TimedOut)` once expired.
    pub fn check(&self) -> Result<(), TimedOut> {
        if self.expired() {
            Err(TimedOut)
        } else {
            Ok(())
        }
    }
}

fn far_future() -> Instant {
    // A budget too large to add to the clock is no budget at all.
    Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_expire() {
        assert!(!Deadline::NONE.expired());
        assert!(Deadline::after(Some(Duration::ZERO)).expired());
        assert_eq!(Deadline::after(Some(Duration::ZERO)).check(), Err(TimedOut));
        assert!(!Deadline::after(Some(Duration::from_secs(3600))).expired());
        assert!(!Deadline::after(Some(Duration::MAX)).expired());
        assert!(!Deadline::after(None).expired());
    }
}
